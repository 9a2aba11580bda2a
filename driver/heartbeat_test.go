package driver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// hangUpListener accepts connections and closes each at once, so every
// monitoring dial fails in its handshake. Its goroutines end with the test.
func hangUpListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			nc.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// heartbeatLine is one "Server heartbeat ..." log message.
type heartbeatLine struct {
	msg      string
	connID   int64
	serverID *int64
	failure  string
}

var heartbeatMessages = map[string]bool{"Server heartbeat started": true, "Server heartbeat succeeded": true, "Server heartbeat failed": true}

// heartbeats returns the heartbeat messages of log in order; a message
// without a numeric driverConnectionId fails the test.
func heartbeats(t *testing.T, log *jsonLog) []heartbeatLine {
	t.Helper()
	log.mu.Lock()
	data := log.buf.String()
	log.mu.Unlock()
	var out []heartbeatLine
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			continue
		}
		msg, _ := m["msg"].(string)
		if !heartbeatMessages[msg] {
			continue
		}
		id, ok := m["driverConnectionId"].(float64)
		if !ok {
			t.Fatalf("%s without a numeric driverConnectionId: %v", msg, m)
		}
		l := heartbeatLine{msg: msg, connID: int64(id)}
		if v, ok := m["serverConnectionId"].(float64); ok {
			sid := int64(v)
			l.serverID = &sid
		}
		l.failure, _ = m["failure"].(string)
		out = append(out, l)
	}
	return out
}

var connectionInText = regexp.MustCompile(`connection (\d+)`)

