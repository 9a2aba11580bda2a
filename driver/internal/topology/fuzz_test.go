package topology

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// FuzzErrorInfo feeds arbitrary error replies to the conversion the error
// rules read: it must never panic, and a topologyVersion it finds must be
// the one the reply holds.
func FuzzErrorInfo(f *testing.F) {
	doc := func(build func([]byte) []byte) []byte {
		start, dst := bson.AppendDocumentStart(nil)
		dst = build(dst)
		dst, _ = bson.AppendDocumentEnd(dst, start)
		return dst
	}
	tv := doc(func(d []byte) []byte {
		d = bson.AppendObjectIDElement(d, "processId", bson.ObjectID{1, 2, 3})
		return bson.AppendInt64Element(d, "counter", 7)
	})
	f.Add(doc(func(d []byte) []byte {
		d = bson.AppendInt32Element(d, "ok", 0)
		d = bson.AppendInt32Element(d, "code", 91)
		return bson.AppendDocumentElement(d, "topologyVersion", tv)
	}))
	f.Add(doc(func(d []byte) []byte { return bson.AppendDocumentElement(d, "topologyVersion", []byte{5, 0, 0, 0, 0}) }))
	f.Add(doc(func(d []byte) []byte { return bson.AppendInt32Element(d, "topologyVersion", 1) }))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 3})
	f.Fuzz(func(t *testing.T, raw []byte) {
		info := errorInfo(&conn.CommandError{Code: 91, Message: "x", Raw: bson.Raw(raw)})
		if info.Code != 91 || info.Network {
			t.Fatalf("info %+v", info)
		}
		if info.TopologyVersion == nil {
			return
		}
		got, ok := bson.Raw(raw).Lookup("topologyVersion", "counter").AsInt64OK()
		if !ok || got != info.TopologyVersion.Counter {
			t.Fatalf("counter %d, reply has %d (%v)", info.TopologyVersion.Counter, got, ok)
		}
	})
}

func TestErrorInfo(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		network    bool
		code       int32
		overloaded bool
	}{
		{"network", &conn.NetworkError{Op: "read", Address: "a:1"}, true, 0, false},
		{"wrapped network", &conn.HandshakeError{Address: "a:1", Stage: "hello", Err: &conn.NetworkError{Op: "read"}}, true, 0, false},
		{"command", &conn.CommandError{Code: 10107, Message: "not primary"}, false, 10107, false},
		{"overloaded", &conn.CommandError{Code: 462, Labels: []string{"SystemOverloadedError"}}, false, 462, true},
		{"write concern", &conn.WriteConcernError{Code: 91, Labels: []string{"SystemOverloadedError"}}, false, 91, true},
	}
	for _, tt := range tests {
		info := errorInfo(tt.err)
		if info.Network != tt.network || info.Code != tt.code || info.SystemOverloaded != tt.overloaded || info.Err != tt.err {
			t.Errorf("%s: %+v", tt.name, info)
		}
	}
}

func TestPoolReady(t *testing.T) {
	tests := []struct {
		st    description.ServerType
		tt    description.TopologyType
		ready bool
	}{
		{description.RSPrimary, description.ReplicaSetWithPrimary, true},
		{description.RSSecondary, description.ReplicaSetNoPrimary, true},
		{description.Standalone, description.Single, true},
		{description.Mongos, description.Sharded, true},
		{description.LoadBalancer, description.LoadBalanced, true},
		{description.RSArbiter, description.ReplicaSetWithPrimary, false},
		{description.RSArbiter, description.Single, true},
		{description.RSGhost, description.Single, true},
		{description.Unknown, description.Single, false},
		{description.Unknown, description.ReplicaSetNoPrimary, false},
	}
	for _, tt := range tests {
		if got := poolReady(tt.st, tt.tt); got != tt.ready {
			t.Errorf("poolReady(%v, %v) = %v, want %v", tt.st, tt.tt, got, tt.ready)
		}
	}
}
