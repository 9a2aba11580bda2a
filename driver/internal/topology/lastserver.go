package topology

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// LastServerRemoved is an update of the topology description that left
// it without servers (SDAM: "A client SHOULD emit a warning when, in the
// process of updating its topology description, it removes the last
// server from the topology"): every server's reply said it does not
// belong to the deployment the client was configured for, e.g. a replica
// set member of another set, or a standalone among several seeds.
type LastServerRemoved struct {
	TopologyID bson.ObjectID
	// Removed are the servers the update removed: the one whose reply
	// got it removed as that reply describes it, any other as it was
	// before.
	Removed []event.ServerDescription
	// Topology is the description after the update.
	Topology event.TopologyDescription
}

// lastServerRemoved calls Config.OnLastServerRemoved when evs, the events
// of the update that applied sd, removed the last server. Only a reply
// removes servers (an error marks a server Unknown, an SRV rescan never
// empties the list, and Close publishes its own events), so the update
// is always one of sd. publishMu is held, so calls come in the order of
// the updates.
func (t *Topology) lastServerRemoved(evs []event.TopologyEvent, sd description.ServerDescription) {
	if t.cfg.OnLastServerRemoved == nil {
		return
	}
	var (
		removed []string
		changed *event.TopologyDescriptionChanged
	)
	for _, e := range evs {
		switch e := e.(type) {
		case *event.ServerClosed:
			removed = append(removed, e.Address)
		case *event.TopologyDescriptionChanged:
			changed = e
		}
	}
	if len(removed) == 0 || changed == nil || len(changed.New.Servers) != 0 {
		return
	}
	w := LastServerRemoved{TopologyID: t.id, Topology: changed.New}
	for _, addr := range removed {
		r := event.ServerDescription{Address: addr, Kind: "Unknown"}
		if addr == sd.Address {
			r = eventServer(sd)
		} else {
			for _, s := range changed.Previous.Servers {
				if s.Address == addr {
					r = s
				}
			}
		}
		w.Removed = append(w.Removed, r)
	}
	t.cfg.OnLastServerRemoved(w)
}
