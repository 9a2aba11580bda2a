package probe

import (
	"context"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

// TestTopologyChanges feeds SDAM descriptions to the cluster directly: a
// re-election of the same member counts, a member that leaves loses its
// series, a member's old type is deleted.
func TestTopologyChanges(t *testing.T) {
	// A client that cannot connect (a proxy without a Dialer) sends no
	// SDAM events of its own.
	e := newCluster(t, "mongodb://127.0.0.1:1/?proxyHost=localhost", nil)
	e1, e2 := bson.NewObjectID(), bson.NewObjectID()
	desc := func(kind string, servers ...event.ServerDescription) event.TopologyDescription {
		return event.TopologyDescription{Kind: kind, Servers: servers}
	}
	a, b := "h1:27017", "h2:27017"
	e.c.topologyChanged(desc("ReplicaSetWithPrimary",
		event.ServerDescription{Address: a, Kind: "RSPrimary", ElectionID: &e1},
		event.ServerDescription{Address: b, Kind: "RSSecondary"}))
	e.c.topologyChanged(desc("ReplicaSetWithPrimary",
		event.ServerDescription{Address: a, Kind: "RSPrimary", ElectionID: &e1},
		event.ServerDescription{Address: b, Kind: "RSSecondary"}))
	if st := e.c.Status(); st.PrimaryChanges != 0 || st.Primary != a || !st.NoPrimarySince.IsZero() {
		t.Fatalf("%+v", st)
	}
	// The same member elected again, after a window without primary.
	e.c.topologyChanged(desc("ReplicaSetNoPrimary",
		event.ServerDescription{Address: a, Kind: "Unknown"},
		event.ServerDescription{Address: b, Kind: "RSSecondary"}))
	if st := e.c.Status(); st.Primary != "" || st.NoPrimarySince.IsZero() {
		t.Fatalf("%+v", st)
	}
	e.c.topologyChanged(desc("ReplicaSetWithPrimary",
		event.ServerDescription{Address: a, Kind: "RSPrimary", ElectionID: &e2},
		event.ServerDescription{Address: b, Kind: "RSSecondary"}))
	if st := e.c.Status(); st.PrimaryChanges != 1 || st.Primary != a {
		t.Fatalf("%+v", st)
	}
	// b leaves; a is now a secondary, nothing is primary.
	e.c.topologyChanged(desc("ReplicaSetNoPrimary", event.ServerDescription{Address: a, Kind: "RSSecondary"}))
	out := e.text(t)
	if strings.Contains(out, `member="`+b+`"`) {
		t.Errorf("series of the member that left:\n%s", grep(out, b))
	}
	if strings.Contains(out, `type="RSPrimary"`) || !strings.Contains(out, `mongoprobe_member_type{cluster="test",member="`+a+`",type="RSSecondary"} 1`) {
		t.Errorf("member types:\n%s", grep(out, "member_type"))
	}
	if strings.Contains(out, "mongoprobe_primary{") || !strings.Contains(out, `mongoprobe_writable_primary{cluster="test"} 0`) {
		t.Errorf("primary:\n%s", grep(out, "primary"))
	}
	if st := e.c.Status(); len(st.Members) != 1 || st.Members[0].Address != a {
		t.Errorf("members %+v", st.Members)
	}
	// Ping targets of members that left are deleted at the next round.
	e.c.Round(context.Background())
	e.c.clientMu.Lock()
	e.c.pingTargets["gone:1"] = true
	e.c.clientMu.Unlock()
	e.c.m.success.WithLabelValues(ProbePing, "gone:1").Set(1)
	e.c.Round(context.Background())
	if strings.Contains(e.text(t), "gone:1") {
		t.Errorf("the ping target of a member that left is still exported")
	}
}
