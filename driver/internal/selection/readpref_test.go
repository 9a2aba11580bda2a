package selection

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// TestToSend checks which $readPreference a read carries over OP_MSG, rule
// by rule (Server Selection spec: "Topology type: Single", the replica set
// read rules, "Passing read preference to mongos and load balancers" and
// "Document structure"). No spec JSON test covers them. "" means none.
func TestToSend(t *testing.T) {
	tagged := ReadPref{Mode: Secondary, TagSets: []TagSet{{"dc": "ny", "rack": "1"}, {}}, MaxStaleness: dur(120 * time.Second)}
	tests := []struct {
		name string
		rp   ReadPref
		tt   description.TopologyType
		st   description.ServerType
		want string
	}{
		// Single: a standalone never gets one; any other member gets
		// primaryPreferred for primary, so a secondary answers too.
		{"single standalone, primary", ReadPref{}, description.Single, description.Standalone, ""},
		{"single standalone, secondary", ReadPref{Mode: Secondary}, description.Single, description.Standalone, ""},
		{"single secondary, primary", ReadPref{}, description.Single, description.RSSecondary, `{"mode":"primaryPreferred"}`},
		{"single primary, primary", ReadPref{}, description.Single, description.RSPrimary, `{"mode":"primaryPreferred"}`},
		{"single arbiter, nearest", ReadPref{Mode: Nearest}, description.Single, description.RSArbiter, `{"mode":"nearest"}`},
		{"single secondary, tags and staleness", tagged, description.Single, description.RSSecondary,
			`{"mode":"secondary","tags":[{"dc":"ny","rack":"1"},{}],"maxStalenessSeconds":120}`},
		// Single mongos: the mongos rules.
		{"single mongos, primary", ReadPref{}, description.Single, description.Mongos, ""},
		{"single mongos, secondary", ReadPref{Mode: Secondary}, description.Single, description.Mongos, `{"mode":"secondary"}`},
		// Replica set: none for primary, the read preference otherwise.
		{"replica set primary, primary", ReadPref{}, description.ReplicaSetWithPrimary, description.RSPrimary, ""},
		{"replica set primary, primaryPreferred", ReadPref{Mode: PrimaryPreferred}, description.ReplicaSetWithPrimary, description.RSPrimary, `{"mode":"primaryPreferred"}`},
		{"replica set secondary, secondaryPreferred", ReadPref{Mode: SecondaryPreferred}, description.ReplicaSetNoPrimary, description.RSSecondary, `{"mode":"secondaryPreferred"}`},
		{"replica set secondary, tags and staleness", tagged, description.ReplicaSetWithPrimary, description.RSSecondary,
			`{"mode":"secondary","tags":[{"dc":"ny","rack":"1"},{}],"maxStalenessSeconds":120}`},
		// Mongos and load balancer, OP_MSG: none for primary, every
		// other mode sent, secondaryPreferred without tags included (the
		// exception is OP_QUERY's).
		{"mongos, primary", ReadPref{}, description.Sharded, description.Mongos, ""},
		{"mongos, secondaryPreferred alone", ReadPref{Mode: SecondaryPreferred}, description.Sharded, description.Mongos, `{"mode":"secondaryPreferred"}`},
		{"mongos, no max staleness (-1) omitted", ReadPref{Mode: Nearest, MaxStaleness: dur(NoMaxStaleness)}, description.Sharded, description.Mongos, `{"mode":"nearest"}`},
		{"mongos, tags and staleness", tagged, description.Sharded, description.Mongos,
			`{"mode":"secondary","tags":[{"dc":"ny","rack":"1"},{}],"maxStalenessSeconds":120}`},
		{"load balancer, primary", ReadPref{}, description.LoadBalanced, description.LoadBalancer, ""},
		{"load balancer, primaryPreferred", ReadPref{Mode: PrimaryPreferred}, description.LoadBalanced, description.LoadBalancer, `{"mode":"primaryPreferred"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp, ok := ToSend(tc.rp, tc.tt, tc.st)
			got := ""
			if ok {
				doc := bson.Raw(rp.AppendDocument(nil))
				if err := doc.Validate(); err != nil {
					t.Fatalf("document %x: %v", []byte(doc), err)
				}
				got = doc.String()
				if v := doc.Lookup("maxStalenessSeconds"); v.Type != 0 && v.Type != bson.TypeInt64 {
					t.Errorf("maxStalenessSeconds is BSON type %v, want int64", v.Type)
				}
			}
			if got != tc.want {
				t.Errorf("$readPreference %s, want %s", got, tc.want)
			}
		})
	}
}
