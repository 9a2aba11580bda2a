// Command dashgen writes the project's Grafana dashboards, dashboards/driver.json
// and dashboards/probe.json, from the Go code in this module (make dashboards).
// The committed files must be its output: its test checks that they are.
//
//	go run . [-out ../../dashboards]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Files are the dashboards, by file name.
func Files() map[string]*Dashboard {
	return map[string]*Dashboard{
		"driver.json": Driver(),
		"probe.json":  Probe(),
	}
}

func main() {
	out := flag.String("out", filepath.Join("..", "..", "dashboards"), "the `folder` to write the dashboards to")
	flag.Parse()
	for name, d := range Files() {
		b, err := d.JSON()
		if err != nil {
			fmt.Fprintln(os.Stderr, "dashgen:", err)
			os.Exit(1)
		}
		file := filepath.Join(*out, name)
		if err := os.WriteFile(file, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "dashgen:", err)
			os.Exit(1)
		}
		fmt.Printf("dashgen: wrote %s (%d panels)\n", file, len(d.Panels))
	}
}
