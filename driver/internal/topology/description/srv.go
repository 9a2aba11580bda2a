package description

import (
	"math/rand/v2"
	"slices"

	"github.com/mongoscope/mongoscope/driver/connstring"
)

// ApplySRV folds the result of an SRV rescan (Polling SRV Records for
// Mongos Discovery) into t: servers no longer listed are removed, servers
// still listed are left alone, and new hosts are added as Unknown, all of
// them when maxHosts (srvMaxHosts) is zero or covers them, otherwise chosen
// at random with rng (nil: the global source) until the topology has
// maxHosts servers, the same way the initial seed list was chosen.
//
// Only Unknown and Sharded topologies are rescanned; for any other type,
// or an empty host list (no verified records, or a DNS error), the result
// is Ignored and t is unchanged.
func (t TopologyDescription) ApplySRV(hosts []string, maxHosts int, rng *rand.Rand) (TopologyDescription, Changes) {
	if (t.Type != TopologyUnknown && t.Type != Sharded) || len(hosts) == 0 {
		return t, Changes{Ignored: true}
	}
	valid := normalizeHosts(hosts)
	if len(valid) == 0 {
		return t, Changes{Ignored: true}
	}
	n := t
	n.Servers = slices.DeleteFunc(slices.Clone(t.Servers), func(s ServerDescription) bool { return !contains(valid, s.Address) })
	var fresh []string
	for _, h := range valid {
		if _, ok := n.index(h); !ok {
			fresh = append(fresh, h)
		}
	}
	if maxHosts > 0 && maxHosts < len(valid) {
		if room := maxHosts - len(n.Servers); room > 0 {
			fresh = connstring.SelectHosts(fresh, room, rng)
		} else {
			fresh = nil
		}
	}
	for _, h := range fresh {
		i, _ := n.index(h)
		n.Servers = slices.Insert(n.Servers, i, ServerDescription{Address: h})
	}
	n.updateCompatibility()
	n.updateSessionTimeout()
	return n, diff(t, n, nil)
}
