package logging

import (
	"context"
	"log/slog"
	"time"
)

// Warn writes one record at WARN level through the sink's handler,
// whatever the components' minimum levels, as the sink does for its own
// configuration problems: a user who turned logging on should learn that
// a setting was ignored. The driver reports each connection-string
// Warning this way (an unknown option, an ignored value). attrs must not
// hold a credential; the message is written as given.
func (s *Sink) Warn(ctx context.Context, msg string, attrs ...slog.Attr) {
	if !s.handler.Enabled(ctx, slog.LevelWarn) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelWarn, msg, 0)
	r.AddAttrs(attrs...)
	_ = s.handler.Handle(ctx, r)
}
