package description

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

func ptr[T any](v T) *T { return &v }

func oid(b byte) *bson.ObjectID {
	var id bson.ObjectID
	id[11] = b
	return &id
}

func reply(t *testing.T, ext string) *handshake.Reply {
	t.Helper()
	doc, err := bson.ParseExtJSON([]byte(ext))
	if err != nil {
		t.Fatal(err)
	}
	r, err := handshake.ParseReply(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestNewServerType(t *testing.T) {
	for _, tc := range []struct {
		hello string
		want  ServerType
	}{
		{`{"ok":1,"isWritablePrimary":true}`, Standalone},
		{`{"ok":1,"ismaster":true,"msg":"isdbgrid"}`, Mongos},
		{`{"ok":1,"isWritablePrimary":true,"setName":"rs"}`, RSPrimary},
		{`{"ok":1,"secondary":true,"setName":"rs"}`, RSSecondary},
		{`{"ok":1,"arbiterOnly":true,"setName":"rs"}`, RSArbiter},
		{`{"ok":1,"secondary":true,"hidden":true,"setName":"rs"}`, RSOther},
		{`{"ok":1,"setName":"rs"}`, RSOther},
		{`{"ok":1,"isreplicaset":true}`, RSGhost},
		{`{"ok":1,"isreplicaset":true,"setName":"rs","secondary":true}`, RSGhost},
	} {
		got := NewServer("a:27017", reply(t, tc.hello), time.Millisecond, time.Time{})
		if got.Type != tc.want {
			t.Errorf("%s: type %s, want %s", tc.hello, got.Type, tc.want)
		}
	}
}

func TestNewServerFields(t *testing.T) {
	now := time.Unix(100, 0)
	s := NewServer("a:27017", reply(t, `{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":3,
		"electionId":{"$oid":"000000000000000000000007"},"me":"A:27017","primary":"A:27017",
		"hosts":["C:27017","a:27017","b","a:27017"],"passives":["P:1"],"arbiters":["[::1]"],
		"tags":{"dc":"east"},"minWireVersion":0,"maxWireVersion":21,"logicalSessionTimeoutMinutes":30,
		"lastWrite":{"lastWriteDate":{"$date":"2024-01-01T00:00:00Z"},"opTime":{"ts":{"$timestamp":{"t":1,"i":2}},"t":{"$numberLong":"5"}}},
		"topologyVersion":{"processId":{"$oid":"000000000000000000000001"},"counter":{"$numberLong":"4"}},
		"iscryptd":true,"helloOk":true,"compression":["zstd"]}`), 7*time.Millisecond, now)
	check := func(name string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s wrong: %+v", name, s)
		}
	}
	check("Address", s.Address == "a:27017")
	check("Type", s.Type == RSPrimary)
	check("RTT", s.RoundTripTime == 7*time.Millisecond)
	check("LastUpdateTime", s.LastUpdateTime.Equal(now))
	check("Me", s.Me == "a:27017")
	check("Primary", s.Primary == "a:27017")
	check("Hosts", strings.Join(s.Hosts, ",") == "a:27017,b:27017,c:27017")
	check("Passives", strings.Join(s.Passives, ",") == "p:1")
	check("Arbiters", strings.Join(s.Arbiters, ",") == "[::1]:27017")
	check("Tags", s.Tags["dc"] == "east")
	check("SetVersion", s.SetVersion != nil && *s.SetVersion == 3)
	check("ElectionID", s.ElectionID != nil && *s.ElectionID == *oid(7))
	check("Wire", s.MinWireVersion == 0 && s.MaxWireVersion == 21)
	check("LSTM", s.LogicalSessionTimeoutMinutes != nil && *s.LogicalSessionTimeoutMinutes == 30)
	check("LastWriteDate", s.LastWriteDate.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	check("OpTime", s.OpTime.Type == bson.TypeEmbeddedDocument && len(s.OpTime.Value) > 5)
	check("TopologyVersion", s.TopologyVersion != nil && s.TopologyVersion.Counter == 4)
	check("IsCryptd", s.IsCryptd)
	check("HelloOK", s.HelloOK)
	check("Compression", len(s.Compression) == 1)

	if u := NewServer("a:1", nil, 0, now); u.Type != Unknown || !errors.Is(u.Error, ErrNoReply) {
		t.Errorf("nil reply: %+v", u)
	}
}

func TestServerEqual(t *testing.T) {
	base := NewServer("a:27017", reply(t, `{"ok":1,"secondary":true,"setName":"rs","hosts":["a:27017","b:27017"],"tags":{"x":"1"}}`), time.Millisecond, time.Unix(1, 0))
	same := NewServer("a:27017", reply(t, `{"ok":1,"secondary":true,"setName":"rs","hosts":["b:27017","a:27017"],"tags":{"x":"1"}}`), 9*time.Millisecond, time.Unix(2, 0))
	if !base.Equal(same) {
		t.Error("RTT, update time and host order must not matter")
	}
	for name, mut := range map[string]func(*ServerDescription){
		"address":  func(s *ServerDescription) { s.Address = "b:27017" },
		"type":     func(s *ServerDescription) { s.Type = RSPrimary },
		"error":    func(s *ServerDescription) { s.Error = errors.New("x") },
		"wire":     func(s *ServerDescription) { s.MaxWireVersion = 9 },
		"me":       func(s *ServerDescription) { s.Me = "x:1" },
		"hosts":    func(s *ServerDescription) { s.Hosts = []string{"a:27017"} },
		"passives": func(s *ServerDescription) { s.Passives = []string{"p:1"} },
		"arbiters": func(s *ServerDescription) { s.Arbiters = []string{"q:1"} },
		"tags":     func(s *ServerDescription) { s.Tags = map[string]string{"x": "2"} },
		"setName":  func(s *ServerDescription) { s.SetName = "other" },
		"setVer":   func(s *ServerDescription) { s.SetVersion = ptr(int64(1)) },
		"election": func(s *ServerDescription) { s.ElectionID = oid(1) },
		"primary":  func(s *ServerDescription) { s.Primary = "b:27017" },
		"lstm":     func(s *ServerDescription) { s.LogicalSessionTimeoutMinutes = ptr(int64(1)) },
		"tv":       func(s *ServerDescription) { s.TopologyVersion = &handshake.TopologyVersion{Counter: 1} },
		"cryptd":   func(s *ServerDescription) { s.IsCryptd = true },
	} {
		m := base
		mut(&m)
		if base.Equal(m) || m.Equal(base) {
			t.Errorf("%s: change not seen by Equal", name)
		}
	}
	if !UnknownServer("a", errors.New("e")).Equal(UnknownServer("a", errors.New("e"))) {
		t.Error("errors with the same message must be equal")
	}
}

func TestCompareTopologyVersion(t *testing.T) {
	p1, p2 := *oid(1), *oid(2)
	tv := func(p bson.ObjectID, c int64) *handshake.TopologyVersion {
		return &handshake.TopologyVersion{ProcessID: p, Counter: c}
	}
	for _, tc := range []struct {
		a, b *handshake.TopologyVersion
		want int
	}{
		{nil, nil, -1},
		{tv(p1, 1), nil, -1},
		{nil, tv(p1, 1), -1},
		{tv(p1, 5), tv(p2, 1), -1},
		{tv(p1, 1), tv(p1, 2), -1},
		{tv(p1, 2), tv(p1, 2), 0},
		{tv(p1, 3), tv(p1, 2), 1},
	} {
		if got := CompareTopologyVersion(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNormalizeAddress(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "",
		"A":                       "a:27017",
		"Host.Example.COM:2000":   "host.example.com:2000",
		"a:":                      "a:27017",
		"[::1]":                   "[::1]:27017",
		"[::1]:5":                 "[::1]:5",
		"::1":                     "[::1]:27017",
		"/tmp/mongodb-27017.sock": "/tmp/mongodb-27017.sock",
	} {
		if got := NormalizeAddress(in); got != want {
			t.Errorf("NormalizeAddress(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewSettings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		s       Settings
		want    TopologyType
		servers string
		field   string // ConfigError.Field, "" for success
	}{
		{"unknown", Settings{Seeds: []string{"B", "a", "a:27017"}}, TopologyUnknown, "a:27017,b:27017", ""},
		{"direct", Settings{Seeds: []string{"a"}, DirectConnection: true}, Single, "a:27017", ""},
		{"direct with set", Settings{Seeds: []string{"a"}, DirectConnection: true, SetName: "rs"}, Single, "a:27017", ""},
		{"replica set", Settings{Seeds: []string{"a", "b"}, SetName: "rs"}, ReplicaSetNoPrimary, "a:27017,b:27017", ""},
		{"load balanced", Settings{Seeds: []string{"lb"}, LoadBalanced: true}, LoadBalanced, "lb:27017", ""},
		{"srv one host", Settings{Seeds: []string{"a"}, SRV: true}, TopologyUnknown, "a:27017", ""},
		{"no seeds", Settings{}, 0, "", "Seeds"},
		{"direct two seeds", Settings{Seeds: []string{"a", "b"}, DirectConnection: true}, 0, "", "DirectConnection"},
		{"direct srv", Settings{Seeds: []string{"a"}, DirectConnection: true, SRV: true}, 0, "", "DirectConnection"},
		{"lb direct", Settings{Seeds: []string{"a"}, LoadBalanced: true, DirectConnection: true}, 0, "", "LoadBalanced"},
		{"lb set", Settings{Seeds: []string{"a"}, LoadBalanced: true, SetName: "rs"}, 0, "", "LoadBalanced"},
		{"lb two seeds", Settings{Seeds: []string{"a", "b"}, LoadBalanced: true}, 0, "", "LoadBalanced"},
	} {
		td, err := New(tc.s)
		if tc.field != "" {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s: err = %v, want a ConfigError for %s", tc.name, err, tc.field)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var addrs []string
		for _, s := range td.Servers {
			addrs = append(addrs, s.Address)
			if s.Type != Unknown {
				t.Errorf("%s: seed %s is %s", tc.name, s.Address, s.Type)
			}
		}
		if td.Type != tc.want || strings.Join(addrs, ",") != tc.servers || td.SetName != tc.s.SetName {
			t.Errorf("%s: %s %v %q, want %s %s", tc.name, td.Type, addrs, td.SetName, tc.want, tc.servers)
		}
	}
}

func mustNew(t testing.TB, s Settings) TopologyDescription {
	t.Helper()
	td, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return td
}

func primary(addr string, election byte, setVersion int64, hosts ...string) ServerDescription {
	return ServerDescription{Address: addr, Type: RSPrimary, SetName: "rs", Me: addr, Hosts: hosts,
		ElectionID: oid(election), SetVersion: ptr(setVersion), MinWireVersion: 0, MaxWireVersion: 21,
		LogicalSessionTimeoutMinutes: ptr(int64(30))}
}

func TestApplyChanges(t *testing.T) {
	td := mustNew(t, Settings{Seeds: []string{"a", "b"}, SetName: "rs"})
	before := td

	// a is primary and lists a and c: b is removed, c added.
	td, ch := td.Apply(primary("a:27017", 1, 1, "a:27017", "c:27017"))
	if td.Type != ReplicaSetWithPrimary || strings.Join(ch.Added, ",") != "c:27017" || strings.Join(ch.Removed, ",") != "b:27017" ||
		len(ch.Servers) != 1 || ch.Servers[0].New.Type != RSPrimary || !ch.TopologyChanged || ch.Ignored {
		t.Fatalf("first primary: %s %+v", td.Type, ch)
	}
	if before.Type != ReplicaSetNoPrimary || len(before.Servers) != 2 || before.Servers[0].Type != Unknown {
		t.Fatal("Apply modified the description it was called on")
	}
	if td.LogicalSessionTimeoutMinutes == nil || *td.LogicalSessionTimeoutMinutes != 30 {
		t.Errorf("logicalSessionTimeoutMinutes = %v", td.LogicalSessionTimeoutMinutes)
	}

	// Same reply again: nothing to publish.
	if _, ch := td.Apply(primary("a:27017", 1, 1, "a:27017", "c:27017")); ch.TopologyChanged || len(ch.Servers) != 0 || ch.Ignored {
		t.Errorf("repeated reply: %+v", ch)
	}

	// c becomes primary with a newer election: a is marked Unknown and
	// needs an immediate check.
	td2, ch := td.Apply(primary("c:27017", 2, 1, "a:27017", "c:27017"))
	a, _ := td2.Server("a:27017")
	var spe *StalePrimaryError
	if a.Type != Unknown || !errors.As(a.Error, &spe) || spe.Mismatch || strings.Join(ch.CheckNow, ",") != "a:27017" || len(ch.Servers) != 2 {
		t.Fatalf("new primary: a=%+v changes=%+v", a, ch)
	}

	// An older election from a is stale: a stays Unknown with the tuple in
	// its error.
	td3, _ := td2.Apply(primary("a:27017", 1, 1, "a:27017", "c:27017"))
	a, _ = td3.Server("a:27017")
	if a.Type != Unknown || !strings.Contains(errorText(a.Error),
		"primary marked stale due to electionId/setVersion mismatch, (electionId: 000000000000000000000001, setVersion: 1) is stale compared to (electionId: 000000000000000000000002, setVersion: 1)") {
		t.Errorf("stale primary: %+v", a)
	}

	// A description for a server not in the topology is ignored.
	if n, ch := td3.Apply(primary("z:27017", 9, 9, "z:27017")); !ch.Ignored || !n.Equal(td3) {
		t.Errorf("unknown address: %+v", ch)
	}
}

func TestApplyPrimaryStepsDown(t *testing.T) {
	td := mustNew(t, Settings{Seeds: []string{"a", "b"}, SetName: "rs"})
	td, _ = td.Apply(primary("a:27017", 1, 1, "a:27017", "b:27017"))
	sec := ServerDescription{Address: "a:27017", Type: RSSecondary, SetName: "rs", Me: "a:27017",
		Hosts: []string{"a:27017", "b:27017"}, Primary: "b:27017", MaxWireVersion: 21}
	n, ch := td.Apply(sec)
	b, _ := n.Server("b:27017")
	// b, Unknown until now, becomes PossiblePrimary: no change under
	// Server Description Equality, so a's change is the only one.
	if n.Type != ReplicaSetNoPrimary || b.Type != PossiblePrimary || len(ch.Servers) != 1 {
		t.Fatalf("step-down: %s, b %s, %+v", n.Type, b.Type, ch)
	}
	// A member with a different "me" is removed while a primary is known.
	td, _ = td.Apply(ServerDescription{Address: "b:27017", Type: RSSecondary, SetName: "rs", Me: "x:27017", MaxWireVersion: 21})
	if _, ok := td.Server("b:27017"); ok || td.Type != ReplicaSetWithPrimary {
		t.Errorf("mismatched me kept: %s %s", addrs(td), td.Type)
	}
}

func TestApplyStaleTopologyVersion(t *testing.T) {
	td := mustNew(t, Settings{Seeds: []string{"a"}, DirectConnection: true})
	tv := func(c int64) *handshake.TopologyVersion {
		return &handshake.TopologyVersion{ProcessID: *oid(1), Counter: c}
	}
	s := ServerDescription{Address: "a:27017", Type: Standalone, MaxWireVersion: 21, TopologyVersion: tv(2)}
	td, _ = td.Apply(s)
	older := s
	older.Type, older.TopologyVersion = Unknown, tv(1)
	if _, ch := td.Apply(older); !ch.Ignored {
		t.Error("older topologyVersion applied")
	}
	equal := s
	equal.RoundTripTime = time.Second
	n, ch := td.Apply(equal)
	if ch.Ignored || ch.TopologyChanged || n.Servers[0].RoundTripTime != time.Second {
		t.Errorf("an equal topologyVersion must replace the description (RTT kept current): %+v", ch)
	}
}

func TestApplySingleSetName(t *testing.T) {
	td := mustNew(t, Settings{Seeds: []string{"a"}, DirectConnection: true, SetName: "rs"})
	n, _ := td.Apply(ServerDescription{Address: "a:27017", Type: RSSecondary, SetName: "other", MaxWireVersion: 21})
	var sne *SetNameError
	if n.Servers[0].Type != Unknown || !errors.As(n.Servers[0].Error, &sne) || sne.Got != "other" || sne.Want != "rs" {
		t.Errorf("wrong set name: %+v", n.Servers[0])
	}
	n, _ = td.Apply(ServerDescription{Address: "a:27017", Type: Standalone, MaxWireVersion: 21})
	if n.Servers[0].Type != Unknown || !strings.Contains(errorText(n.Servers[0].Error), "reports replica set name none") {
		t.Errorf("no set name: %+v", n.Servers[0])
	}
}

func TestCompatibilityErrors(t *testing.T) {
	for _, tc := range []struct {
		min, max int32
		want     string
	}{
		{999, 1000, "Server at a:27017 requires wire version 999, but this version of mongoscope only supports up to 25."},
		{0, 7, "Server at a:27017 reports wire version 7, but this version of mongoscope requires at least 8 (MongoDB 4.2)."},
		{0, 8, ""},
		{25, 30, ""},
	} {
		td := mustNew(t, Settings{Seeds: []string{"a"}, DirectConnection: true})
		td, _ = td.Apply(ServerDescription{Address: "a:27017", Type: Standalone, MinWireVersion: tc.min, MaxWireVersion: tc.max})
		if errorText(td.CompatibilityErr) != tc.want || td.Compatible() != (tc.want == "") {
			t.Errorf("wire %d-%d: %v, want %q", tc.min, tc.max, td.CompatibilityErr, tc.want)
		}
	}
}

func TestHandleError(t *testing.T) {
	tv := func(c int64) *handshake.TopologyVersion {
		return &handshake.TopologyVersion{ProcessID: *oid(1), Counter: c}
	}
	primary := ServerDescription{Address: "a:27017", Type: RSPrimary, TopologyVersion: tv(5)}
	svc := oid(3)
	errX := errors.New("boom")
	for _, tc := range []struct {
		name string
		cur  ServerDescription
		e    ErrorInfo
		want ErrorOutcome // Server is checked for type and topologyVersion only
	}{
		{"check network error on known server", primary, ErrorInfo{Err: errX, Phase: PhaseCheck, Network: true},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, SkipWait: true}},
		{"check timeout interrupts in-use", primary, ErrorInfo{Err: errX, Phase: PhaseCheck, Network: true, Timeout: true},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, InterruptInUse: true, SkipWait: true}},
		{"check command error", UnknownServer("a:27017", nil), ErrorInfo{Err: errX, Phase: PhaseCheck, Code: 1},
			ErrorOutcome{MarkUnknown: true, ClearPool: true}},
		{"stale generation", primary, ErrorInfo{Err: errX, Network: true, Generation: 1, PoolGeneration: 2},
			ErrorOutcome{Stale: true}},
		{"network after handshake", primary, ErrorInfo{Err: errX, Network: true},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, CancelCheck: true}},
		{"timeout after handshake", primary, ErrorInfo{Err: errX, Network: true, Timeout: true}, ErrorOutcome{}},
		{"network while connecting is backpressure", primary, ErrorInfo{Err: errX, Phase: PhaseHandshake, Network: true, SystemOverloaded: true}, ErrorOutcome{}},
		{"network while connecting without the label (DNS)", primary, ErrorInfo{Err: errX, Phase: PhaseHandshake, Network: true},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, CancelCheck: true}},
		{"overloaded label", primary, ErrorInfo{Err: errX, Phase: PhaseAuth, Network: true, SystemOverloaded: true}, ErrorOutcome{}},
		{"network during auth", primary, ErrorInfo{Err: errX, Phase: PhaseAuth, Network: true},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, CancelCheck: true}},
		{"auth failure", primary, ErrorInfo{Err: errX, Phase: PhaseAuth, Code: 18},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, CancelCheck: true}},
		{"other command error", primary, ErrorInfo{Err: errX, Code: 11000}, ErrorOutcome{}},
		{"not writable primary, newer tv", primary, ErrorInfo{Err: errX, Code: 10107, TopologyVersion: tv(6), MaxWireVersion: 21},
			ErrorOutcome{MarkUnknown: true, RequestCheck: true, Server: ServerDescription{TopologyVersion: tv(6)}}},
		{"not writable primary, same tv", primary, ErrorInfo{Err: errX, Code: 10107, TopologyVersion: tv(5), MaxWireVersion: 21},
			ErrorOutcome{Stale: true}},
		{"shutdown clears pool", primary, ErrorInfo{Err: errX, Code: 91, MaxWireVersion: 21},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, RequestCheck: true}},
		{"pre-4.2 state change clears pool", primary, ErrorInfo{Err: errX, Code: 10107, MaxWireVersion: 7},
			ErrorOutcome{MarkUnknown: true, ClearPool: true, RequestCheck: true}},
		{"message without code", primary, ErrorInfo{Err: errX, Message: "not master", MaxWireVersion: 21},
			ErrorOutcome{MarkUnknown: true, RequestCheck: true}},
		{"code wins over message", primary, ErrorInfo{Err: errX, Code: 1, Message: "node is recovering", MaxWireVersion: 21}, ErrorOutcome{}},
		{"lb shutdown clears service", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Code: 91, LoadBalanced: true, ServiceID: svc, MaxWireVersion: 21},
			ErrorOutcome{ClearPool: true, ServiceID: svc}},
		{"lb not writable primary", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Code: 10107, LoadBalanced: true, ServiceID: svc, MaxWireVersion: 21}, ErrorOutcome{}},
		{"lb network", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Network: true, LoadBalanced: true, ServiceID: svc}, ErrorOutcome{ClearPool: true, ServiceID: svc}},
		{"lb auth failure before serviceId", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Phase: PhaseAuth, Code: 18, LoadBalanced: true}, ErrorOutcome{}},
		{"lb network during auth clears the service", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Phase: PhaseAuth, Network: true, LoadBalanced: true, ServiceID: svc}, ErrorOutcome{ClearPool: true, ServiceID: svc}},
		{"lb shutdown error on the initial hello is ignored", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Phase: PhaseHandshake, Code: 11600, LoadBalanced: true, MaxWireVersion: 21}, ErrorOutcome{}},
		{"lb network error on the initial hello is ignored", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Phase: PhaseHandshake, Network: true, LoadBalanced: true}, ErrorOutcome{}},
		{"lb stale service generation", ServerDescription{Address: "a:27017", Type: LoadBalancer},
			ErrorInfo{Err: errX, Network: true, LoadBalanced: true, ServiceID: svc, Generation: 0, PoolGeneration: 1}, ErrorOutcome{Stale: true}},
	} {
		got := HandleError(tc.cur, tc.e)
		gs, ws := got.Server, tc.want.Server
		got.Server, tc.want.Server = ServerDescription{}, ServerDescription{}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if got.MarkUnknown {
			if gs.Type != Unknown || gs.Address != tc.cur.Address || gs.Error != errX || !equalPtr(gs.TopologyVersion, ws.TopologyVersion) {
				t.Errorf("%s: server %+v", tc.name, gs)
			}
		}
	}
}

