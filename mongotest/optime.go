package mongotest

import (
	"math"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Time limits and cluster time: maxTimeMS, the cluster clock that writes
// advance, and readConcern afterClusterTime.

// timeArgs are the generic arguments about time, found in one pass over
// a command's top-level fields.
type timeArgs struct {
	maxTimeMS, clusterTime, readConcern bson.RawValue
}

func timeArgsOf(body bson.Raw) timeArgs {
	var a timeArgs
	it := body.Iter()
	for it.Next() {
		switch string(it.KeyBytes()) {
		case "maxTimeMS":
			a.maxTimeMS = it.Value()
		case "$clusterTime":
			a.clusterTime = it.Value()
		case "readConcern":
			a.readConcern = it.Value()
		}
	}
	return a
}

// maxTimeDeadline returns the deadline r's maxTimeMS sets, measured from
// now, or the zero time when there is none (absent or 0). getMore is left
// out: there maxTimeMS is how long an awaitData cursor waits, not a limit.
func maxTimeDeadline(r *Request, v bson.RawValue) (time.Time, error) {
	if r.Name == "getMore" || v.Type == 0 {
		return time.Time{}, nil
	}
	var ms int64
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		ms, _ = v.AsInt64OK()
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return time.Time{}, newError(mongoerr.BadValue, "maxTimeMS has non-integral value")
		}
		if f < 0 || f > math.MaxInt32 {
			return time.Time{}, newError(mongoerr.BadValue, "%v value for maxTimeMS is out of range [0, %d]", f, math.MaxInt32)
		}
		ms = int64(f)
	default:
		return time.Time{}, newError(mongoerr.BadValue, "maxTimeMS must be a number")
	}
	if ms < 0 || ms > math.MaxInt32 {
		return time.Time{}, newError(mongoerr.BadValue, "%d value for maxTimeMS is out of range [0, %d]", ms, math.MaxInt32)
	}
	if ms == 0 {
		return time.Time{}, nil
	}
	return time.Now().Add(time.Duration(ms) * time.Millisecond), nil
}

// writeCommands are the commands that write, so advance the cluster time
// when they succeed; their reply's operationTime is the time of the write.
var writeCommands = map[string]bool{
	"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true,
	"bulkWrite": true, "create": true, "drop": true, "dropDatabase": true, "createIndexes": true,
	"dropIndexes": true, "deleteIndexes": true, "renameCollection": true, "collMod": true,
}

// writes tells whether r writes: a write command, or an aggregate whose
// pipeline ends in $out or $merge.
func writes(r *Request) bool {
	if writeCommands[r.Name] {
		return true
	}
	if r.Name != "aggregate" {
		return false
	}
	p, ok := r.Body.Lookup("pipeline").ArrayOK()
	if !ok {
		return false
	}
	var last bson.RawValue
	it := p.Iter()
	for it.Next() {
		last = it.Value()
	}
	stage, ok := last.DocumentOK()
	if !ok {
		return false
	}
	sit := stage.Iter()
	if !sit.Next() {
		return false
	}
	k := sit.Key()
	return k == "$out" || k == "$merge"
}

// gossips tells whether the server takes part in cluster time: replica-set
// members and mongos, not a standalone.
func (s *Server) gossips() bool {
	role := s.role()
	return role.replicaSet() || role.isRouter()
}

// advanceFrom moves the clock up to the $clusterTime a request carries, as
// mongod's logical clock does with a time it has validated (a deployment
// without keys accepts any).
func (c *clusterClock) advanceFrom(v bson.RawValue) {
	ct, ok := v.DocumentOK()
	if !ok {
		return
	}
	t, i, ok := ct.Lookup("clusterTime").TimestampOK()
	if !ok {
		return
	}
	c.now() // start the clock first, so a gossiped time is not overwritten
	c.mu.Lock()
	defer c.mu.Unlock()
	if t > c.ts.T || (t == c.ts.T && i > c.ts.I) {
		c.ts = bson.Timestamp{T: t, I: i}
	}
}

// checkAfterClusterTime refuses a readConcern afterClusterTime later than
// the cluster time, as mongod does (src/mongo/db/read_concern_mongod.cpp).
// Every write is visible at once, so an earlier time needs no wait.
func (s *Server) checkAfterClusterTime(readConcern bson.RawValue) error {
	rc, ok := readConcern.DocumentOK()
	if !ok {
		return nil
	}
	v, err := rc.LookupErr("afterClusterTime")
	if err != nil {
		return nil
	}
	t, i, ok := v.TimestampOK()
	if !ok {
		return newError(mongoerr.TypeMismatch, "BSON field 'readConcern.afterClusterTime' is the wrong type '%s', expected type 'timestamp'", typeName(v.Type))
	}
	if !s.gossips() {
		return newError(mongoerr.IllegalOperation, "Cannot specify afterClusterTime readConcern without replication enabled")
	}
	now := s.clock.now()
	if t > now.T || (t == now.T && i > now.I) {
		return newError(mongoerr.InvalidOptions, "readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: Timestamp(%d, %d); current clusterTime: Timestamp(%d, %d)", t, i, now.T, now.I)
	}
	return nil
}
