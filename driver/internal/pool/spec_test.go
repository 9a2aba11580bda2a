package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

type cmapTest struct {
	Version     int              `json:"version"`
	Style       string           `json:"style"`
	Description string           `json:"description"`
	PoolOptions map[string]any   `json:"poolOptions"`
	Operations  []map[string]any `json:"operations"`
	Error       map[string]any   `json:"error"`
	Events      []map[string]any `json:"events"`
	Ignore      []string         `json:"ignore"`
	// RunOn and FailPoint belong to the integration style, which runs
	// against a server (TestCMAPSpecMongotest); FailPoint is the
	// configureFailPoint command, kept as JSON to send as it is.
	RunOn     []map[string]any `json:"runOn"`
	FailPoint json.RawMessage  `json:"failPoint"`
}

// cmapFile is one parsed test file.
type cmapFile struct {
	name string
	test cmapTest
}

// readCMAPFiles parses every cmap-format file.
func readCMAPFiles(t *testing.T) []cmapFile {
	t.Helper()
	var out []cmapFile
	for _, file := range spectest.Files(t, "*.json", "connection-monitoring-and-pooling", "tests", "cmap-format") {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f := cmapFile{name: strings.TrimSuffix(filepath.Base(file), ".json")}
		if err := json.Unmarshal(data, &f.test); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, f)
	}
	return out
}

// TestCMAPSpec runs the unit-style files on fake connections. The
// integration-style ones need a server's fail point on the handshake and
// run against mongotest in TestCMAPSpecMongotest.
func TestCMAPSpec(t *testing.T) {
	checkNoLeaks(t)
	tally := spectest.NewTally("cmap-format (fake connections)")
	for _, f := range readCMAPFiles(t) {
		if f.test.Style == "integration" {
			tally.Skip(t, f.name, "integration style, run against mongotest by TestCMAPSpecMongotest")
			continue
		}
		tally.Run(t, f.name, func(t *testing.T) {
			if f.test.FailPoint != nil || f.test.RunOn != nil {
				t.Fatalf("a %q-style file with runOn or failPoint", f.test.Style)
			}
			runCMAPTest(t, &f.test, fakeDial)
		})
	}
	tally.Log(t)
}

// cmapThread runs operations in order on its own goroutine.
type cmapThread struct {
	ops  chan map[string]any
	done chan struct{}
	err  error
}

type cmapRunner[C Conn] struct {
	t       *testing.T
	pool    *Pool[C]
	rec     *eventtest.Recorder
	mu      sync.Mutex
	labels  map[string]*Pooled[C]
	out     []*Pooled[C] // checked out and not yet checked in
	threads map[string]*cmapThread
}

// runCMAPTest runs one file on a pool whose connections come from dial.
func runCMAPTest[C Conn](t *testing.T, tc *cmapTest, dial func(context.Context, int64) (C, error)) {
	if tc.Version != 1 {
		t.Fatalf("test format version %d", tc.Version)
	}
	rec := &eventtest.Recorder{}
	cfg := Config[C]{
		Address:     "localhost:27017",
		MaxPoolSize: 100, // the spec's default; 0 would mean no limit
		Events:      event.NewDispatcher(rec),
	}
	for k, v := range tc.PoolOptions {
		n, _ := v.(float64)
		ms := time.Duration(n) * time.Millisecond
		switch k {
		case "maxPoolSize":
			cfg.MaxPoolSize = int(n)
		case "minPoolSize":
			cfg.MinPoolSize = int(n)
		case "maxConnecting":
			cfg.MaxConnecting = int(n)
		case "maxIdleTimeMS":
			cfg.MaxIdleTime = ms
		case "waitQueueTimeoutMS":
			cfg.WaitQueueTimeout = ms
		case "backgroundThreadIntervalMS":
			if n < 0 {
				cfg.MaintainInterval = -1
			} else {
				cfg.MaintainInterval = ms
			}
		case "appName":
			// The integration runner's dial puts it in the handshake.
		default:
			t.Fatalf("unknown pool option %q", k)
		}
	}
	cfg.Dial = dial
	r := &cmapRunner[C]{t: t, rec: rec, labels: map[string]*Pooled[C]{}, threads: map[string]*cmapThread{}}
	// What SDAM does with a background population error: clear the pool.
	cfg.OnPopulateError = func(err error, _ uint64) { r.pool.ClearWithCause(nil, false, err) }
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.pool = p

	var mainErr error
	for _, op := range tc.Operations {
		if th, _ := op["thread"].(string); th != "" {
			thread := r.threads[th]
			if thread == nil {
				t.Fatalf("operation on thread %q that was not started", th)
			}
			thread.ops <- op
			continue
		}
		if mainErr = r.run(op); mainErr != nil {
			break
		}
	}
	got := poolEvents(rec)

	// Leave nothing behind: closing the pool releases blocked checkouts,
	// and checking in what is still out closes it (real connections
	// would otherwise stay open on the server).
	p.Close()
	for name := range r.threads {
		r.stopThread(name)
	}
	for _, c := range r.out {
		p.CheckIn(context.Background(), c)
	}

	if tc.Error != nil {
		if mainErr == nil {
			t.Fatalf("want error %v, got none", tc.Error)
		}
		matchError(t, tc.Error, mainErr)
	} else if mainErr != nil {
		t.Fatalf("unexpected error: %v", mainErr)
	}

	var actual []map[string]any
	for _, e := range got {
		if !slices.Contains(tc.Ignore, specName(e)) {
			actual = append(actual, eventDoc(e))
		}
	}
	for i, want := range tc.Events {
		if i >= len(actual) {
			t.Fatalf("event %d: want %v, got only %d events: %v", i, want, len(actual), actual)
		}
		if err := match(want, actual[i], ""); err != nil {
			t.Fatalf("event %d: %v\nwant %v\ngot  %v\nall: %v", i, err, want, actual[i], actual)
		}
	}
}

