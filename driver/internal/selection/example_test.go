package selection_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

func replicaSet() description.TopologyDescription {
	now := time.Now()
	return description.TopologyDescription{
		Type: description.ReplicaSetWithPrimary,
		Servers: []description.ServerDescription{
			{Address: "db0:27017", Type: description.RSPrimary, RoundTripTime: 2 * time.Millisecond, LastUpdateTime: now, LastWriteDate: now},
			{Address: "db1:27017", Type: description.RSSecondary, RoundTripTime: 40 * time.Millisecond, Tags: map[string]string{"dc": "sf"}, LastUpdateTime: now, LastWriteDate: now},
			{Address: "db2:27017", Type: description.RSSecondary, RoundTripTime: 3 * time.Millisecond, Tags: map[string]string{"dc": "ny"}, LastUpdateTime: now, LastWriteDate: now},
			{Address: "db3:27017", Type: description.RSSecondary, RoundTripTime: 90 * time.Millisecond, Tags: map[string]string{"dc": "ny"}, LastUpdateTime: now, LastWriteDate: now.Add(-5 * time.Minute)},
		},
	}
}

// idle is an OperationCounter with no operations in progress anywhere.
type idle struct{}

func (idle) OperationCount(string) int64 { return 0 }

// The three steps of selection: the suitable servers, the latency window,
// and the choice between two random servers of the window.
func ExampleSuitable() {
	maxStaleness := 120 * time.Second
	rp := selection.ReadPref{
		Mode:         selection.SecondaryPreferred,
		TagSets:      []selection.TagSet{{"dc": "ny"}, {}},
		MaxStaleness: &maxStaleness,
	}
	suitable, err := selection.Suitable(replicaSet(), selection.Read(rp), selection.DefaultHeartbeatFrequency)
	if err != nil {
		fmt.Println(err)
		return
	}
	window := selection.InWindow(suitable, selection.DefaultLocalThreshold)
	fmt.Println("suitable:", len(suitable), "in window:", len(window))
	fmt.Println("chosen:", selection.Pick(window, idle{}, nil).Address)
	// Output:
	// suitable: 1 in window: 1
	// chosen: db2:27017
}

// staticSource is a Source whose topology never changes.
type staticSource struct {
	idle
	t description.TopologyDescription
}

func (s staticSource) Current() (description.TopologyDescription, <-chan struct{}) { return s.t, nil }
func (staticSource) RequestImmediateCheck()                                        {}

// Select waits for a suitable server; here none appears, so it fails with
// the topology it last saw.
func ExampleSelect() {
	src := staticSource{t: replicaSet()}
	s, err := selection.Select(context.Background(), src, selection.Write(), selection.Options{
		LocalThreshold: selection.DefaultLocalThreshold,
		Timeout:        selection.DefaultTimeout,
	})
	fmt.Println(s.Address, err)

	src.t.Type = description.ReplicaSetNoPrimary
	src.t.Servers = src.t.Servers[1:]
	_, err = selection.Select(context.Background(), src, selection.Write(), selection.Options{Timeout: 10 * time.Millisecond})
	if se, ok := err.(*selection.SelectionError); ok {
		fmt.Println("timed out:", se.TimedOut)
	}
	// Output:
	// db0:27017 <nil>
	// timed out: true
}

// Zero is not "no maximum": a read preference asking for it is refused
// before any server is considered. NoMaxStaleness (-1) is "no maximum".
func ExampleReadPref_Validate() {
	zero, none := time.Duration(0), selection.NoMaxStaleness
	fmt.Println(selection.ReadPref{Mode: selection.Secondary, MaxStaleness: &zero}.Validate())
	fmt.Println(selection.ReadPref{Mode: selection.Secondary, MaxStaleness: &none}.Validate())
	// Output:
	// selection: invalid read preference maxStalenessSeconds: 0 is not allowed: it must be positive, or -1 for no maximum
	// <nil>
}
