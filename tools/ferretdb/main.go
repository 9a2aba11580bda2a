package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// options are the command-line settings.
type options struct {
	listen    string
	dir       string
	readyFile string
	logLevel  slog.Level
	logFile   string
}

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if err := run(ctx, opts, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-embedded: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, errOut io.Writer) (options, error) {
	var opts options

	fs := flag.NewFlagSet("ferretdb-embedded", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&opts.listen, "listen", "127.0.0.1:27099", "TCP address to listen on; port 0 picks a free port")
	fs.StringVar(&opts.dir, "dir", "", "directory for the SQLite databases (default: a temporary directory removed at exit)")
	fs.StringVar(&opts.readyFile, "ready-file", "", "file to write the listening address to once connections are accepted")
	fs.StringVar(&opts.logFile, "log-file", "", "file for FerretDB's log (default: standard error)")
	level := fs.String("log-level", "warn", "FerretDB's log level: debug, info, warn or error")
	auth := fs.Bool("auth", false, "enable authentication (not supported by embedded FerretDB v1; always fails)")

	if err := fs.Parse(args); err != nil {
		return opts, err
	}

	if fs.NArg() != 0 {
		err := fmt.Errorf("unexpected arguments %q", fs.Args())
		fmt.Fprintln(errOut, err)
		return opts, err
	}

	if err := opts.logLevel.UnmarshalText([]byte(*level)); err != nil {
		err = fmt.Errorf("-log-level: %w", err)
		fmt.Fprintln(errOut, err)
		return opts, err
	}

	// Fail loudly rather than start a server that silently accepts anyone:
	// a test asking for auth must not pass against an open server.
	if *auth {
		err := errors.New("-auth: embedded FerretDB v1 cannot enable authentication; " +
			"use FerretDB's own command with --test-enable-new-auth (make ferretdb-start does)")
		fmt.Fprintln(errOut, err)
		return opts, err
	}

	return opts, nil
}

// run serves until ctx is canceled.
func run(ctx context.Context, opts options, out io.Writer) error {
	logOut := io.Writer(os.Stderr)
	if opts.logFile != "" {
		f, err := os.OpenFile(opts.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("-log-file: %w", err)
		}
		defer f.Close()
		logOut = f
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: opts.logLevel}))

	dir := opts.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ferretdb-embedded-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-dir: %w", err)
	}

	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("-dir: %w", err)
	}

	// FerretDB's SQLite handler wants a directory URI that ends in a slash.
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: opts.listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + strings.TrimSuffix(filepath.ToSlash(abs), "/") + "/",
	})
	if err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()

	// New has bound the socket already, so the URI (and its port when 0 was
	// asked for) is known; the dial proves the accept loop answers.
	uri := f.MongoDBURI()
	addr := strings.TrimSuffix(strings.TrimPrefix(uri, "mongodb://"), "/")

	if err := waitAccepting(ctx, addr); err != nil {
		cancel()
		<-done
		return err
	}

	if opts.readyFile != "" {
		if err := writeAtomic(opts.readyFile, addr+"\n"); err != nil {
			cancel()
			<-done
			return fmt.Errorf("-ready-file: %w", err)
		}
		defer os.Remove(opts.readyFile)
	}

	fmt.Fprintf(out, "ferretdb-embedded: listening on %s (%s), data in %s\n", addr, uri, abs)

	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		cancel()
		return <-done
	}
}

// waitAccepting dials addr until a connection succeeds or 10 seconds pass.
func waitAccepting(ctx context.Context, addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	var d net.Dialer
	for {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return c.Close()
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("server at %s does not accept connections: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeAtomic writes content so that a reader never sees a partial file.
func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