func (r *cmapRunner[C]) startThread(name string) {
	th := &cmapThread{ops: make(chan map[string]any, 16), done: make(chan struct{})}
	r.threads[name] = th
	go func() {
		defer close(th.done)
		for op := range th.ops {
			if err := r.run(op); err != nil && th.err == nil {
				th.err = err
			}
		}
	}()
}

// stopThread waits for the thread's operations to finish and returns its
// first error.
func (r *cmapRunner[C]) stopThread(name string) error {
	th := r.threads[name]
	if th == nil {
		return fmt.Errorf("no thread %q", name)
	}
	select {
	case <-th.done:
	default:
		close(th.ops)
		<-th.done
	}
	return th.err
}

func (r *cmapRunner[C]) run(op map[string]any) error {
	name, _ := op["name"].(string)
	str := func(k string) string { s, _ := op[k].(string); return s }
	num := func(k string) float64 { n, _ := op[k].(float64); return n }
	switch name {
	case "start":
		r.startThread(str("target"))
	case "wait":
		time.Sleep(time.Duration(num("ms")) * time.Millisecond)
	case "waitForThread":
		return r.stopThread(str("target"))
	case "waitForEvent":
		timeout := 10 * time.Second
		if n := num("timeout"); n > 0 {
			timeout = time.Duration(n) * time.Millisecond
		}
		if err := waitForEvent(r.rec, str("event"), int(num("count")), timeout); err != nil {
			r.t.Error(err)
			return err
		}
	case "checkOut":
		c, err := r.pool.CheckOut(context.Background())
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.out = append(r.out, c)
		if label := str("label"); label != "" {
			r.labels[label] = c
		}
		r.mu.Unlock()
	case "checkIn":
		r.mu.Lock()
		c := r.labels[str("connection")]
		r.out = slices.DeleteFunc(r.out, func(o *Pooled[C]) bool { return o == c })
		r.mu.Unlock()
		return r.pool.CheckIn(context.Background(), c)
	case "clear":
		interrupt, _ := op["interruptInUseConnections"].(bool)
		r.pool.Clear(nil, interrupt)
	case "close":
		r.pool.Close()
	case "ready":
		r.pool.Ready()
	default:
		r.t.Errorf("unknown operation %q", name)
		return fmt.Errorf("unknown operation %q", name)
	}
	return nil
}

// eventDoc is the event as the spec tests spell it.
func eventDoc(e event.PoolEvent) map[string]any {
	d := map[string]any{"type": specName(e), "address": e.PoolAddress()}
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	switch e := e.(type) {
	case *event.PoolCreated:
		o := map[string]any{
			"maxPoolSize":   float64(e.Options.MaxPoolSize),
			"minPoolSize":   float64(e.Options.MinPoolSize),
			"maxConnecting": float64(e.Options.MaxConnecting),
			"maxIdleTimeMS": ms(e.Options.MaxIdleTime),
		}
		if e.Options.WaitQueueTimeout > 0 {
			o["waitQueueTimeoutMS"] = ms(e.Options.WaitQueueTimeout)
		}
		d["options"] = o
	case *event.PoolCleared:
		d["interruptInUseConnections"] = e.InterruptInUseConnections
		if e.ServiceID != nil {
			d["serviceId"] = e.ServiceID.Hex()
		}
	case *event.ConnectionCreated:
		d["connectionId"] = float64(e.ConnectionID)
	case *event.ConnectionReady:
		d["connectionId"] = float64(e.ConnectionID)
		d["duration"] = ms(e.Duration)
	case *event.ConnectionClosed:
		d["connectionId"] = float64(e.ConnectionID)
		d["reason"] = string(e.Reason)
	case *event.ConnectionCheckOutFailed:
		d["reason"] = string(e.Reason)
		d["duration"] = ms(e.Duration)
	case *event.ConnectionCheckedOut:
		d["connectionId"] = float64(e.ConnectionID)
		d["duration"] = ms(e.Duration)
	case *event.ConnectionCheckedIn:
		d["connectionId"] = float64(e.ConnectionID)
	}
	return d
}

// match is the spec's MATCH: expected is a subset of actual, and 42 or
// "42" stand for any value.
func match(want, got any, path string) error {
	if want == float64(42) || want == "42" {
		if got == nil {
			return fmt.Errorf("%s: missing", path)
		}
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a document, got %v", path, got)
		}
		for k, v := range w {
			if err := match(v, g[k], path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(w) {
			return fmt.Errorf("%s: want an array of %d, got %v", path, len(w), got)
		}
		for i := range w {
			if err := match(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if want != got {
		return fmt.Errorf("%s: want %v (%T), got %v (%T)", path, want, want, got, got)
	}
	return nil
}

// matchError checks the error's type and that the spec's message starts
// ours (ours adds the address and, for timeouts, the pool's state).
func matchError(t *testing.T, want map[string]any, err error) {
	t.Helper()
	typ, _ := want["type"].(string)
	var ok bool
	switch typ {
	case "PoolClosedError":
		var e *PoolClosedError
		ok = errors.As(err, &e)
	case "WaitQueueTimeoutError":
		var e *WaitQueueTimeoutError
		ok = errors.As(err, &e)
	case "PoolClearedError":
		var e *PoolClearedError
		ok = errors.As(err, &e)
	default:
		t.Fatalf("unknown error type %q", typ)
	}
	if !ok {
		t.Fatalf("want %s, got %T: %v", typ, err, err)
	}
	if msg, _ := want["message"].(string); !strings.HasPrefix(err.Error(), msg) {
		t.Fatalf("error %q does not start with %q", err.Error(), msg)
	}
}
