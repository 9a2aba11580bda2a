package mongotest

import (
	"context"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// Command is one command the server received.
type Command struct {
	ConnID int64
	DB     string
	Name   string
	// Body is a copy of the command document as the handler saw it
	// (sequences merged, $db included). For authentication commands and
	// hellos that carry speculativeAuthenticate it is the empty document,
	// as command monitoring redacts them: no credential is ever logged.
	Body bson.Raw
	// Compressor is the compressor the command arrived with, or "".
	Compressor string
	Time       time.Time
}

// commandLog keeps the most recent commands, at most limit of them.
type commandLog struct {
	mu      sync.Mutex
	limit   int
	entries []Command
	gen     int // incremented by ClearCommands
	base    int // how many entries compaction has dropped since the last clear
	waiters int
	wake    chan struct{}
}

var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

func (l *commandLog) add(connID int64, r *Request) {
	if l.limit < 0 {
		return
	}
	body := emptyDoc
	if !redacted(r) {
		body = append(bson.Raw(nil), r.Body...)
	}
	e := Command{ConnID: connID, DB: r.DB, Name: r.Name, Body: body, Compressor: r.Compressor, Time: time.Now()}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
	// Compact in chunks so that a full log costs amortized O(1) per add.
	if len(l.entries) > l.limit+l.limit/4 {
		l.base += len(l.entries) - l.limit
		n := copy(l.entries, l.entries[len(l.entries)-l.limit:])
		clear(l.entries[n:])
		l.entries = l.entries[:n]
	}
	if l.waiters > 0 {
		close(l.wake)
		l.wake = make(chan struct{})
	}
}

// redacted tells whether r's body must stay out of the log.
func redacted(r *Request) bool {
	if sensitive[r.Name] {
		return true
	}
	if isHelloName(r.Name) {
		_, err := r.Body.LookupErr("speculativeAuthenticate")
		return err == nil
	}
	return false
}

func (l *commandLog) snapshot() []Command {
	l.mu.Lock()
	defer l.mu.Unlock()
	es := l.entries
	if l.limit >= 0 && len(es) > l.limit {
		es = es[len(es)-l.limit:]
	}
	return append([]Command(nil), es...)
}

// Commands returns the commands received so far, in the order they
// arrived, on every connection (hellos and authentication included).
func (s *Server) Commands() []Command { return s.log.snapshot() }

// CommandsOn returns the commands received on one connection, in order.
func (s *Server) CommandsOn(connID int64) []Command {
	var out []Command
	for _, c := range s.log.snapshot() {
		if c.ConnID == connID {
			out = append(out, c)
		}
	}
	return out
}

// ClearCommands empties the command log.
func (s *Server) ClearCommands() {
	s.log.mu.Lock()
	clear(s.log.entries)
	s.log.entries = s.log.entries[:0]
	s.log.gen++
	s.log.base = 0
	s.log.mu.Unlock()
}

// WaitForCommand returns the first logged command named name, waiting for
// one to arrive if there is none yet, until ctx ends.
func (s *Server) WaitForCommand(ctx context.Context, name string) (Command, error) {
	l := &s.log
	seen, gen := 0, -1 // seen counts entries checked, from the last clear
	for {
		l.mu.Lock()
		if gen != l.gen {
			seen, gen = 0, l.gen
		}
		for i := max(seen-l.base, 0); i < len(l.entries); i++ {
			if l.entries[i].Name == name {
				c := l.entries[i]
				l.mu.Unlock()
				return c, nil
			}
		}
		seen = l.base + len(l.entries)
		l.waiters++
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		l.mu.Lock()
		l.waiters--
		l.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return Command{}, err
		}
	}
}
