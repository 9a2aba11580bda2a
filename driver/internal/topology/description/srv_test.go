package description

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func addrs(td TopologyDescription) string {
	var a []string
	for _, s := range td.Servers {
		a = append(a, s.Address)
	}
	return strings.Join(a, ",")
}

func TestApplySRV(t *testing.T) {
	sharded := func(t *testing.T) TopologyDescription {
		td := mustNew(t, Settings{Seeds: []string{"a", "b"}, SRV: true})
		td, _ = td.Apply(ServerDescription{Address: "a:27017", Type: Mongos, MaxWireVersion: 21})
		return td
	}
	for _, tc := range []struct {
		name             string
		hosts            []string
		max              int
		want             string // servers after, "" means ignored
		added, removed   string
		randomFromPrefix string // with srvMaxHosts, the added hosts are any of these
	}{
		{name: "no change", hosts: []string{"a", "b"}, want: "a:27017,b:27017"},
		{name: "add and remove", hosts: []string{"A:27017", "c"}, want: "a:27017,c:27017", added: "c:27017", removed: "b:27017"},
		{name: "empty list ignored", hosts: nil},
		{name: "max reached", hosts: []string{"a", "b", "c", "d"}, max: 2, want: "a:27017,b:27017"},
		{name: "max with room", hosts: []string{"a", "c", "d", "e"}, max: 2, removed: "b:27017", randomFromPrefix: "c:27017 d:27017 e:27017"},
		{name: "max above list", hosts: []string{"a", "b", "c"}, max: 5, want: "a:27017,b:27017,c:27017", added: "c:27017"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := sharded(t)
			n, ch := td.ApplySRV(tc.hosts, tc.max, rand.New(rand.NewPCG(1, 2)))
			if tc.want == "" && tc.randomFromPrefix == "" {
				if !ch.Ignored || addrs(n) != addrs(td) {
					t.Fatalf("not ignored: %s %+v", addrs(n), ch)
				}
				return
			}
			if tc.randomFromPrefix != "" {
				if len(n.Servers) != tc.max || len(ch.Added) != 1 || !strings.Contains(tc.randomFromPrefix, ch.Added[0]) {
					t.Fatalf("random pick: %s %+v", addrs(n), ch)
				}
			} else if addrs(n) != tc.want || strings.Join(ch.Added, ",") != tc.added {
				t.Fatalf("servers %s added %v, want %s added %s", addrs(n), ch.Added, tc.want, tc.added)
			}
			if strings.Join(ch.Removed, ",") != tc.removed {
				t.Errorf("removed %v, want %s", ch.Removed, tc.removed)
			}
			if a, _ := n.Server("a:27017"); a.Type != Mongos {
				t.Error("an unchanged host lost its description")
			}
		})
	}
	rs := mustNew(t, Settings{Seeds: []string{"a"}, SetName: "rs", SRV: true})
	if _, ch := rs.ApplySRV([]string{"z"}, 0, nil); !ch.Ignored {
		t.Error("a replica set must not be rescanned")
	}
}
