package selection

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fuzzTopology builds a topology and selector from arbitrary bytes: kinds
// (in and out of range), RTTs, tags, dates, deprioritised addresses and any
// read preference, valid or not.
func fuzzTopology(data []byte) (Topology, Selector) {
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
	top := Topology{
		Kind:               TopologyKind(int8(next()) % 8),
		HeartbeatFrequency: time.Duration(next()) * time.Second,
	}
	for n := int(next() % 9); n > 0; n-- {
		s := Server{
			Addr:           addrs[next()%8],
			Kind:           ServerKind(int8(next()) % 12),
			AvgRTT:         time.Duration(int8(next())) * time.Millisecond,
			LastUpdateTime: time.Unix(int64(int8(next()))*1e9, 0),
			LastWriteDate:  time.Unix(int64(int8(next()))*1e9, 0),
			OperationCount: int64(next() % 4),
		}
		if b := next(); b%4 != 0 {
			s.Tags = map[string]string{"dc": tagVals[b%3]}
		}
		top.Servers = append(top.Servers, s)
	}
	sel := Selector{
		Write: next()%3 == 0,
		ReadPref: ReadPref{
			Mode:         Mode(int8(next()) % 7),
			MaxStaleness: time.Duration(int8(next())) * 2 * time.Second,
		},
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
	return top, sel
}

// FuzzSelectionSuitable checks, for any topology and selector, that
// selection never panics, that invalid read preferences are typed errors,
// and that the suitable set, the window and the choice nest properly and
// hold only servers that may take the operation.
func FuzzSelectionSuitable(f *testing.F) {
	f.Add([]byte{3, 10, 3, 0, 3, 5, 0, 0, 0, 1, 4, 1, 2, 3, 100, 1, 2, 1, 2, 0, 3, 0, 1, 5})
	f.Add([]byte{2, 0, 4, 0, 4, 5, 1, 2, 1, 0, 1, 4, 9, 5, 1, 0, 2, 2, 4, 0, 5, 60, 2, 0, 1, 1, 0})
	f.Add([]byte{4, 0, 2, 0, 2, 1, 0, 0, 1, 0, 1, 2, 20, 0, 0, 0, 0, 1, 0, 1, 1})
	f.Add([]byte{1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{5, 0, 1, 0, 8, 1, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{3, 200, 2, 0, 3, 1, 127, 128, 0, 1, 1, 4, 3, 45, 2, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		top, sel := fuzzTopology(data)
		suitable, err := Suitable(top, sel)
		if err != nil {
			var e *Error
			if sel.Write || !errors.As(err, &e) || e.Field == "" {
				t.Fatalf("Suitable error %T %v: want a *Error naming a field, and only for reads", err, err)
			}
			return
		}
		for _, s := range suitable {
			if !s.Kind.Available() || !slices.ContainsFunc(top.Servers, func(x Server) bool { return x.Addr == s.Addr && x.Kind == s.Kind }) {
				t.Fatalf("suitable %v is unavailable or not in the topology %v", s, top)
			}
			if sel.Write && top.Kind.replicaSet() && s.Kind != RSPrimary {
				t.Fatalf("write selected %v", s)
			}
			if top.Kind == TopologyUnknown {
				t.Fatalf("unknown topology yielded %v", s)
			}
		}
		window := InWindow(suitable, DefaultLocalThreshold)
		if (len(window) == 0) != (len(suitable) == 0) {
			t.Fatalf("window %v from suitable %v", window, suitable)
		}
		if len(window) == 0 {
			return
		}
		got := Pick(window, rand.New(rand.NewPCG(uint64(len(data)), 1)))
		if !slices.ContainsFunc(window, func(x Server) bool { return x.Addr == got.Addr }) {
			t.Fatalf("Pick chose %v outside the window %v", got, window)
		}
		src := &fakeSource{top: top}
		if s, err := Select(t.Context(), src, sel, Options{LocalThreshold: DefaultLocalThreshold, Timeout: time.Hour}); err != nil || !slices.ContainsFunc(window, func(x Server) bool { return x.Addr == s.Addr }) {
			t.Fatalf("Select = %v, %v; want a server of the window %v", s, err, window)
		}
	})
}
