// Package externaldeploy plays the deployments of the unified test runner
// (package unified) with a server that is already running, given by its
// connection string: a real MongoDB-compatible server such as FerretDB.
//
// The server is a standalone without authentication, so the Provider
// plays topology "single" only. It cannot start a fresh server per test:
// it is a unified.SharedServer, so the runner runs the tests one at a
// time and drops the databases each test names before it runs.
package externaldeploy

import (
	"fmt"

	"github.com/mongoscope/mongoscope/internal/spectest/unified"
)

// Provider hands out the one server at URI to every test.
type Provider struct {
	// URI is the server's connection string, e.g. "mongodb://127.0.0.1:27099/".
	URI string
	// Name names the server in messages ("FerretDB").
	Name string
	// Gaps, when set, says why an error shows the server lacking a
	// feature of MongoDB's (unified.GapReporter); the test is then skipped
	// with that reason.
	Gaps func(err error) string
}

var (
	_ unified.Provider     = Provider{}
	_ unified.SharedServer = Provider{}
	_ unified.GapReporter  = Provider{}
)

// Topologies implements unified.Provider: a standalone.
func (p Provider) Topologies() []string { return []string{"single"} }

// SharesServer implements unified.SharedServer.
func (Provider) SharesServer() {}

// Start implements unified.Provider. It starts nothing: every deployment
// is the server at URI. Another topology, or authentication, cannot be
// played (unified.ErrCannotPlay).
func (p Provider) Start(topology string, auth bool) (unified.Deployment, error) {
	if p.URI == "" {
		return nil, fmt.Errorf("externaldeploy: no URI for the %s server", p.name())
	}
	if topology != "single" {
		return nil, fmt.Errorf("%w: the %s server is a standalone, not a %s deployment", unified.ErrCannotPlay, p.name(), topology)
	}
	if auth {
		return nil, fmt.Errorf("%w: the %s server runs without authentication", unified.ErrCannotPlay, p.name())
	}
	return deployment{uri: p.URI}, nil
}

// Gap implements unified.GapReporter with p.Gaps.
func (p Provider) Gap(err error) string {
	if p.Gaps == nil || err == nil {
		return ""
	}
	return p.Gaps(err)
}

func (p Provider) name() string {
	if p.Name == "" {
		return "external"
	}
	return p.Name
}

type deployment struct{ uri string }

func (deployment) Topology() string         { return "single" }
func (d deployment) InternalURI() string    { return d.uri }
func (d deployment) ClientURI(*bool) string { return d.uri }

// Close does nothing: the server outlives the test.
func (deployment) Close() {}
