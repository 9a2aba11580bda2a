package description

import (
	"slices"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// ServerChange is one server whose description changed under Server
// Description Equality.
type ServerChange struct {
	Old, New ServerDescription
}

// Changes is what Apply did, for the caller to act on: start and stop
// monitors, request checks, publish events (in the order
// serverDescriptionChanged, serverClosed, serverOpening,
// topologyDescriptionChanged).
type Changes struct {
	// Ignored is true when the description was dropped: its server is not
	// in the topology, or its topologyVersion is older than the current
	// one. Nothing else is set then.
	Ignored bool
	// Servers lists, by address, every server whose description is no
	// longer Equal to the previous one, side effects included (an old
	// primary marked Unknown, a PossiblePrimary).
	Servers []ServerChange
	// Added are new servers to monitor; Removed are servers to stop
	// monitoring and whose pools to close.
	Added, Removed []string
	// CheckNow lists servers that need an immediate check: an old primary
	// that a newer one displaced.
	CheckNow []string
	// TopologyChanged is true when the new description is not Equal to
	// the old one.
	TopologyChanged bool
}

// Apply folds the new description s of one server into t and returns the
// resulting topology and what changed; t itself is left as it was. It
// follows the specification's TopologyType table: Single and LoadBalanced
// topologies only replace the server (Single checking the set name);
// the others run updateUnknownWithStandalone, updateRSFromPrimary,
// updateRSWithoutPrimary, updateRSWithPrimaryFromMember, checkIfHasPrimary
// and remove as the table says, then recompute compatibility and the
// logical session timeout.
//
// s is ignored when its server is not in t (a host list removed it while
// it was being checked) or when its topologyVersion is older than the
// current description's.
func (t TopologyDescription) Apply(s ServerDescription) (TopologyDescription, Changes) {
	i, ok := t.index(s.Address)
	if !ok || CompareTopologyVersion(t.Servers[i].TopologyVersion, s.TopologyVersion) > 0 {
		return t, Changes{Ignored: true}
	}
	u := updater{t: t}
	u.t.Servers = slices.Clone(t.Servers)
	u.t.Servers[i] = s
	u.apply(s)
	u.t.updateCompatibility()
	u.t.updateSessionTimeout()
	return u.t, diff(t, u.t, u.checkNow)
}

// updater holds a topology being rebuilt by one Apply.
type updater struct {
	t        TopologyDescription
	checkNow []string
}

func (u *updater) apply(s ServerDescription) {
	switch u.t.Type {
	case LoadBalanced:
		// Stays LoadBalanced with its one server, whatever it is told.
	case Single:
		if u.t.SetName != "" && s.Type != Unknown && s.SetName != u.t.SetName {
			u.replace(UnknownServer(s.Address, &SetNameError{Address: s.Address, Want: u.t.SetName, Got: s.SetName}))
		}
	case TopologyUnknown:
		switch s.Type {
		case Standalone:
			u.updateUnknownWithStandalone(s)
		case Mongos:
			u.t.Type = Sharded
		case RSPrimary:
			u.t.Type = ReplicaSetWithPrimary
			u.updateRSFromPrimary(s)
		case RSSecondary, RSArbiter, RSOther:
			u.t.Type = ReplicaSetNoPrimary
			u.updateRSWithoutPrimary(s)
		}
	case Sharded:
		switch s.Type {
		case Unknown, Mongos:
		default:
			u.remove(s.Address)
		}
	case ReplicaSetNoPrimary:
		switch s.Type {
		case Standalone, Mongos:
			u.remove(s.Address)
		case RSPrimary:
			u.t.Type = ReplicaSetWithPrimary
			u.updateRSFromPrimary(s)
		case RSSecondary, RSArbiter, RSOther:
			u.updateRSWithoutPrimary(s)
		}
	case ReplicaSetWithPrimary:
		switch s.Type {
		case Standalone, Mongos:
			u.remove(s.Address)
			u.checkIfHasPrimary()
		case RSPrimary:
			u.updateRSFromPrimary(s)
		case RSSecondary, RSArbiter, RSOther:
			u.updateRSWithPrimaryFromMember(s)
		default:
			u.checkIfHasPrimary()
		}
	}
}

func (u *updater) updateUnknownWithStandalone(s ServerDescription) {
	if u.t.oneSeed {
		u.t.Type = Single
		return
	}
	u.remove(s.Address)
}

func (u *updater) updateRSWithoutPrimary(s ServerDescription) {
	if u.t.SetName == "" {
		u.t.SetName = s.SetName
	} else if u.t.SetName != s.SetName {
		u.remove(s.Address)
		return
	}
	u.addMembers(s)
	u.markPossiblePrimary(s.Primary)
	if s.Me != "" && s.Address != s.Me {
		u.remove(s.Address)
	}
}

func (u *updater) updateRSWithPrimaryFromMember(s ServerDescription) {
	if u.t.SetName != s.SetName || (s.Me != "" && s.Address != s.Me) {
		u.remove(s.Address)
		u.checkIfHasPrimary()
		return
	}
	if !u.hasPrimary() {
		// This member had been the primary.
		u.t.Type = ReplicaSetNoPrimary
		u.markPossiblePrimary(s.Primary)
	}
}

func (u *updater) updateRSFromPrimary(s ServerDescription) {
	if u.t.SetName == "" {
		u.t.SetName = s.SetName
	} else if u.t.SetName != s.SetName {
		u.remove(s.Address)
		u.checkIfHasPrimary()
		return
	}
	if !u.acceptElection(s) {
		u.replace(UnknownServer(s.Address, &StalePrimaryError{
			Address: s.Address, Mismatch: true,
			ElectionID: s.ElectionID, SetVersion: s.SetVersion,
			MaxElectionID: u.t.MaxElectionID, MaxSetVersion: u.t.MaxSetVersion,
		}))
		u.checkIfHasPrimary()
		return
	}
	for i := range u.t.Servers {
		o := &u.t.Servers[i]
		if o.Address != s.Address && o.Type == RSPrimary {
			*o = UnknownServer(o.Address, &StalePrimaryError{Address: o.Address})
			u.checkNow = append(u.checkNow, o.Address)
		}
	}
	u.addMembers(s)
	// Servers is this Apply's own copy, so it may be filtered in place.
	u.t.Servers = slices.DeleteFunc(u.t.Servers, func(o ServerDescription) bool { return !s.members(o.Address) })
	u.checkIfHasPrimary()
}

// acceptElection compares s's (electionId, setVersion) with the maxima and
// records s's as the new maxima when s is not stale. Servers from MongoDB
// 6.0 on (wire version 17) order by electionId first; older ones by
// setVersion first, with their own treatment of missing values.
func (u *updater) acceptElection(s ServerDescription) bool {
	t := &u.t
	if s.MaxWireVersion >= 17 {
		c := comparePtr(s.ElectionID, t.MaxElectionID, func(a, b bson.ObjectID) int { return a.Compare(b) })
		if c > 0 || (c == 0 && comparePtr(s.SetVersion, t.MaxSetVersion, cmpInt64) >= 0) {
			t.MaxElectionID, t.MaxSetVersion = s.ElectionID, s.SetVersion
			return true
		}
		return false
	}
	if s.SetVersion != nil && s.ElectionID != nil {
		if t.MaxSetVersion != nil && t.MaxElectionID != nil &&
			(*t.MaxSetVersion > *s.SetVersion ||
				(*t.MaxSetVersion == *s.SetVersion && t.MaxElectionID.Compare(*s.ElectionID) > 0)) {
			return false
		}
		t.MaxElectionID = s.ElectionID
	}
	if s.SetVersion != nil && (t.MaxSetVersion == nil || *s.SetVersion > *t.MaxSetVersion) {
		t.MaxSetVersion = s.SetVersion
	}
	return true
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// comparePtr orders values with nil below everything but nil.
func comparePtr[T any](a, b *T, cmp func(T, T) int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp(*a, *b)
}

func (u *updater) checkIfHasPrimary() {
	if u.hasPrimary() {
		u.t.Type = ReplicaSetWithPrimary
	} else {
		u.t.Type = ReplicaSetNoPrimary
	}
}

func (u *updater) hasPrimary() bool {
	for i := range u.t.Servers {
		if u.t.Servers[i].Type == RSPrimary {
			return true
		}
	}
	return false
}

// markPossiblePrimary turns an Unknown server that a member names as its
// primary into a PossiblePrimary. Only the type changes, as the
// specification says, so the server keeps the error of a failed check.
func (u *updater) markPossiblePrimary(addr string) {
	if addr == "" {
		return
	}
	if i, ok := u.t.index(addr); ok && u.t.Servers[i].Type == Unknown {
		u.t.Servers[i].Type = PossiblePrimary
	}
}

// addMembers adds an Unknown server for each of s's hosts, passives and
// arbiters the topology lacks.
func (u *updater) addMembers(s ServerDescription) {
	for _, list := range [...][]string{s.Hosts, s.Passives, s.Arbiters} {
		for _, a := range list {
			if i, ok := u.t.index(a); !ok {
				u.t.Servers = slices.Insert(u.t.Servers, i, ServerDescription{Address: a})
			}
		}
	}
}

func (u *updater) replace(s ServerDescription) {
	if i, ok := u.t.index(s.Address); ok {
		u.t.Servers[i] = s
	}
}

func (u *updater) remove(addr string) {
	if i, ok := u.t.index(addr); ok {
		u.t.Servers = slices.Delete(u.t.Servers, i, i+1)
	}
}

func (t *TopologyDescription) updateCompatibility() {
	t.CompatibilityErr = nil
	if t.Type == LoadBalanced {
		return
	}
	for i := range t.Servers {
		s := &t.Servers[i]
		if s.Type == Unknown || s.Type == PossiblePrimary {
			continue
		}
		if s.MinWireVersion > MaxSupportedWireVersion {
			t.CompatibilityErr = &WireVersionError{Address: s.Address, MinWireVersion: s.MinWireVersion, MaxWireVersion: s.MaxWireVersion, TooNew: true}
			return
		}
		if s.MaxWireVersion < MinSupportedWireVersion {
			t.CompatibilityErr = &WireVersionError{Address: s.Address, MinWireVersion: s.MinWireVersion, MaxWireVersion: s.MaxWireVersion}
			return
		}
	}
}

func (t *TopologyDescription) updateSessionTimeout() {
	var lstm *int64
	seen := false
	for i := range t.Servers {
		s := &t.Servers[i]
		if !s.Type.IsDataBearing() {
			continue
		}
		if s.LogicalSessionTimeoutMinutes == nil {
			t.LogicalSessionTimeoutMinutes = nil
			return
		}
		if !seen || *s.LogicalSessionTimeoutMinutes < *lstm {
			lstm, seen = s.LogicalSessionTimeoutMinutes, true
		}
	}
	t.LogicalSessionTimeoutMinutes = lstm
}

// diff walks two address-sorted server lists at once.
func diff(old, cur TopologyDescription, checkNow []string) Changes {
	c := Changes{CheckNow: checkNow}
	i, j := 0, 0
	for i < len(old.Servers) || j < len(cur.Servers) {
		switch {
		case j == len(cur.Servers) || (i < len(old.Servers) && old.Servers[i].Address < cur.Servers[j].Address):
			c.Removed = append(c.Removed, old.Servers[i].Address)
			i++
		case i == len(old.Servers) || strings.Compare(old.Servers[i].Address, cur.Servers[j].Address) > 0:
			c.Added = append(c.Added, cur.Servers[j].Address)
			j++
		default:
			if !old.Servers[i].Equal(cur.Servers[j]) {
				c.Servers = append(c.Servers, ServerChange{Old: old.Servers[i], New: cur.Servers[j]})
			}
			i++
			j++
		}
	}
	c.TopologyChanged = !old.Equal(cur)
	return c
}
