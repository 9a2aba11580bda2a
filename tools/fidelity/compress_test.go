package fidelity

import (
	"testing"

	"github.com/mongoscope/mongoscope/mongotest"
)

// assertCompressed checks that the server saw the official driver's pings
// arrive compressed with comp.
func assertCompressed(t *testing.T, s *mongotest.Server, comp string) {
	t.Helper()
	n := 0
	for _, cmd := range s.Commands() {
		if cmd.Name != "ping" {
			continue
		}
		n++
		if cmd.Compressor != comp {
			t.Errorf("ping arrived with compressor %q, want %q", cmd.Compressor, comp)
		}
	}
	if n == 0 {
		t.Error("no ping in the command log")
	}
}
