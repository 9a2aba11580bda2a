package description

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
)

// FuzzApply feeds arbitrary hello replies, as a monitor would after
// parsing them, into topologies of every starting type, twice in a row
// from two addresses, and checks the invariants Apply promises: no panic,
// the input description untouched, servers sorted and unique, Single and
// LoadBalanced keep their type and one server, and a replica-set type that
// agrees with whether a primary is present.
func FuzzApply(f *testing.F) {
	for _, js := range []string{
		`{"ok":1,"isWritablePrimary":true,"setName":"rs","hosts":["a:27017","b:27017"],"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},"maxWireVersion":21}`,
		`{"ok":1,"secondary":true,"setName":"rs","hosts":["a:27017","c:27017"],"primary":"c:27017","me":"b:27017","maxWireVersion":9}`,
		`{"ok":1,"arbiterOnly":true,"setName":"rs","arbiters":["B:27017"],"passives":["d"]}`,
		`{"ok":1,"msg":"isdbgrid","maxWireVersion":21,"logicalSessionTimeoutMinutes":30}`,
		`{"ok":1,"isreplicaset":true}`,
		`{"ok":1,"isWritablePrimary":true,"minWireVersion":999,"maxWireVersion":1000}`,
		`{"ok":1,"isWritablePrimary":true,"setName":"other","hosts":["b:27017"],"topologyVersion":{"processId":{"$oid":"000000000000000000000001"},"counter":{"$numberLong":"3"}}}`,
	} {
		doc, err := bson.ParseExtJSON([]byte(js))
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(doc), uint8(0))
		f.Add([]byte(doc), uint8(7))
	}
	settings := []Settings{
		{Seeds: []string{"a", "b"}},
		{Seeds: []string{"a"}},
		{Seeds: []string{"a", "b"}, SetName: "rs"},
		{Seeds: []string{"a"}, DirectConnection: true, SetName: "rs"},
		{Seeds: []string{"a"}, LoadBalanced: true},
	}
	f.Fuzz(func(t *testing.T, doc []byte, sel uint8) {
		reply, err := handshake.ParseReply(bson.Raw(doc))
		if err != nil {
			return
		}
		td, err := New(settings[int(sel)%len(settings)])
		if err != nil {
			t.Fatal(err)
		}
		addrs := []string{"a:27017", "b:27017"}
		if sel&8 != 0 {
			addrs[0], addrs[1] = addrs[1], addrs[0]
		}
		for _, addr := range addrs {
			before := slices.Clone(td.Servers)
			sd := NewServer(addr, &reply, time.Millisecond, time.Time{})
			n, ch := td.Apply(sd)
			if !slices.EqualFunc(before, td.Servers, ServerDescription.Equal) {
				t.Fatal("Apply modified its receiver")
			}
			checkInvariants(t, td, n, ch)
			out := HandleError(sd, ErrorInfo{Code: int32(sel) * 97, Message: sd.SetName, Network: sel&16 != 0, Phase: Phase(sel % 4), TopologyVersion: reply.TopologyVersion})
			if out.MarkUnknown {
				mid := n
				n, ch = mid.Apply(out.Server)
				checkInvariants(t, mid, n, ch)
			}
			td = n
		}
	})
}

func checkInvariants(t *testing.T, old, n TopologyDescription, ch Changes) {
	t.Helper()
	if !slices.IsSortedFunc(n.Servers, func(a, b ServerDescription) int { return strings.Compare(a.Address, b.Address) }) {
		t.Fatal("servers not sorted")
	}
	for i := 1; i < len(n.Servers); i++ {
		if n.Servers[i].Address == n.Servers[i-1].Address {
			t.Fatal("duplicate server")
		}
	}
	if (old.Type == Single || old.Type == LoadBalanced) && (n.Type != old.Type || len(n.Servers) != 1) {
		t.Fatalf("%s became %s with %d servers", old.Type, n.Type, len(n.Servers))
	}
	hasPrimary := slices.ContainsFunc(n.Servers, func(s ServerDescription) bool { return s.Type == RSPrimary })
	if (n.Type == ReplicaSetWithPrimary) != hasPrimary && (n.Type == ReplicaSetNoPrimary || n.Type == ReplicaSetWithPrimary) {
		t.Fatalf("%s with primary=%v", n.Type, hasPrimary)
	}
	if ch.Ignored && !n.Equal(old) {
		t.Fatal("ignored description changed the topology")
	}
}
