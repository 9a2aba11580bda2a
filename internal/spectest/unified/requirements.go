package unified

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// requirement is one runOnRequirement object.
type requirement struct {
	minServerVersion, maxServerVersion string
	topologies                         []string
	serverless                         string
	serverParameters                   bson.Raw
	auth                               *bool
	authMechanism                      string
	csfle                              bson.RawValue // absent, a boolean or an object
}

var requirementKeys = []string{"minServerVersion", "maxServerVersion", "topologies", "serverless", "serverParameters", "auth", "authMechanism", "csfle"}

func parseRequirements(v bson.RawValue) ([]requirement, error) {
	if v.IsZero() {
		return nil, nil
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, errors.New("not an array")
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		return nil, errors.New("an empty array")
	}
	var out []requirement
	for i, rv := range vals {
		d, ok := rv.DocumentOK()
		if !ok {
			return nil, fmt.Errorf("%d: not a document", i)
		}
		if err := checkKeys(d, requirementKeys...); err != nil {
			return nil, fmt.Errorf("%d: %w", i, err)
		}
		var r requirement
		r.minServerVersion, _ = d.Lookup("minServerVersion").StringValueOK()
		r.maxServerVersion, _ = d.Lookup("maxServerVersion").StringValueOK()
		r.serverless, _ = d.Lookup("serverless").StringValueOK()
		r.authMechanism, _ = d.Lookup("authMechanism").StringValueOK()
		r.serverParameters, _ = d.Lookup("serverParameters").DocumentOK()
		if b, ok := d.Lookup("auth").BooleanOK(); ok {
			r.auth = &b
		}
		r.csfle = d.Lookup("csfle")
		if t, ok := d.Lookup("topologies").ArrayOK(); ok {
			tv, err := t.Values()
			if err != nil {
				return nil, err
			}
			for _, x := range tv {
				s, _ := x.StringValueOK()
				r.topologies = append(r.topologies, s)
			}
		}
		for _, s := range []string{r.minServerVersion, r.maxServerVersion} {
			if s != "" {
				if _, err := parseVersion(s, true); err != nil {
					return nil, fmt.Errorf("%d: %w", i, err)
				}
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// topologyMatches reports whether a requirement's topology name admits
// the deployment's: "sharded" admits any sharded cluster,
// "sharded-replicaset" only one whose shards are replica sets (checked
// later, against the server).
func topologyMatches(want, have string) bool {
	return want == have || want == "sharded-replicaset" && have == "sharded"
}

// staticallyMet reports whether some requirement can hold on a deployment
// of topology topo with or without authentication, before starting it.
func staticallyMet(reqs []requirement, topo string, auth bool) bool {
	if len(reqs) == 0 {
		return true
	}
	for _, r := range reqs {
		if r.auth != nil && *r.auth != auth {
			continue
		}
		if len(r.topologies) == 0 {
			return true
		}
		for _, t := range r.topologies {
			if topologyMatches(t, topo) {
				return true
			}
		}
	}
	return false
}

// wantsAuth reports whether some requirement asks for authentication:
// only then does the runner start a deployment that requires it.
func wantsAuth(reqs ...[]requirement) bool {
	for _, rs := range reqs {
		for _, r := range rs {
			if r.auth != nil && *r.auth {
				return true
			}
		}
	}
	return false
}

// requirementsMet evaluates reqs against the server under test: "" when
// one of them holds, else why none does. err is a failure to ask.
func (tr *testRun) requirementsMet(reqs []requirement) (string, error) {
	if len(reqs) == 0 {
		return "", nil
	}
	var why []string
	for _, r := range reqs {
		reason, err := tr.requirementMet(r)
		if err != nil {
			return "", err
		}
		if reason == "" {
			return "", nil
		}
		why = append(why, reason)
	}
	return strings.Join(dedupe(why), " / "), nil
}

func (tr *testRun) requirementMet(r requirement) (string, error) {
	info, err := tr.serverInfo()
	if err != nil {
		return "", err
	}
	if r.minServerVersion != "" {
		min, _ := parseVersion(r.minServerVersion, true)
		if info.version.less(min) {
			return fmt.Sprintf("needs server %s or later, the server is %s", r.minServerVersion, info.version), nil
		}
	}
	if r.maxServerVersion != "" {
		max, _ := parseVersion(r.maxServerVersion, true)
		if max.less(info.version) {
			return fmt.Sprintf("needs server %s or earlier, the server is %s", r.maxServerVersion, info.version), nil
		}
	}
	if len(r.topologies) > 0 {
		ok := false
		for _, t := range r.topologies {
			if !topologyMatches(t, info.topology) {
				continue
			}
			if t == "sharded-replicaset" {
				rs, why := tr.shardsAreReplicaSets()
				if !rs {
					return "sharded-replicaset: " + why, nil
				}
			}
			ok = true
		}
		if !ok {
			return fmt.Sprintf("needs topology %s, the deployment is %s", strings.Join(r.topologies, " or "), info.topology), nil
		}
	}
	if r.serverless == "require" {
		return "needs Atlas Serverless", nil
	}
	if r.auth != nil && *r.auth != info.auth {
		if *r.auth {
			return "needs authentication", nil
		}
		return "needs authentication off", nil
	}
	if r.authMechanism != "" {
		mechs, err := tr.parameter("authenticationMechanisms")
		if err != nil {
			return "authMechanism " + r.authMechanism + ": " + err.Error(), nil
		}
		found := false
		if arr, ok := mechs.ArrayOK(); ok {
			vals, _ := arr.Values()
			for _, m := range vals {
				if s, ok := m.StringValueOK(); ok && strings.EqualFold(s, r.authMechanism) {
					found = true
				}
			}
		}
		if !found {
			return "the server does not support authMechanism " + r.authMechanism, nil
		}
	}
	if !r.csfle.IsZero() {
		if b, ok := r.csfle.BooleanOK(); !ok || b {
			return "needs client-side field level encryption, which the driver does not have", nil
		}
	}
	if r.serverParameters != nil {
		elems, err := r.serverParameters.Elements()
		if err != nil {
			return "", err
		}
		for _, e := range elems {
			got, err := tr.parameter(e.Key())
			if err != nil {
				return fmt.Sprintf("server parameter %s: %v", e.Key(), err), nil
			}
			if Match(e.Value(), got, &Options{Top: TopNested}) != nil {
				return fmt.Sprintf("needs server parameter %s = %s, the server has %s", e.Key(), show(e.Value()), show(got)), nil
			}
		}
	}
	return "", nil
}

// serverFacts are what runOnRequirements are checked against, asked of
// the server once per test.
type serverFacts struct {
	version  version
	topology string
	auth     bool
}

func (tr *testRun) serverInfo() (*serverFacts, error) {
	if tr.facts != nil {
		return tr.facts, nil
	}
	c := tr.internal
	reply, err := c.RunCommand(tr.ctx, "admin", bson.D{{Key: "buildInfo", Value: 1}})
	if err != nil {
		return nil, fmt.Errorf("buildInfo: %w", err)
	}
	var f serverFacts
	// "the three elements of the versionArray field MUST be used"
	if arr, ok := reply.Lookup("versionArray").ArrayOK(); ok {
		vals, _ := arr.Values()
		for i := 0; i < 3 && i < len(vals); i++ {
			n, _ := vals[i].AsInt64OK()
			f.version[i] = int(n)
		}
	} else if s, ok := reply.Lookup("version").StringValueOK(); ok {
		f.version, _ = parseVersion(s, false)
	}
	switch kind := c.Topology().Kind; kind {
	case "Single":
		f.topology = "single"
	case "ReplicaSetWithPrimary", "ReplicaSetNoPrimary":
		f.topology = "replicaset"
	case "Sharded":
		f.topology = "sharded"
	case "LoadBalanced":
		f.topology = "load-balanced"
	default:
		return nil, fmt.Errorf("the internal client sees a %s topology", kind)
	}
	if want := tr.dep.Topology(); want != f.topology {
		return nil, fmt.Errorf("the deployment should play %s, but the server looks like %s", want, f.topology)
	}
	st, err := c.RunCommand(tr.ctx, "admin", bson.D{{Key: "connectionStatus", Value: 1}})
	if err != nil {
		return nil, fmt.Errorf("connectionStatus: %w", err)
	}
	if users, ok := st.Lookup("authInfo", "authenticatedUsers").ArrayOK(); ok {
		vals, _ := users.Values()
		f.auth = len(vals) > 0
	}
	tr.facts = &f
	return tr.facts, nil
}

// parameter reads one server parameter with getParameter.
func (tr *testRun) parameter(name string) (bson.RawValue, error) {
	if v, ok := tr.params[name]; ok {
		return v, nil
	}
	reply, err := tr.internal.RunCommand(tr.ctx, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}})
	if err != nil {
		return bson.RawValue{}, fmt.Errorf("getParameter: %w", err)
	}
	v, err := reply.LookupErr(name)
	if err != nil {
		return bson.RawValue{}, fmt.Errorf("getParameter did not return %s", name)
	}
	tr.params[name] = v
	return v, nil
}

// shardsAreReplicaSets asks listShards whether every shard is a replica
// set: its host is "<set name>/<members>".
func (tr *testRun) shardsAreReplicaSets() (bool, string) {
	reply, err := tr.internal.RunCommand(tr.ctx, "admin", bson.D{{Key: "listShards", Value: 1}})
	if err != nil {
		var ce *driver.CommandError
		if errors.As(err, &ce) {
			return false, fmt.Sprintf("cannot tell whether the shards are replica sets: listShards failed with %d (%s)", ce.Code, ce.CodeName)
		}
		return false, "listShards: " + err.Error()
	}
	arr, _ := reply.Lookup("shards").ArrayOK()
	vals, _ := arr.Values()
	for _, s := range vals {
		host, _ := s.Document().Lookup("host").StringValueOK()
		if !strings.Contains(host, "/") {
			return false, "shard " + host + " is not a replica set"
		}
	}
	return len(vals) > 0, "listShards returned no shards"
}

// checkKeys refuses keys of d not in allowed.
func checkKeys(d bson.Raw, allowed ...string) error {
	elems, err := d.Elements()
	if err != nil {
		return err
	}
	for _, e := range elems {
		ok := false
		for _, a := range allowed {
			if e.Key() == a {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("unknown field %q", e.Key())
		}
	}
	return nil
}
