// Command mongoprobe keeps exercising a MongoDB cluster through the
// mongoscope driver and reports what an application would feel.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
