package driver

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/topology"
	"github.com/mongoscope/mongoscope/mongotest"
)

// newSDAMRecorder records a client's topology and pool events in one
// sequence.
func newSDAMRecorder() *eventtest.Recorder {
	return &eventtest.Recorder{Keep: func(e any) bool {
		_, topo := e.(event.TopologyEvent)
		_, pool := e.(event.PoolEvent)
		return topo || pool
	}}
}

// count counts the recorded events of type T.
func count[T any](evs []any) int {
	n := 0
	for _, e := range evs {
		if _, ok := e.(T); ok {
			n++
		}
	}
	return n
}

// waitEvents waits up to d for ok to hold of the events rec recorded.
func waitEvents(t *testing.T, rec *eventtest.Recorder, d time.Duration, what string, ok func([]any) bool) []any {
	t.Helper()
	if !rec.Wait(d, ok) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
	return rec.Events()
}

// TestMonitorsIgnoreSocketTimeout is the regression test of issue 10: with
// socketTimeoutMS below heartbeatFrequencyMS every awaited hello timed out,
// marking its server Unknown and clearing its pool. Monitoring connections
// use connectTimeoutMS (plus heartbeatFrequencyMS for awaited replies),
// never socketTimeoutMS.
func TestMonitorsIgnoreSocketTimeout(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	for _, mode := range []string{"stream", "poll"} {
		t.Run(mode, func(t *testing.T) {
			rec := newSDAMRecorder()
			c := connect(t, rs.URI(), &ClientOptions{
				URIOptions: URIOptions{SocketTimeout: Ptr(300 * time.Millisecond), HeartbeatFrequency: Ptr(time.Second), ServerMonitoringMode: mode},
				Monitors:   []any{rec},
			})
			if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
			// Long enough for every monitor to wait out more than one
			// awaited hello (maxAwaitTimeMS = heartbeatFrequencyMS).
			time.Sleep(2500 * time.Millisecond)
			evs := rec.Events()
			if n := count[*event.ServerHeartbeatSucceeded](evs); n < 3 {
				t.Fatalf("%d successful heartbeats, want at least 3", n)
			}
			if n := count[*event.ServerHeartbeatFailed](evs); n > 0 {
				for _, e := range evs {
					if f, ok := e.(*event.ServerHeartbeatFailed); ok {
						t.Errorf("heartbeat failed after %v: %v", f.Duration, f.Failure)
					}
				}
				t.Fatalf("%d heartbeats failed, want none", n)
			}
			if n := count[*event.PoolCleared](evs); n > 0 {
				t.Fatalf("%d pools cleared, want none", n)
			}
			// socketTimeoutMS still bounds the application's reads.
			if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConnectTimeoutZeroReachesMonitors: connectTimeoutMS=0 means no limit,
// for the monitors as for the pools; unset means the 10 s default.
func TestConnectTimeoutZeroReachesMonitors(t *testing.T) {
	tests := []struct {
		name string
		set  *time.Duration
		want time.Duration
	}{
		{"unset", nil, 0}, // the topology applies conn.DefaultConnectTimeout
		{"zero", Ptr(time.Duration(0)), topology.NoTimeout},
		{"set", Ptr(1500 * time.Millisecond), 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := &connstring.ConnString{Hosts: []string{"localhost:27017"}, URIOptions: connstring.URIOptions{ConnectTimeout: tt.set}}
			s, err := conn.NewSettings(cs, conn.Extra{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := topologyConfig(cs, s, nil)
			if cfg.ConnectTimeout != tt.want {
				t.Fatalf("topology ConnectTimeout %v, want %v", cfg.ConnectTimeout, tt.want)
			}
		})
	}
}
