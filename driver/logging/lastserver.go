package logging

import (
	"context"
	"log/slog"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

// LastServerRemoved logs "Last server removed from topology" at warning
// level in the failover component: an update of the topology description
// removed its last server, which the SDAM specification says a client
// SHOULD warn about, since no operation can succeed until the deployment
// changes. topology is the description after the update; removed are the
// servers it removed, as their replies described them. The message
// carries topologyId, topologyType, setName (when the client expects a
// replica set) and removedServers ("address (type, setName ...)", joined
// with "; "). The driver calls it; closing a client, which also leaves a
// topology without servers, never does.
func (s *Sink) LastServerRemoved(ctx context.Context, topologyID bson.ObjectID, topology event.TopologyDescription, removed []event.ServerDescription) {
	warn := LevelWarning.SlogLevel()
	if !s.enabled(ctx, compFailover, warn) {
		return
	}
	parts := make([]string, 0, len(removed))
	for _, sd := range removed {
		p := sd.Address + " (" + sd.Kind
		if sd.SetName != "" {
			p += ", setName " + sd.SetName
		}
		if sd.Error != nil {
			p += ", error: " + s.errorText(sd.Error)
		}
		parts = append(parts, p+")")
	}
	r := s.record(compFailover, warn, "Last server removed from topology")
	r.AddAttrs(slog.String("topologyId", topologyID.Hex()), slog.String("topologyType", topology.Kind))
	if topology.SetName != "" {
		r.AddAttrs(slog.String("setName", topology.SetName))
	}
	r.AddAttrs(slog.String("removedServers", strings.Join(parts, "; ")))
	s.emit(ctx, r)
}