func TestStateChangeByMessage(t *testing.T) {
	for _, tc := range []struct {
		msg                           string
		recovering, notWritable, both bool
	}{
		{"not master", false, true, true},
		{"not master or secondary", true, false, true},
		{"node is recovering", true, false, true},
		{"blah node is recovering blah", true, false, true},
		{"NOT MASTER", false, false, false},
		{"some other error", false, false, false},
	} {
		if IsRecoveringError(0, tc.msg) != tc.recovering || IsNotWritablePrimaryError(0, tc.msg) != tc.notWritable ||
			IsStateChangeError(0, tc.msg) != tc.both {
			t.Errorf("%q misclassified", tc.msg)
		}
	}
	for code, want := range map[int32]bool{11600: true, 11602: true, 13436: true, 189: true, 91: true, 10107: true, 13435: true, 10058: true, 1: false, 11000: false} {
		if IsStateChangeError(code, "not master") != want {
			t.Errorf("code %d: want %v", code, want)
		}
	}
	if !IsShutdownError(91) || !IsShutdownError(11600) || IsShutdownError(189) {
		t.Error("IsShutdownError")
	}
}

func TestRTTSpec(t *testing.T) {
	tally := spectest.NewTally("server-selection/rtt")
	for _, path := range spectest.Files(t, "*.json", "server-selection", "tests", "rtt") {
		tally.Run(t, strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var tc struct {
				Avg    json.RawMessage `json:"avg_rtt_ms"`
				New    float64         `json:"new_rtt_ms"`
				NewAvg float64         `json:"new_avg_rtt"`
			}
			if err := json.Unmarshal(data, &tc); err != nil {
				t.Fatal(err)
			}
			ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
			var r RTT
			if string(tc.Avg) != `"NULL"` {
				var avg float64
				if err := json.Unmarshal(tc.Avg, &avg); err != nil {
					t.Fatal(err)
				}
				r.Add(ms(avg)) // the first sample becomes the average
			}
			r.Add(ms(tc.New))
			got, ok := r.Average()
			if !ok || math.Abs(float64(got-ms(tc.NewAvg))) > 1 {
				t.Errorf("average = %v, want %v", got, ms(tc.NewAvg))
			}
		})
	}
	tally.Log(t)
}

