// Command mongoprobe keeps exercising a MongoDB cluster through the
// mongoscope driver and reports what an application would feel.
package main

func main() {}
