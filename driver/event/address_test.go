package event_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/driver/event"
)

func TestSplitAddress(t *testing.T) {
	tests := []struct {
		in   string
		host string
		port int
	}{
		{"localhost:27017", "localhost", 27017},
		{"db.example.com:1", "db.example.com", 1},
		{"db.example.com", "db.example.com", 27017},
		{"[::1]:27018", "::1", 27018},
		{"[::1]", "::1", 27017},
		{"::1", "::1", 27017},
		{"/tmp/mongodb-27017.sock", "/tmp/mongodb-27017.sock", 0},
		{"h:0", "h:0", 0},
		{"h:65536", "h:65536", 0},
		{"h:-1", "h:-1", 0},
		{"h:+1", "h:+1", 0},
		{"h:", "h:", 0},
		{"[::1", "[::1", 0},
		{"[::1]x", "[::1]x", 0},
		{"", "", 27017},
		{":1", ":1", 0},
		{"[]:1", "[]:1", 0},
		{"h:01", "h", 1},
	}
	for _, tt := range tests {
		host, port := event.SplitAddress(tt.in)
		if host != tt.host || port != tt.port {
			t.Errorf("SplitAddress(%q) = %q, %d; want %q, %d", tt.in, host, port, tt.host, tt.port)
		}
	}
}

func FuzzSplitAddress(f *testing.F) {
	for _, s := range []string{"localhost:27017", "[::1]:1", "[::1]", "a.sock", "h:", "h:99999", "::1", "[", "]:1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		host, port := event.SplitAddress(s)
		if port < 0 || port > 65535 {
			t.Fatalf("port %d out of range", port)
		}
		if port == 0 {
			if host != s {
				t.Fatalf("unsplittable %q lost text: host %q", s, host)
			}
			return
		}
		if host == "" && s != "" {
			t.Fatalf("%q split to an empty host", s)
		}
		if s == host || s == "["+host+"]" {
			if port != event.DefaultPort {
				t.Fatalf("%q without a port got port %d", s, port)
			}
			return
		}
		i := strings.LastIndexByte(s, ':')
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n != port {
			t.Fatalf("%q: port %d does not match %q", s, port, s[i+1:])
		}
		if s[:i] != host && s[:i] != "["+host+"]" {
			t.Fatalf("%q: host %q does not match %q", s, host, s[:i])
		}
	})
}
