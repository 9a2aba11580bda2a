package topology

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// SRVPollError is what a rescan of the SRV records reports instead of
// failing (Polling SRV Records for Mongos Discovery): a rescan that left
// the host list as it was, or one record the rescan skipped.
type SRVPollError struct {
	// Name is the DNS name queried, "_{srvServiceName}._tcp.{SRVHost}".
	Name string
	// Target is the skipped record's "target:port" as DNS returned it; ""
	// when the whole rescan was unusable.
	Target string
	// Reason says what was wrong; Err is the resolver's error, if any.
	Reason string
	Err    error
}

// Error formats e as "topology: SRV rescan of <name>: [record <target>: ]
// <reason>[: <err>]".
func (e *SRVPollError) Error() string {
	var b strings.Builder
	b.WriteString("topology: SRV rescan of ")
	b.WriteString(e.Name)
	b.WriteString(": ")
	if e.Target != "" {
		b.WriteString("record ")
		b.WriteString(strconv.Quote(e.Target))
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the resolver's error.
func (e *SRVPollError) Unwrap() error { return e.Err }

// srvPollable reports whether a topology of type tt takes SRV rescans: the
// specification limits them to Sharded and Unknown topologies.
func srvPollable(tt description.TopologyType) bool {
	return tt == description.TopologyUnknown || tt == description.Sharded
}

// pollSRV rescans the SRV records every RescanSRVInterval, counted from
// the end of the previous rescan (the first from Connect, which follows
// the initial lookup), until Close or until the topology becomes a type
// that is never rescanned. It runs on its own goroutine so that DNS never
// blocks monitors or selections.
func (t *Topology) pollSRV() {
	defer t.bg.Done()
	timer := time.NewTimer(t.cfg.RescanSRVInterval)
	defer timer.Stop()
	for {
		select {
		case <-t.closing.Done():
			return
		case <-timer.C:
		}
		if !srvPollable(t.Description().Type) {
			return
		}
		wait := t.cfg.RescanSRVInterval
		if hosts := t.rescanSRV(); len(hosts) == 0 {
			// The specification's fallback until a rescan finds a
			// usable record again.
			wait = t.cfg.HeartbeatFrequency
		} else if !t.applySRV(hosts) {
			return
		}
		timer.Reset(wait)
	}
}

// rescanSRV queries the SRV records and returns the usable hosts as
// "host:port", reporting each record it skips; nil means the host list
// must stay as it is. The query is bounded by ConnectTimeout and by Close.
func (t *Topology) rescanSRV() []string {
	name := "_" + t.cfg.SRVServiceName + "._tcp." + t.cfg.SRVHost
	ctx, cancel := context.WithTimeout(t.closing, t.cfg.lookupTimeout())
	defer cancel()
	var r connstring.Resolver = net.DefaultResolver
	if t.cfg.Resolver != nil {
		r = t.cfg.Resolver
	}
	_, recs, err := r.LookupSRV(ctx, t.cfg.SRVServiceName, "tcp", t.cfg.SRVHost)
	if t.closing.Err() != nil {
		return nil
	}
	if err != nil {
		// A partial answer is not used either: any DNS error leaves the
		// topology alone.
		t.reportSRV(&SRVPollError{Name: name, Reason: "SRV lookup failed", Err: err})
		return nil
	}
	hosts, skipped := srvHosts(t.cfg.SRVHost, recs)
	for _, e := range skipped {
		e.Name = name
		t.reportSRV(e)
	}
	if len(hosts) == 0 {
		t.reportSRV(&SRVPollError{Name: name, Reason: "no usable SRV records; the host list is unchanged"})
	}
	return hosts
}

// srvHosts returns the records' targets that may join the topology of the
// mongodb+srv host srvHost, as lower-case "host:port" in DNS order (the
// specification ignores priority and weight), and the records it skipped:
// a target outside srvHost's domain (connstring.CheckSRVTarget) or port 0.
// Unlike the initial lookup, a bad record does not spoil the others.
func srvHosts(srvHost string, recs []*net.SRV) ([]string, []*SRVPollError) {
	var hosts []string
	var skipped []*SRVPollError
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		port := strconv.Itoa(int(rec.Port))
		if err := connstring.CheckSRVTarget(srvHost, rec.Target); err != nil {
			skipped = append(skipped, &SRVPollError{Target: net.JoinHostPort(rec.Target, port), Reason: err.Error()})
			continue
		}
		if rec.Port == 0 {
			skipped = append(skipped, &SRVPollError{Target: net.JoinHostPort(rec.Target, port), Reason: "port 0"})
			continue
		}
		host := strings.TrimSuffix(strings.ToLower(rec.Target), ".")
		hosts = append(hosts, net.JoinHostPort(host, port))
	}
	return hosts, skipped
}

// applySRV replaces the host list with hosts (see
// description.TopologyDescription.ApplySRV): removed servers stop and new
// ones start, with their events, through the same path as a monitor's
// update. It returns false once rescans must end: the topology is closed
// or of a type that is never rescanned.
func (t *Topology) applySRV(hosts []string) bool {
	t.publishMu.Lock()
	defer t.publishMu.Unlock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	prev := t.desc
	next, ch := prev.ApplySRV(hosts, t.cfg.SRVMaxHosts, nil)
	if ch.Ignored || !ch.TopologyChanged {
		t.mu.Unlock()
		return srvPollable(prev.Type)
	}
	t.desc = next
	evs := t.commitLocked(prev, next, ch)
	removed := t.takeRemoved()
	t.mu.Unlock()
	t.finishApply(evs, removed)
	return true
}

func (t *Topology) reportSRV(err *SRVPollError) {
	if t.cfg.OnSRVPollError != nil {
		t.cfg.OnSRVPollError(err)
	}
}
