package selection

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// fuzzTopology builds a topology, operation counts and a selector from
// arbitrary bytes: types (in and out of range), RTTs, tags, dates,
// deprioritised addresses and any read preference, valid or not.
func fuzzTopology(data []byte) (description.TopologyDescription, opCounts, Selector, time.Duration) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	addrs := []string{"a:1", "b:1", "c:1", "d:1", "e:1", "f:1", "g:1", "h:1"}
	tagVals := []string{"ny", "sf", ""}
	top := description.TopologyDescription{Type: description.TopologyType(next() % 8)}
	heartbeat := time.Duration(next()) * time.Second
	ops := opCounts{}
	for n := int(next() % 9); n > 0; n-- {
		s := description.ServerDescription{
			Address:        addrs[next()%8],
			Type:           description.ServerType(next() % 12),
			RoundTripTime:  time.Duration(int8(next())) * time.Millisecond,
			LastUpdateTime: time.Unix(int64(int8(next()))*1e9, 0),
			LastWriteDate:  time.Unix(int64(int8(next()))*1e9, 0),
		}
		ops[s.Address] = int64(next() % 4)
		if b := next(); b%4 != 0 {
			s.Tags = map[string]string{"dc": tagVals[b%3]}
		}
		top.Servers = append(top.Servers, s)
	}
	sel := Selector{
		Write:    next()%3 == 0,
		ReadPref: ReadPref{Mode: Mode(int8(next()) % 7)},
	}
	if b := next(); b%4 != 0 {
		sel.ReadPref.MaxStaleness = dur(time.Duration(int8(next())) * 2 * time.Second)
	}
	for n := int(next() % 3); n > 0; n-- {
		ts := TagSet{}
		if b := next(); b%2 == 0 {
			ts["dc"] = tagVals[b%3]
		}
		sel.ReadPref.TagSets = append(sel.ReadPref.TagSets, ts)
	}
	for n := int(next() % 3); n > 0; n-- {
		sel.Deprioritized = append(sel.Deprioritized, addrs[next()%8])
	}
	return top, ops, sel, heartbeat
}

// inTopology reports whether s points at one of top's servers.
func inTopology(top description.TopologyDescription, s *description.ServerDescription) bool {
	for i := range top.Servers {
		if &top.Servers[i] == s {
			return true
		}
	}
	return false
}

// FuzzSelectionSuitable checks, for any topology and selector, that
// selection never panics, that invalid read preferences are typed errors,
// and that the suitable set, the window and the choice nest properly and
// hold only servers that may take the operation.
func FuzzSelectionSuitable(f *testing.F) {
	f.Add([]byte{3, 10, 3, 0, 4, 5, 0, 0, 0, 1, 4, 1, 2, 3, 100, 1, 2, 1, 2, 0, 3, 0, 1, 5})
	f.Add([]byte{2, 0, 4, 0, 5, 5, 1, 2, 1, 0, 1, 4, 9, 5, 1, 0, 2, 2, 4, 0, 5, 60, 2, 0, 1, 1, 0})
	f.Add([]byte{4, 0, 2, 0, 2, 1, 0, 0, 1, 0, 1, 2, 20, 0, 0, 0, 0, 1, 0, 1, 1})
	f.Add([]byte{1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{5, 0, 1, 0, 9, 1, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{3, 200, 2, 0, 4, 1, 127, 128, 0, 1, 1, 4, 3, 45, 2, 0, 0})
	f.Add([]byte{2, 0, 2, 0, 5, 1, 0, 0, 0, 1, 0, 2, 1, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		top, ops, sel, heartbeat := fuzzTopology(data)
		suitable, err := Suitable(top, sel, heartbeat)
		if err != nil {
			var e *Error
			if sel.Write || !errors.As(err, &e) || e.Field == "" {
				t.Fatalf("Suitable error %T %v: want a *Error naming a field, and only for reads", err, err)
			}
			return
		}
		for _, s := range suitable {
			if !available(s.Type) || !inTopology(top, s) {
				t.Fatalf("suitable %s %s is unavailable or not in the topology %s", s.Address, s.Type, Summary(top))
			}
			if sel.Write && replicaSet(top.Type) && s.Type != description.RSPrimary {
				t.Fatalf("write selected %s %s", s.Address, s.Type)
			}
			if top.Type == description.TopologyUnknown {
				t.Fatalf("unknown topology yielded %s", s.Address)
			}
		}
		window := InWindow(suitable, DefaultLocalThreshold)
		if (len(window) == 0) != (len(suitable) == 0) {
			t.Fatalf("window %v from suitable %v", window, suitable)
		}
		if len(window) == 0 {
			return
		}
		got := Pick(window, ops, rand.New(rand.NewPCG(uint64(len(data)), 1)))
		if !contains(window, got) {
			t.Fatalf("Pick chose %s outside the window", got.Address)
		}
		src := &fakeSource{top: top, ops: ops}
		s, err := Select(t.Context(), src, sel, Options{LocalThreshold: DefaultLocalThreshold, HeartbeatFrequency: heartbeat, Timeout: time.Hour})
		if err != nil {
			t.Fatalf("Select: %v; want a server of the window", err)
		}
		if !contains(window, s) {
			t.Fatalf("Select chose %s, not in the window", s.Address)
		}
	})
}

func contains(servers []*description.ServerDescription, s *description.ServerDescription) bool {
	for _, x := range servers {
		if x == s {
			return true
		}
	}
	return false
}