func TestRTTMinAndReset(t *testing.T) {
	var r RTT
	if _, ok := r.Average(); ok || r.Min() != 0 {
		t.Fatal("empty RTT has values")
	}
	r.Add(5 * time.Millisecond)
	if r.Min() != 0 {
		t.Error("Min must be 0 with one sample")
	}
	r.Add(3 * time.Millisecond)
	if r.Min() != 3*time.Millisecond {
		t.Errorf("Min = %v", r.Min())
	}
	for range 10 { // push the 3ms sample out of the window
		r.Add(8 * time.Millisecond)
	}
	if r.Min() != 8*time.Millisecond {
		t.Errorf("Min after window = %v", r.Min())
	}
	r.Add(-time.Second)
	if r.Min() != 0 {
		t.Errorf("negative sample: Min = %v", r.Min())
	}
	r.Reset()
	r.Add(time.Duration(math.MaxInt64)) // float rounding must not wrap
	if avg, _ := r.Average(); avg != time.Duration(math.MaxInt64) {
		t.Errorf("huge sample: average %v", avg)
	}
	r.Reset()
	if _, ok := r.Average(); ok || r.Min() != 0 {
		t.Error("Reset kept samples")
	}
}

func TestRTTConcurrent(t *testing.T) {
	var r RTT
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				r.Add(time.Duration(i*j) * time.Microsecond)
				r.Min()
				r.Average()
			}
		}()
	}
	wg.Wait()
	if _, ok := r.Average(); !ok {
		t.Error("no average after samples")
	}
}

