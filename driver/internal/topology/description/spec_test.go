package description

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// The SDAM spec tests: each file's phases feed hello replies and
// application errors to a simulated client (a topology description plus
// one pool generation per server) and check the resulting descriptions or,
// for the monitoring suite, the SDAM events derived from Apply's Changes.

type sdamFile struct {
	Description string      `json:"description"`
	URI         string      `json:"uri"`
	Phases      []sdamPhase `json:"phases"`
}

type sdamPhase struct {
	Description       string             `json:"description"`
	Responses         []json.RawMessage  `json:"responses"`
	ApplicationErrors []applicationError `json:"applicationErrors"`
	Outcome           json.RawMessage    `json:"outcome"`
}

type applicationError struct {
	Address        string          `json:"address"`
	Generation     *uint64         `json:"generation"`
	MaxWireVersion int32           `json:"maxWireVersion"`
	When           string          `json:"when"`
	Type           string          `json:"type"`
	Response       json.RawMessage `json:"response"`
}

// sdamEvent is our form of an SDAM event, made from Apply's results.
type sdamEvent struct {
	kind     string // topology_opening_event, server_opening_event, ...
	address  string
	old, new any // ServerDescription or TopologyDescription
}

// sdamClient is the simulated client.
type sdamClient struct {
	topo   TopologyDescription
	gen    map[string]uint64
	events []sdamEvent
	now    time.Time
}

func newSDAMClient(uri string) (*sdamClient, error) {
	cs, err := connstring.Parse(uri)
	if err != nil {
		return nil, err
	}
	s := Settings{Seeds: cs.Hosts, SetName: cs.ReplicaSet, SRV: cs.Scheme == connstring.SchemeSRV}
	if cs.DirectConnection != nil {
		s.DirectConnection = *cs.DirectConnection
	}
	if cs.LoadBalanced != nil {
		s.LoadBalanced = *cs.LoadBalanced
	}
	td, err := New(s)
	if err != nil {
		return nil, err
	}
	c := &sdamClient{topo: td, gen: map[string]uint64{}, now: time.Unix(1700000000, 0)}
	c.events = append(c.events,
		sdamEvent{kind: "topology_opening_event"},
		sdamEvent{kind: "topology_description_changed_event", old: TopologyDescription{}, new: td})
	for _, sd := range td.Servers {
		c.events = append(c.events, sdamEvent{kind: "server_opening_event", address: sd.Address})
	}
	if td.Type == LoadBalanced {
		c.apply(LoadBalancerServer(td.Servers[0].Address))
	}
	return c, nil
}

// apply updates the topology and records the events a client publishes.
func (c *sdamClient) apply(sd ServerDescription) Changes {
	old := c.topo
	n, ch := c.topo.Apply(sd)
	if ch.Ignored {
		return ch
	}
	c.topo = n
	for _, sc := range ch.Servers {
		c.events = append(c.events, sdamEvent{kind: "server_description_changed_event", address: sc.New.Address, old: sc.Old, new: sc.New})
	}
	for _, a := range ch.Removed {
		delete(c.gen, a) // the pool is closed; a re-added server gets a new one
		c.events = append(c.events, sdamEvent{kind: "server_closed_event", address: a})
	}
	for _, a := range ch.Added {
		c.events = append(c.events, sdamEvent{kind: "server_opening_event", address: a})
	}
	if ch.TopologyChanged {
		c.events = append(c.events, sdamEvent{kind: "topology_description_changed_event", old: old, new: n})
	}
	return ch
}

var errSimulatedNetwork = errors.New("simulated network error")

// response handles one [address, reply] pair as a monitor check would.
func (c *sdamClient) response(raw json.RawMessage) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("bad response %s", raw)
	}
	var addr string
	if err := json.Unmarshal(pair[0], &addr); err != nil {
		return err
	}
	c.now = c.now.Add(time.Second)
	doc, err := bson.ParseExtJSON(pair[1])
	if err != nil {
		return err
	}
	var checkErr ErrorInfo
	switch ok, _ := doc.Lookup("ok").AsFloat64OK(); {
	case len(doc) <= 5: // {}: the check failed with a network error
		checkErr = ErrorInfo{Err: errSimulatedNetwork, Phase: PhaseCheck, Network: true}
	case ok != 1:
		checkErr = ErrorInfo{Err: fmt.Errorf("hello failed: %s", doc), Phase: PhaseCheck}
	default:
		reply, err := handshake.ParseReply(doc)
		if err != nil {
			return err
		}
		c.apply(NewServer(addr, &reply, 5*time.Millisecond, c.now))
		return nil
	}
	cur, ok := c.topo.Server(addr)
	if !ok {
		return nil
	}
	out := HandleError(cur, checkErr)
	if out.MarkUnknown {
		c.apply(out.Server)
	}
	if out.ClearPool {
		if _, still := c.topo.Server(addr); still {
			c.gen[addr]++
		}
	}
	return nil
}

