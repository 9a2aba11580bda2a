package selection

import (
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// ToSend decides the $readPreference of a read sent with OP_MSG to a server
// of type st, chosen in a topology of type tt, under rp. It returns the read
// preference to send and whether to send one (Server Selection spec,
// "Topology type: Single", the replica set read rules, and "Passing read
// preference to mongos and load balancers"):
//
//   - a Standalone gets none;
//   - in a Single topology, any other type but a Mongos gets rp, or
//     {mode: primaryPreferred} when rp's mode is primary, so that the one
//     server answers whatever it is;
//   - otherwise (replica set members, a Mongos, a LoadBalancer) mode primary
//     gets none, as the server's default is primary, and any other mode gets
//     rp.
func ToSend(rp ReadPref, tt description.TopologyType, st description.ServerType) (ReadPref, bool) {
	switch {
	case st == description.Standalone:
		return ReadPref{}, false
	case tt == description.Single && st != description.Mongos && rp.Mode == Primary:
		return ReadPref{Mode: PrimaryPreferred}, true
	case rp.Mode == Primary:
		return ReadPref{}, false
	}
	return rp, true
}

// AppendDocument appends rp as a $readPreference document: mode in camel
// case; tags when there are tag sets; maxStalenessSeconds as an int64 when
// there is a maximum. The read preference should be valid (Validate).
func (rp ReadPref) AppendDocument(dst []byte) []byte {
	start, b := bson.AppendDocumentStart(dst)
	b = bson.AppendStringElement(b, "mode", rp.Mode.String())
	if len(rp.TagSets) > 0 {
		var as int
		as, b = bson.AppendArrayElementStart(b, "tags")
		for i, ts := range rp.TagSets {
			var ds int
			ds, b = bson.AppendDocumentElementStart(b, strconv.Itoa(i))
			for _, k := range sortedKeys(ts) {
				b = bson.AppendStringElement(b, k, ts[k])
			}
			b, _ = bson.AppendDocumentEnd(b, ds)
		}
		b, _ = bson.AppendDocumentEnd(b, as)
	}
	if ms, ok := rp.maxStaleness(); ok {
		b = bson.AppendInt64Element(b, "maxStalenessSeconds", int64(ms.Seconds()))
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}
