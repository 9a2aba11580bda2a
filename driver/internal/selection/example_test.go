package selection_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

func replicaSet() selection.Topology {
	now := time.Now()
	return selection.Topology{
		Kind: selection.ReplicaSetWithPrimary,
		Servers: []selection.Server{
			{Addr: "db0:27017", Kind: selection.RSPrimary, AvgRTT: 2 * time.Millisecond, LastUpdateTime: now, LastWriteDate: now},
			{Addr: "db1:27017", Kind: selection.RSSecondary, AvgRTT: 40 * time.Millisecond, Tags: map[string]string{"dc": "sf"}, LastUpdateTime: now, LastWriteDate: now},
			{Addr: "db2:27017", Kind: selection.RSSecondary, AvgRTT: 3 * time.Millisecond, Tags: map[string]string{"dc": "ny"}, LastUpdateTime: now, LastWriteDate: now},
			{Addr: "db3:27017", Kind: selection.RSSecondary, AvgRTT: 90 * time.Millisecond, Tags: map[string]string{"dc": "ny"}, LastUpdateTime: now, LastWriteDate: now.Add(-5 * time.Minute)},
		},
	}
}

// The three steps of selection: the suitable servers, the latency window,
// and the choice between two random servers of the window.
func ExampleSuitable() {
	rp := selection.ReadPref{
		Mode:         selection.SecondaryPreferred,
		TagSets:      []selection.TagSet{{"dc": "ny"}, {}},
		MaxStaleness: 120 * time.Second,
	}
	suitable, err := selection.Suitable(replicaSet(), selection.Read(rp))
	if err != nil {
		fmt.Println(err)
		return
	}
	window := selection.InWindow(suitable, selection.DefaultLocalThreshold)
	fmt.Println("suitable:", len(suitable), "in window:", len(window))
	fmt.Println("chosen:", selection.Pick(window, nil).Addr)
	// Output:
	// suitable: 1 in window: 1
	// chosen: db2:27017
}

// staticSource is a Source whose topology never changes.
type staticSource struct{ t selection.Topology }

func (s staticSource) Current() (selection.Topology, <-chan struct{}) { return s.t, nil }
func (staticSource) RequestImmediateCheck()                           {}

// Select waits for a suitable server; here none appears, so it fails with
// the topology it last saw.
func ExampleSelect() {
	src := staticSource{replicaSet()}
	s, err := selection.Select(context.Background(), src, selection.Write(), selection.Options{
		LocalThreshold: selection.DefaultLocalThreshold,
		Timeout:        selection.DefaultTimeout,
	})
	fmt.Println(s.Addr, err)

	src.t.Kind = selection.ReplicaSetNoPrimary
	src.t.Servers = src.t.Servers[1:]
	_, err = selection.Select(context.Background(), src, selection.Write(), selection.Options{Timeout: 10 * time.Millisecond})
	if se, ok := err.(*selection.SelectionError); ok {
		fmt.Println("timed out:", se.TimedOut)
	}
	// Output:
	// db0:27017 <nil>
	// timed out: true
}
