package logging_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/logging"
)

// A sink that logs pool messages at debug level as text, attached to a
// dispatcher the way a client attaches it.
func Example() {
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the output stable for this example
			}
			return a
		},
	})
	sink, err := logging.New(logging.Options{
		Handler: h,
		Levels:  map[logging.Component]logging.Level{logging.ComponentConnection: logging.LevelDebug},
	})
	if err != nil {
		panic(err)
	}
	defer sink.Close()

	d := event.NewDispatcher(sink)
	if d.Pool() {
		d.PoolEvent(context.Background(), &event.ConnectionCheckedIn{Address: "db1.example.com:27017", ConnectionID: 3})
	}
	// Output:
	// level=DEBUG msg="Connection checked in" component=connection serverHost=db1.example.com serverPort=27017 driverConnectionId=3
}
