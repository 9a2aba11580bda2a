package console

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/logging"
)

func logOne(t *testing.T, o *Options, w *bytes.Buffer) string {
	t.Helper()
	s, err := logging.New(logging.Options{Handler: Handler(w, o), Getenv: func(string) string { return "" },
		Levels: map[logging.Component]logging.Level{logging.ComponentConnection: logging.LevelTrace}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.PoolEvent(context.Background(), &event.ConnectionCheckedIn{Address: "h:27017", ConnectionID: 5})
	return w.String()
}

func TestHandlerFields(t *testing.T) {
	var buf bytes.Buffer
	out := logOne(t, nil, &buf)
	for _, want := range []string{"Connection checked in", "component=connection", "driverConnectionId=5", "serverHost=h", "serverPort=27017", " debug Connection checked in"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q lacks %q", out, want)
		}
	}
}

// Output that is not a terminal gets no colour codes unless asked for.
func TestHandlerColor(t *testing.T) {
	var buf bytes.Buffer
	if out := logOne(t, nil, &buf); strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes written to a buffer: %q", out)
	}
	buf.Reset()
	if out := logOne(t, &Options{Color: ColorAlways}, &buf); !strings.Contains(out, "\x1b[") {
		t.Errorf("ColorAlways wrote no colour: %q", out)
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if colorable(f, func(string) string { return "" }) {
		t.Error("a regular file counts as a terminal")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !colorable(tty, func(string) string { return "" }) {
			t.Error("/dev/tty is not colourable")
		}
		if colorable(tty, func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] }) {
			t.Error("NO_COLOR ignored")
		}
	}
}
