// Package console is the human-readable slog handler the project's
// programs (mongoprobe, the examples) use for the driver's standardized
// log messages. It lives under cmd/ so that the driver, which only speaks
// log/slog, never pulls the tint module into a library user's build.
package console

import (
	"io"
	"log/slog"
	"math"
	"os"

	"github.com/lmittmann/tint"

	"github.com/mongoscope/mongoscope/driver/logging"
)

// Options configure Handler. The zero value is usable.
type Options struct {
	// Color chooses whether ANSI colour codes are written: ColorAuto (the
	// zero value) writes them only when w is a terminal and the NO_COLOR
	// environment variable is unset or empty.
	Color      ColorMode
	TimeFormat string // a time layout; empty means tint's default
	// Level is the lowest level written; the zero value passes every
	// level through and leaves the filtering to the driver's component
	// levels.
	Level slog.Leveler
}

// ColorMode says when Handler writes colour codes.
type ColorMode int

// The colour modes.
const (
	ColorAuto ColorMode = iota
	ColorAlways
	ColorNever
)

// Handler returns a human-readable slog handler writing to w that prints
// the logging specification's level names.
func Handler(w io.Writer, o *Options) slog.Handler {
	var opts Options
	if o != nil {
		opts = *o
	}
	to := &tint.Options{Level: slog.Level(math.MinInt32), ReplaceAttr: logging.ReplaceLevelNames, TimeFormat: opts.TimeFormat}
	if opts.Level != nil {
		to.Level = opts.Level
	}
	switch opts.Color {
	case ColorAlways:
		to.NoColor = false
	case ColorNever:
		to.NoColor = true
	default:
		to.NoColor = !colorable(w, os.Getenv)
	}
	return tint.NewHandler(w, to)
}

// colorable tells whether w is a terminal that should get colour: an
// *os.File on a character device, with NO_COLOR unset (https://no-color.org).
func colorable(w io.Writer, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}
