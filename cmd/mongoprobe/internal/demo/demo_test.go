package demo

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/logbuf"
	"github.com/mongoscope/mongoscope/mongotest"
)

func TestScheduler(t *testing.T) {
	d, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p0 := d.RS.Primary()
	if p0 == nil {
		t.Fatal("no primary at start")
	}
	var logs logbuf.Buffer
	s := NewScheduler(d.RS, slog.New(slog.NewTextHandler(&logs, nil)), 600*time.Millisecond)
	if s.First != 600*time.Millisecond || s.SlowFor != 400*time.Millisecond || s.PartitionFor != 200*time.Millisecond {
		t.Fatalf("timings: %+v", s)
	}
	var mu sync.Mutex
	var faults []Fault
	done := make(chan struct{})
	s.OnFault = func(f Fault) {
		mu.Lock()
		defer mu.Unlock()
		faults = append(faults, f)
		if len(faults) == 3 {
			close(done)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	ran := make(chan struct{})
	go func() { s.Run(ctx); close(ran) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("three faults did not come")
	}
	// Let the partition heal before stopping.
	time.Sleep(400 * time.Millisecond)
	cancel()
	<-ran

	mu.Lock()
	defer mu.Unlock()
	kinds := []string{faults[0].Kind, faults[1].Kind, faults[2].Kind}
	if strings.Join(kinds, ",") != "step-down,slow-member,partition" {
		t.Errorf("order: %v", kinds)
	}
	if faults[0].Member != p0.Addr() {
		t.Errorf("stepped down %s, the primary was %s", faults[0].Member, p0.Addr())
	}
	if got := faults[0].Time.Sub(start); got < 550*time.Millisecond || got > 3*time.Second {
		t.Errorf("first fault after %v, want ~600ms", got)
	}
	// The step-down made a new primary.
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	np, err := d.RS.WaitForPrimary(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if np == p0 {
		t.Errorf("the primary is still %s", p0.Addr())
	}
	var stepped, elected, partitioned, healed bool
	for _, e := range d.RS.Events() {
		switch e.Kind {
		case mongotest.EventSteppedDown:
			stepped = stepped || e.Addr == p0.Addr()
		case mongotest.EventElected:
			elected = elected || e.Addr != p0.Addr()
		case mongotest.EventPartitioned:
			partitioned = partitioned || e.Addr == faults[2].Member
		case mongotest.EventHealed:
			healed = healed || e.Addr == faults[2].Member
		}
	}
	if !stepped || !elected || !partitioned || !healed {
		t.Errorf("events: stepped down %v, elected %v, partitioned %v, healed %v: %+v", stepped, elected, partitioned, healed, d.RS.Events())
	}
	out := logs.String()
	for _, want := range []string{"component=demo", "fault=step-down", "fault=slow-member", "fault=partition", "partition healed"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
}

func TestSettingsAndBanner(t *testing.T) {
	d, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo" || s.Interval != time.Second || len(s.ReadPreferences) != 3 || s.ReadPreferences[1].Pref.Mode != "secondaryPreferred" || s.ReadPreferences[2].Name != "nearest" {
		t.Errorf("settings: %+v", s)
	}
	var b bytes.Buffer
	d.Banner(&b, "127.0.0.1:9417")
	for _, want := range append(d.Addrs(), "SIMULATION", "http://127.0.0.1:9417/metrics", "/probe?target=demo", "/-/ready", "--uri", "MONGOPROBE_URI", "--config.file") {
		if !strings.Contains(b.String(), want) {
			t.Errorf("banner lacks %q", want)
		}
	}
}

var _ io.Writer = (*logbuf.Buffer)(nil)
