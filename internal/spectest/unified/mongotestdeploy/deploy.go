// Package mongotestdeploy plays the deployments of the unified test
// runner (package unified) with mongotest servers in this process: a
// standalone, a three-member replica set, a sharded cluster of two mongos
// routers over one store, and a load balancer fronting two services.
//
// A new deployment plugs in as one more case of
// Provider.Start returning a unified.Deployment: its topology name, the
// internal client's URI (one mongos), and ClientURI, which honours
// useMultipleMongoses (false: one mongos, or the balancer fronting a
// single server). Nothing in the runner changes.
package mongotestdeploy

import (
	"errors"

	"fmt"
	"github.com/mongoscope/mongoscope/driver"
	"strings"

	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The credential of a deployment started with authentication.
const (
	User     = "unified-user"
	Password = "pencil-Secret-42"
)

// Provider starts mongotest deployments. The zero value plays every
// topology it knows.
type Provider struct {
	// Only, when set, limits the topologies to these, in this order.
	Only []string
}

var _ unified.Provider = Provider{}

// Topologies implements unified.Provider.
func (p Provider) Topologies() []string {
	if len(p.Only) > 0 {
		return p.Only
	}
	return []string{"single", "replicaset", "sharded", "load-balanced"}
}

// Start implements unified.Provider.
func (p Provider) Start(topology string, auth bool) (unified.Deployment, error) {
	opts := mongotest.Options{Auth: auth}
	d := &deployment{topology: topology}
	if auth {
		d.creds = User + ":" + Password + "@"
		d.params = append(d.params, "authSource=admin")
	}
	addUser := func(s interface {
		AddUser(db, user, pw string, mechs ...string) error
	}) error {
		if !auth {
			return nil
		}
		return s.AddUser("admin", User, Password)
	}
	start := func(o mongotest.Options) (*mongotest.Server, error) {
		s, err := mongotest.Start(o)
		if err != nil {
			return nil, err
		}
		d.closers = append(d.closers, s.Close)
		if err := addUser(s); err != nil {
			return nil, err
		}
		return s, nil
	}
	fail := func(err error) (unified.Deployment, error) {
		d.Close()
		return nil, fmt.Errorf("starting a mongotest %s deployment: %w", topology, err)
	}
	switch topology {
	case "single":
		s, err := start(opts)
		if err != nil {
			return fail(err)
		}
		d.hosts = []string{s.Addr()}
	case "load-balanced":
		// A balancer fronting two services over one store; a client
		// limited to one server (useMultipleMongoses: false) and the
		// internal client reach the first service directly, which plays
		// the balancer fronting a single server.
		lb, err := mongotest.StartLoadBalancer(2, mongotest.LoadBalancerOptions{Options: opts})
		if err != nil {
			return fail(err)
		}
		d.closers = append(d.closers, lb.Close)
		if err := addUser(lb); err != nil {
			return fail(err)
		}
		d.hosts = []string{lb.Addr()}
		d.single = lb.Services()[0].Addr()
		d.params = append(d.params, "loadBalanced=true")
	case "sharded":
		// Two routers over one shared store, as with one shard behind
		// them (listShards describes it as a replica-set shard).
		c, err := mongotest.StartShardedCluster(2, mongotest.ShardedClusterOptions{Options: opts})
		if err != nil {
			return fail(err)
		}
		d.closers = append(d.closers, c.Close)
		if err := addUser(c); err != nil {
			return fail(err)
		}
		for _, m := range c.Mongoses() {
			d.hosts = append(d.hosts, m.Addr())
		}
		d.single = d.hosts[0]
	case "replicaset":
		rs, err := mongotest.StartReplicaSet(3, mongotest.ReplicaSetOptions{Options: opts})
		if err != nil {
			return fail(err)
		}
		d.closers = append(d.closers, rs.Close)
		if err := addUser(rs); err != nil {
			return fail(err)
		}
		for _, m := range rs.Members() {
			d.hosts = append(d.hosts, m.Addr())
		}
		d.params = append(d.params, "replicaSet="+rs.Name())
	default:
		return nil, fmt.Errorf("mongotestdeploy: no deployment plays topology %q", topology)
	}
	return d, nil
}

type deployment struct {
	topology string
	hosts    []string
	single   string   // the one server of useMultipleMongoses: false
	params   []string // the deployment's own URI options
	creds    string   // "user:password@" when authentication is on
	closers  []func()
}

func (d *deployment) Topology() string { return d.topology }

func (d *deployment) uri(hosts []string) string {
	u := "mongodb://" + d.creds + strings.Join(hosts, ",") + "/"
	if len(d.params) > 0 {
		u += "?" + strings.Join(d.params, "&")
	}
	return u
}

func (d *deployment) InternalURI() string {
	if d.single != "" {
		return d.uri([]string{d.single})
	}
	return d.uri(d.hosts[:1])
}

func (d *deployment) ClientURI(multipleMongoses *bool) string {
	if d.single != "" && multipleMongoses != nil && !*multipleMongoses {
		return d.uri([]string{d.single})
	}
	return d.uri(d.hosts)
}

func (d *deployment) Close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
	d.closers = nil
}

// Gap implements unified.GapReporter: mongotest answers what it does not
// implement with NotImplemented (238), never with a wrong answer.
func (Provider) Gap(err error) string {
	const notImplemented = 238
	var ce *driver.CommandError
	if errors.As(err, &ce) && ce.Code == notImplemented {
		return "mongotest does not implement it: " + ce.Message
	}
	var writeErrs []driver.WriteError
	var we *driver.WriteException
	var bwe *driver.BulkWriteException
	switch {
	case errors.As(err, &we):
		writeErrs = we.WriteErrors
	case errors.As(err, &bwe):
		writeErrs = bwe.WriteErrors
	}
	for _, w := range writeErrs {
		if w.Code == notImplemented {
			return "mongotest does not implement it: " + w.Message
		}
	}
	return ""
}
