package logging

import (
	"io"
	"log/slog"
	"math"

	"github.com/lmittmann/tint"
)

// ConsoleOptions configure ConsoleHandler. The zero value is usable.
type ConsoleOptions struct {
	NoColor    bool   // plain text, e.g. when w is not a terminal
	TimeFormat string // time.Kitchen-style layout; empty means tint's default
}

// ConsoleHandler returns a colored, human-readable slog handler writing to
// w, for Options.Handler. It passes every level through, leaving the
// filtering to the Sink's component levels, and prints the specification's
// level names.
func ConsoleHandler(w io.Writer, o *ConsoleOptions) slog.Handler {
	to := &tint.Options{Level: slog.Level(math.MinInt32), ReplaceAttr: specLevelNames}
	if o != nil {
		to.NoColor = o.NoColor
		to.TimeFormat = o.TimeFormat
	}
	return tint.NewHandler(w, to)
}
