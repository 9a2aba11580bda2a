package unified

import "errors"

// Deployment is one running deployment a test runs against: what the
// runner needs to connect its internal client and the client entities.
// Implementations live outside this package (mongotestdeploy plays them
// with mongotest, externaldeploy with a running server given by URI), so that a sharded cluster or a real server plugs in
// without touching the runner.
type Deployment interface {
	// Topology is the topology the deployment plays: "single",
	// "replicaset", "sharded" or "load-balanced". The runner checks it
	// against the server's own answer before evaluating runOnRequirements.
	Topology() string
	// InternalURI is the connection string of the runner's internal
	// client. On a sharded cluster it names one mongos, as the format asks
	// for initialData.
	InternalURI() string
	// ClientURI is the connection string of a client entity before its
	// uriOptions are applied. multipleMongoses is the entity's
	// useMultipleMongoses (nil when unset): on a sharded cluster false
	// means one mongos and true every mongos; behind a load balancer false
	// means the balancer fronting one server. Other topologies ignore it.
	ClientURI(multipleMongoses *bool) string
	// Close stops the deployment and waits for it.
	Close()
}

// Provider starts deployments. Each test gets a fresh one, so no state
// passes from one test to the next; a SharedServer instead has the runner
// clean the one server before each test.
type Provider interface {
	// Topologies are the topologies Start can play, in the order the
	// runner tries them when a test accepts several.
	Topologies() []string
	// Start starts a deployment playing topology; with auth set, it
	// requires authentication and its URIs carry the credential.
	Start(topology string, auth bool) (Deployment, error)
}

// GapReporter is implemented by a Provider whose deployments lack some of
// a real server's features. When an operation or a setup step fails with
// an error for which Gap returns a reason, the test is skipped with that
// reason: the server could not play its part, so the test says nothing
// about the driver.
type GapReporter interface {
	Gap(err error) string
}

// SharedServer is implemented by a Provider whose deployments are one
// long-lived server that outlives the tests (package externaldeploy: a
// server given by URI). Start cannot give a test a fresh server, so the
// runner runs such a suite's tests one at a time and, before each, drops
// every database the test file names (its database entities, initialData
// and outcome), never admin, config or local.
type SharedServer interface {
	SharesServer()
}

// ErrCannotPlay is wrapped by a Provider's Start error when it cannot
// play the topology or authentication setting asked for at all (an
// external server is what it is). The runner reads it as a requirement
// that cannot be met, not as a failure.
var ErrCannotPlay = errors.New("the provider cannot play this deployment")
