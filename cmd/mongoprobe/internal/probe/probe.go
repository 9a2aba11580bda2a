// Package probe runs mongoprobe's probes against one cluster through the
// mongoscope driver, tracks the cluster's members from the driver's SDAM
// events, and exports both as Prometheus metrics. internal/app runs one
// Cluster per configured cluster.
package probe

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/mongoscope/mongoscope/driver"
)

// The probes.
const (
	ProbePing  = "ping"  // ping on every member, through a direct connection to it
	ProbeRead  = "read"  // findOne on the canary collection, per read preference
	ProbeWrite = "write" // an upsert of one of the canary's fixed keys, on the primary
)

// The error classes of a failed probe (Result.Class).
const (
	ClassNetwork    = "network"     // a network error (driver.IsNetworkError)
	ClassTimeout    = "timeout"     // the probe's timeoutMS ran out; Result.TimeoutStage says where
	ClassNotPrimary = "not_primary" // NotWritablePrimary, NotPrimaryNoSecondaryOk, ... (the "not primary" codes)
	ClassAuth       = "auth"        // authentication failed (a *driver.AuthError)
	ClassServer     = "server"      // any other server error; Result.Code holds its code
	ClassClient     = "client"      // anything else (a closed client, a bad option)
)

// ReadPreference is one canary read's read preference and its label.
type ReadPreference struct {
	// Name labels the probe (target="..."); "" means Pref.Mode.
	Name string
	Pref driver.ReadPreference
}

// Settings are one cluster's settings.
type Settings struct {
	// Name is the cluster's label (cluster="...").
	Name string
	// Client is the driver's options from the cluster's URI (ApplyURI
	// done, no monitors): the Cluster adds its own and never shares them.
	Client *driver.ClientOptions
	// Interval is the time between two rounds.
	Interval time.Duration
	// PingTimeout, ReadTimeout and WriteTimeout are each probe's
	// timeoutMS.
	PingTimeout, ReadTimeout, WriteTimeout time.Duration
	// Database and Collection name the canary collection; CanaryKeys is
	// how many fixed keys the write probe rewrites in turn (the
	// collection never holds more documents than that).
	Database, Collection string
	CanaryKeys           int
	// ReadPreferences are the canary read's; empty means primary only.
	ReadPreferences []ReadPreference
	// WriteConcern is the canary write's; nil means w:majority.
	WriteConcern *driver.WriteConcern
	// Scheduled clusters are probed every Interval by Run; the others
	// only on demand (Round, from /probe?target= or check).
	Scheduled bool
}

// Deps are what a Cluster reports to.
type Deps struct {
	// OnRound, when set, is called with each round once it is recorded
	// (scheduled and on-demand ones), on the goroutine that ran it.
	OnRound func(Round)
	Logger  *slog.Logger
	// Registerer takes mongoprobe's metrics and the driver's own
	// (telemetry/metrics), labelled cluster="<name>".
	Registerer prometheus.Registerer
	// TracerProvider makes the rounds' and the driver's spans; nil
	// means no spans.
	TracerProvider trace.TracerProvider
}

// Result is one probe's outcome.
type Result struct {
	Cluster string
	Probe   string // ProbePing, ProbeRead or ProbeWrite
	// Target is the member's address (ping), the read preference's name
	// (read) or "primary" (write). When the main client could not be
	// made (driver.Connect refused the options), the round holds one
	// ping whose target is "client", and every probe fails with
	// ClassClient.
	Target   string
	Start    time.Time
	Duration time.Duration
	// Err is nil on success. Class, Code and TimeoutStage describe it.
	Err          error
	Class        string
	Code         int32
	TimeoutStage string
	// Member is the address of the server that answered the last
	// attempt ("" when none did).
	Member string
	// Retries is how many times the driver retried the operation.
	Retries int
	// Timeout is the probe's budget: its timeoutMS, or less when the
	// round's context had an earlier deadline. Overshoot, set when Class
	// is ClassTimeout, is Duration - Timeout: how late the probe returned
	// (negative when the driver gave up early, as at before_send).
	Timeout   time.Duration
	Overshoot time.Duration
}

// Round is one run of every probe of a cluster.
type Round struct {
	Cluster  string
	Start    time.Time
	Duration time.Duration
	Results  []Result
	// Up tells whether some member answered: a ping or a canary read
	// succeeded.
	Up bool
}

// OK tells whether every probe of the round succeeded.
func (r Round) OK() bool {
	for _, res := range r.Results {
		if res.Err != nil {
			return false
		}
	}
	return len(r.Results) > 0
}

// Member is one member as the driver's SDAM events show it.
type Member struct {
	Address string
	Type    string // the SDAM server type: RSPrimary, RSSecondary, Unknown...
	RTT     time.Duration
	Error   string // why the member is Unknown, when it is
}

// Status is the cluster's state now.
type Status struct {
	Cluster  string
	Topology string // the SDAM topology type
	Members  []Member
	Primary  string // "" when no writable primary is known
	// PrimaryChanges counts the times a new primary was seen.
	PrimaryChanges int64
	// NoPrimarySince is when the cluster last lost its writable primary;
	// zero while it has one.
	NoPrimarySince time.Time
	// NoPrimaryTotal is the total time without a writable primary since
	// the start, the current window included.
	NoPrimaryTotal time.Duration
	LastRound      *Round
}