func TestStrings(t *testing.T) {
	if RSPrimary.String() != "RSPrimary" || ServerType(99).String() != "ServerType(99)" ||
		ReplicaSetWithPrimary.String() != "ReplicaSetWithPrimary" || TopologyUnknown.String() != "Unknown" ||
		TopologyType(99).String() != "TopologyType(99)" {
		t.Error("String forms")
	}
	if !Mongos.IsDataBearing() || RSArbiter.IsDataBearing() || !RSGhost.IsReplicaSetMember() || Mongos.IsReplicaSetMember() {
		t.Error("type predicates")
	}
}

// benchRS is a 7-member replica set with its primary known.
func benchRS(b *testing.B) (TopologyDescription, []ServerDescription) {
	hosts := []string{"m0:27017", "m1:27017", "m2:27017", "m3:27017", "m4:27017", "m5:27017", "m6:27017"}
	td := mustNew(b, Settings{Seeds: hosts[:1], SetName: "rs"})
	var sds []ServerDescription
	for i, h := range hosts {
		s := ServerDescription{Address: h, Type: RSSecondary, SetName: "rs", Me: h, Hosts: hosts, MaxWireVersion: 21,
			Primary: hosts[0], LogicalSessionTimeoutMinutes: ptr(int64(30)), RoundTripTime: time.Millisecond}
		if i == 0 {
			s = primary(h, 1, 1, hosts...)
		}
		sds = append(sds, s)
	}
	for _, s := range sds {
		td, _ = td.Apply(s)
	}
	if td.Type != ReplicaSetWithPrimary || len(td.Servers) != 7 {
		b.Fatalf("setup: %s with %d servers", td.Type, len(td.Servers))
	}
	return td, sds
}

// BenchmarkApply measures one heartbeat's worth of work on a 7-member
// replica set: a description equal to the current one (the common case).
func BenchmarkApply(b *testing.B) {
	td, sds := benchRS(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		td, _ = td.Apply(sds[i%len(sds)])
	}
}

// BenchmarkApplyFailover alternates the primary between two members.
func BenchmarkApplyFailover(b *testing.B) {
	td, sds := benchRS(b)
	p0, p1 := primary("m0:27017", 1, 1, sds[0].Hosts...), primary("m1:27017", 1, 1, sds[0].Hosts...)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := p0
		if i%2 == 1 {
			p = p1
		}
		p.ElectionID = oid(byte(i%250 + 2))
		p.SetVersion = ptr(int64(1))
		p.ElectionID[10] = byte(i / 250 % 256)
		p.ElectionID[9] = byte(i / 64000)
		td, _ = td.Apply(p)
	}
}