func (c *sdamClient) applicationError(ae applicationError) error {
	cur, ok := c.topo.Server(ae.Address)
	if !ok {
		return nil
	}
	info := ErrorInfo{
		PoolGeneration: c.gen[ae.Address],
		Generation:     c.gen[ae.Address],
		MaxWireVersion: ae.MaxWireVersion,
		LoadBalanced:   c.topo.Type == LoadBalanced,
	}
	if ae.Generation != nil {
		info.Generation = *ae.Generation
	}
	switch ae.When {
	case "beforeHandshakeCompletes":
		info.Phase = PhaseHandshake
	case "afterHandshakeCompletes":
		info.Phase = PhaseOperation
	default:
		return fmt.Errorf("unknown when %q", ae.When)
	}
	switch ae.Type {
	case "network":
		info.Network, info.Err = true, errSimulatedNetwork
		// The connection labels a network error or timeout before the
		// handshake completes SystemOverloadedError (CMAP backpressure).
		info.SystemOverloaded = info.Phase == PhaseHandshake
	case "timeout":
		info.Network, info.Timeout, info.Err = true, true, errors.New("simulated timeout")
		info.SystemOverloaded = info.Phase == PhaseHandshake
	case "command":
		doc, err := bson.ParseExtJSON(ae.Response)
		if err != nil {
			return err
		}
		src := doc
		if okv, _ := doc.Lookup("ok").AsFloat64OK(); okv == 1 {
			wce, isDoc := doc.Lookup("writeConcernError").DocumentOK()
			if !isDoc {
				return nil // writeErrors are never checked
			}
			src = wce
		}
		code, _ := src.Lookup("code").AsInt64OK()
		msg, _ := src.Lookup("errmsg").StringValueOK()
		info.Code, info.Message = int32(code), msg
		info.Err = fmt.Errorf("command failed: %s", msg)
		reply, err := handshake.ParseReply(doc)
		if err != nil {
			return err
		}
		info.TopologyVersion = reply.TopologyVersion
	default:
		return fmt.Errorf("unknown error type %q", ae.Type)
	}
	out := HandleError(cur, info)
	if out.MarkUnknown {
		c.apply(out.Server)
	}
	if out.ClearPool {
		c.gen[ae.Address]++
	}
	return nil
}

func TestSDAMSpec(t *testing.T) {
	total := spectest.NewTally("server-discovery-and-monitoring")
	for _, suite := range []string{"single", "rs", "sharded", "load-balanced", "errors", "monitoring"} {
		tally := spectest.NewTally("server-discovery-and-monitoring/" + suite)
		for _, path := range spectest.Files(t, "*.json", "server-discovery-and-monitoring", "tests", suite) {
			tally.Run(t, suite+"/"+strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
				runSDAMFile(t, path, suite == "monitoring")
			})
		}
		tally.Log(t)
		total.Add(tally)
	}
	total.Log(t)
}

func runSDAMFile(t *testing.T, path string, monitoring bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f sdamFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	c, err := newSDAMClient(f.URI)
	if err != nil {
		t.Fatalf("%s: %v", f.URI, err)
	}
	for pi, p := range f.Phases {
		for _, r := range p.Responses {
			if err := c.response(r); err != nil {
				t.Fatalf("phase %d: %v", pi, err)
			}
		}
		for _, ae := range p.ApplicationErrors {
			if err := c.applicationError(ae); err != nil {
				t.Fatalf("phase %d: %v", pi, err)
			}
		}
		where := fmt.Sprintf("phase %d (%s)", pi, p.Description)
		if monitoring {
			checkEvents(t, where, c.events, p.Outcome)
			c.events = nil
		} else {
			checkOutcome(t, where, c, p.Outcome)
		}
	}
}