// TestHeartbeatLogConnectionIDs: every heartbeat log message names the
// monitoring connection the check ran on, by a non-zero id; a started
// message is followed by exactly one succeeded or failed message with the
// same id, also when the dial itself fails; a message on an established
// connection carries its serverConnectionId; and the connection the
// server's error names is the one the failed heartbeat names.
func TestHeartbeatLogConnectionIDs(t *testing.T) {
	const app = "heartbeatConnectionIDs"
	tests := []struct {
		name string
		// uri returns the deployment's URI and starts the failures.
		uri func(t *testing.T) (uri string, fail func(t *testing.T))
	}{
		{"dial fails", func(t *testing.T) (string, func(*testing.T)) {
			return "mongodb://" + hangUpListener(t) + "/?directConnection=true", nil
		}},
		{"check fails, poll", func(t *testing.T) (string, func(*testing.T)) {
			s := mongotest.NewServer(t, mongotest.Options{})
			return s.URI() + "?serverMonitoringMode=poll&appName=" + app, func(t *testing.T) {
				if err := s.SetFailPoint(failHello(app, 1, bson.D{{Key: "closeConnection", Value: true}})); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"awaited check fails, stream", func(t *testing.T) (string, func(*testing.T)) {
			s := mongotest.NewServer(t, mongotest.Options{})
			return s.URI() + "?serverMonitoringMode=stream", func(t *testing.T) {
				// The awaited hello's connection drops, and so does the
				// retry's (and perhaps the RTT monitor's) dial.
				s.CloseNextConnections(3)
				s.ResetConnections()
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uri, fail := tt.uri(t)
			log := &jsonLog{}
			o := &ClientOptions{
				URIOptions: URIOptions{HeartbeatFrequency: Ptr(500 * time.Millisecond)},
				Logging: &logging.Options{Handler: slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.Level(-100)}),
					Levels: map[logging.Component]logging.Level{logging.ComponentTopology: logging.LevelDebug}},
			}
			c := connect(t, uri, o)
			countFailed := func() int {
				n := 0
				for _, l := range heartbeats(t, log) {
					if l.msg == "Server heartbeat failed" {
						n++
					}
				}
				return n
			}
			if fail != nil {
				waitUntil(t, 5*time.Second, "a heartbeat succeeded", func() bool {
					for _, l := range heartbeats(t, log) {
						if l.msg == "Server heartbeat succeeded" {
							return true
						}
					}
					return false
				})
				fail(t)
				waitUntil(t, 5*time.Second, "a heartbeat failed", func() bool { return countFailed() >= 1 })
			} else {
				waitUntil(t, 5*time.Second, "two heartbeats failed", func() bool { return countFailed() >= 2 })
			}
			var snapshotErr error
			if ss := c.Topology().Servers; len(ss) == 1 {
				snapshotErr = ss[0].Error
			}
			c.Disconnect(context.Background())

			lines := heartbeats(t, log)
			failedIDs := map[int64]bool{}
			for i, l := range lines {
				if l.connID == 0 {
					t.Errorf("line %d: %s with driverConnectionId 0", i, l.msg)
				}
				if l.msg == "Server heartbeat started" {
					if i+1 >= len(lines) || lines[i+1].msg == "Server heartbeat started" {
						t.Errorf("line %d: started on connection %d without its succeeded or failed message", i, l.connID)
					} else if lines[i+1].connID != l.connID {
						t.Errorf("line %d: started on connection %d, then %s on connection %d", i, l.connID, lines[i+1].msg, lines[i+1].connID)
					}
					if l.serverID == nil && hadSucceeded(lines[:i], l.connID) {
						t.Errorf("line %d: started on connection %d, established, without serverConnectionId", i, l.connID)
					}
					continue
				}
				if i == 0 || lines[i-1].msg != "Server heartbeat started" {
					t.Errorf("line %d: %s without a started message before it", i, l.msg)
				}
				if l.msg != "Server heartbeat failed" {
					continue
				}
				failedIDs[l.connID] = true
				if m := connectionInText.FindStringSubmatch(l.failure); m != nil && m[1] != strconv.FormatInt(l.connID, 10) {
					t.Errorf("line %d: failed on connection %d, failure %q", i, l.connID, l.failure)
				}
				if l.serverID == nil && hadSucceeded(lines[:i], l.connID) {
					t.Errorf("line %d: failed on connection %d, established, without serverConnectionId", i, l.connID)
				}
			}
			if len(failedIDs) == 0 {
				t.Fatal("no heartbeat failed")
			}
			if snapshotErr != nil {
				if m := connectionInText.FindStringSubmatch(snapshotErr.Error()); m != nil {
					id, _ := strconv.ParseInt(m[1], 10, 64)
					if !failedIDs[id] {
						t.Errorf("the server's error %q names a connection no failed heartbeat names (%v)", snapshotErr, failedIDs)
					}
				}
			}
		})
	}
}

// hadSucceeded tells whether lines hold a succeeded heartbeat on id.
func hadSucceeded(lines []heartbeatLine, id int64) bool {
	for _, l := range lines {
		if l.msg == "Server heartbeat succeeded" && l.connID == id {
			return true
		}
	}
	return false
}

// TestLastServerRemovedWarning: a client whose only seed is outside the
// replica set it asks for logs one "Last server removed from topology"
// warning in the failover component (SDAM: a client SHOULD warn when it
// removes the last server from the topology); a client that merely
// closes, which also ends without servers, logs none.
func TestLastServerRemovedWarning(t *testing.T) {
	tests := []struct {
		name, query string
		want        bool
	}{
		{"standalone seed, replicaSet asked for", "?replicaSet=rs0", true},
		{"closed", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mongotest.NewServer(t, mongotest.Options{})
			log := &jsonLog{}
			o := &ClientOptions{Logging: &logging.Options{Handler: slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}),
				Levels: map[logging.Component]logging.Level{logging.ComponentFailover: logging.LevelWarning, logging.ComponentTopology: logging.LevelDebug}}}
			c := connect(t, s.URI()+tt.query, o)
			waitUntil(t, 5*time.Second, "the seed checked", func() bool {
				ss := c.Topology().Servers
				return len(ss) == 0 || ss[0].Kind != "Unknown"
			})
			c.Disconnect(context.Background())
			lines := log.messages(t, "Last server removed from topology")
			if !tt.want {
				if len(lines) != 0 {
					t.Fatalf("warned %v", lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("%d warnings, want 1", len(lines))
			}
			m := lines[0]
			want := strings.ToLower(s.Addr()) + " (Standalone)"
			if m["level"] != "WARN" || m["component"] != "failover" || m["setName"] != "rs0" || m["removedServers"] != want {
				t.Fatalf("warning %v, want level WARN, component failover, setName rs0, removedServers %q", m, want)
			}
		})
	}
}
