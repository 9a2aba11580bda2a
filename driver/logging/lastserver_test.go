package logging

import (
	"context"
	"log/slog"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

// TestLastServerRemoved: one warning in the failover component, naming
// the removed servers as their replies described them; nothing when the
// failover component is off or below warning.
func TestLastServerRemoved(t *testing.T) {
	id := bson.ObjectID{11: 7}
	topo := event.TopologyDescription{Kind: "ReplicaSetNoPrimary", SetName: "rs0"}
	removed := []event.ServerDescription{{Address: "a:27017", Kind: "RSPrimary", SetName: "other"}}
	tests := []struct {
		name  string
		level Level
		want  bool
	}{
		{"warning", LevelWarning, true},
		{"debug", LevelDebug, true},
		{"error", LevelError, false},
		{"off", LevelOff, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newSink(t, Options{Levels: map[Component]Level{ComponentFailover: tt.level, ComponentTopology: LevelDebug}})
			c.take()
			s.LastServerRemoved(context.Background(), id, topo, removed)
			got := c.take()
			if !tt.want {
				if len(got) != 0 {
					t.Fatalf("logged %v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d records, want 1", len(got))
			}
			r := got[0]
			want := map[string]any{"component": "failover", "topologyId": id.Hex(), "topologyType": "ReplicaSetNoPrimary", "setName": "rs0",
				"removedServers": "a:27017 (RSPrimary, setName other)"}
			if r.Level != slog.LevelWarn || r.Message != "Last server removed from topology" {
				t.Fatalf("level %v message %q", r.Level, r.Message)
			}
			for k, v := range want {
				if r.Attrs[k] != v {
					t.Errorf("%s = %v, want %v", k, r.Attrs[k], v)
				}
			}
		})
	}
}