// present reports a field that is in the outcome, null or not.
func present(m map[string]json.RawMessage, k string) (json.RawMessage, bool) {
	v, ok := m[k]
	return v, ok
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

func checkOutcome(t *testing.T, where string, c *sdamClient, raw json.RawMessage) {
	t.Helper()
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	td := c.topo
	if v, ok := present(o, "topologyType"); ok {
		var want string
		_ = json.Unmarshal(v, &want)
		if td.Type.String() != want {
			t.Errorf("%s: topologyType = %s, want %s", where, td.Type, want)
		}
	}
	if v, ok := present(o, "setName"); ok {
		checkString(t, where+": setName", td.SetName, v)
	}
	if v, ok := present(o, "logicalSessionTimeoutMinutes"); ok {
		checkInt(t, where+": logicalSessionTimeoutMinutes", td.LogicalSessionTimeoutMinutes, v)
	}
	if v, ok := present(o, "maxSetVersion"); ok {
		checkInt(t, where+": maxSetVersion", td.MaxSetVersion, v)
	}
	if v, ok := present(o, "maxElectionId"); ok {
		checkOID(t, where+": maxElectionId", td.MaxElectionID, v)
	}
	if v, ok := present(o, "compatible"); ok {
		var want bool
		_ = json.Unmarshal(v, &want)
		if td.Compatible() != want {
			t.Errorf("%s: compatible = %v (%v), want %v", where, td.Compatible(), td.CompatibilityErr, want)
		}
	}
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(o["servers"], &servers); err != nil {
		t.Fatalf("%s: servers: %v", where, err)
	}
	var got, want []string
	for _, s := range td.Servers {
		got = append(got, s.Address)
	}
	for a := range servers {
		want = append(want, a)
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: servers %v, want %v", where, got, want)
	}
	for addr, so := range servers {
		sd, _ := td.Server(addr)
		w := where + ": " + addr
		var typ string
		_ = json.Unmarshal(so["type"], &typ)
		if sd.Type.String() != typ {
			t.Errorf("%s: type = %s (error %v), want %s", w, sd.Type, sd.Error, typ)
		}
		if v, ok := present(so, "error"); ok {
			var sub string
			_ = json.Unmarshal(v, &sub)
			if sd.Error == nil || !strings.Contains(sd.Error.Error(), sub) {
				t.Errorf("%s: error = %v, want it to contain %q", w, sd.Error, sub)
			}
		}
		if v, ok := present(so, "setName"); ok {
			checkString(t, w+": setName", sd.SetName, v)
		}
		if v, ok := present(so, "setVersion"); ok {
			checkInt(t, w+": setVersion", sd.SetVersion, v)
		}
		if v, ok := present(so, "electionId"); ok {
			checkOID(t, w+": electionId", sd.ElectionID, v)
		}
		if v, ok := present(so, "logicalSessionTimeoutMinutes"); ok {
			checkInt(t, w+": logicalSessionTimeoutMinutes", sd.LogicalSessionTimeoutMinutes, v)
		}
		for _, f := range []struct {
			name string
			got  int32
		}{{"minWireVersion", sd.MinWireVersion}, {"maxWireVersion", sd.MaxWireVersion}} {
			if v, ok := present(so, f.name); ok {
				// null is the default, which is 0.
				g := int64(f.got)
				if isNull(v) && g == 0 {
					continue
				}
				checkInt(t, w+": "+f.name, &g, v)
			}
		}
		if v, ok := present(so, "topologyVersion"); ok {
			checkTopologyVersion(t, w+": topologyVersion", sd.TopologyVersion, v)
		}
		if v, ok := present(so, "pool"); ok {
			var pool struct {
				Generation uint64 `json:"generation"`
			}
			_ = json.Unmarshal(v, &pool)
			if c.gen[addr] != pool.Generation {
				t.Errorf("%s: pool generation = %d, want %d", w, c.gen[addr], pool.Generation)
			}
		}
	}
}

func checkString(t *testing.T, what, got string, v json.RawMessage) {
	t.Helper()
	var want string
	if !isNull(v) {
		_ = json.Unmarshal(v, &want)
	}
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func checkInt(t *testing.T, what string, got *int64, v json.RawMessage) {
	t.Helper()
	if isNull(v) {
		if got != nil {
			t.Errorf("%s = %d, want null", what, *got)
		}
		return
	}
	var want int64
	if err := json.Unmarshal(v, &want); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got == nil || *got != want {
		t.Errorf("%s = %v, want %d", what, fmtPtr(got), want)
	}
}

func fmtPtr[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func checkOID(t *testing.T, what string, got *bson.ObjectID, v json.RawMessage) {
	t.Helper()
	if isNull(v) {
		if got != nil {
			t.Errorf("%s = %s, want null", what, got.Hex())
		}
		return
	}
	var o struct {
		OID string `json:"$oid"`
	}
	if err := json.Unmarshal(v, &o); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got == nil || got.Hex() != o.OID {
		t.Errorf("%s = %v, want %s", what, fmtPtr(got), o.OID)
	}
}

func checkTopologyVersion(t *testing.T, what string, got *handshake.TopologyVersion, v json.RawMessage) {
	t.Helper()
	if isNull(v) {
		if got != nil {
			t.Errorf("%s = %+v, want null", what, *got)
		}
		return
	}
	doc, err := bson.ParseExtJSON([]byte(`{"topologyVersion":` + string(v) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := handshake.ParseReply(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || r.TopologyVersion == nil || *got != *r.TopologyVersion {
		t.Errorf("%s = %v, want %+v", what, fmtPtr(got), *r.TopologyVersion)
	}
}

// Monitoring outcomes.

type wantServer struct {
	Address  string   `json:"address"`
	Type     string   `json:"type"`
	Hosts    []string `json:"hosts"`
	Passives []string `json:"passives"`
	Arbiters []string `json:"arbiters"`
}

type wantTopology struct {
	TopologyType string       `json:"topologyType"`
	Servers      []wantServer `json:"servers"`
}

func checkEvents(t *testing.T, where string, got []sdamEvent, raw json.RawMessage) {
	t.Helper()
	var o struct {
		Events []map[string]json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(o.Events) {
		var kinds []string
		for _, e := range got {
			kinds = append(kinds, e.kind+" "+e.address)
		}
		t.Fatalf("%s: %d events %v, want %d", where, len(got), kinds, len(o.Events))
	}
	for i, we := range o.Events {
		g := got[i]
		for kind, body := range we {
			w := fmt.Sprintf("%s: event %d", where, i)
			if kind != g.kind {
				t.Errorf("%s: got %s, want %s", w, g.kind, kind)
				continue
			}
			var b struct {
				Address  string          `json:"address"`
				Previous json.RawMessage `json:"previousDescription"`
				New      json.RawMessage `json:"newDescription"`
			}
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatal(err)
			}
			if b.Address != g.address {
				t.Errorf("%s: address %q, want %q", w, g.address, b.Address)
			}
			switch kind {
			case "server_description_changed_event":
				checkServerEvent(t, w+" previous", g.old.(ServerDescription), b.Previous)
				checkServerEvent(t, w+" new", g.new.(ServerDescription), b.New)
			case "topology_description_changed_event":
				checkTopologyEvent(t, w+" previous", g.old.(TopologyDescription), b.Previous)
				checkTopologyEvent(t, w+" new", g.new.(TopologyDescription), b.New)
			}
		}
	}
}

func checkServerEvent(t *testing.T, what string, sd ServerDescription, raw json.RawMessage) {
	t.Helper()
	var w wantServer
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	if sd.Address != w.Address || sd.Type.String() != w.Type ||
		!sameSet(sd.Hosts, w.Hosts) || !sameSet(sd.Passives, w.Passives) || !sameSet(sd.Arbiters, w.Arbiters) {
		t.Errorf("%s: server %s %s hosts=%v passives=%v arbiters=%v, want %+v",
			what, sd.Address, sd.Type, sd.Hosts, sd.Passives, sd.Arbiters, w)
	}
}

func checkTopologyEvent(t *testing.T, what string, td TopologyDescription, raw json.RawMessage) {
	t.Helper()
	var w wantTopology
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	if td.Type.String() != w.TopologyType {
		t.Errorf("%s: topologyType %s, want %s", what, td.Type, w.TopologyType)
	}
	if len(td.Servers) != len(w.Servers) {
		t.Errorf("%s: %d servers, want %d", what, len(td.Servers), len(w.Servers))
		return
	}
	for _, ws := range w.Servers {
		sd, ok := td.Server(ws.Address)
		if !ok {
			t.Errorf("%s: no server %s", what, ws.Address)
			continue
		}
		b, _ := json.Marshal(ws)
		checkServerEvent(t, what, sd, b)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
