// Package demo is mongoprobe's demo mode: an in-process, simulated
// three-member replica set (mongotest, not a real MongoDB) probed as the
// cluster "demo", and a scheduler that injects faults into it (a step-down
// of the primary, a slow secondary, a short partition) so that a newcomer
// sees the metrics, logs and failovers move within the first minute.
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// ClusterName is the demo cluster's name.
const ClusterName = "demo"

// The scheduler's timings at full scale.
const (
	MaxFirstFault     = 20 * time.Second
	MaxSlowFor        = 20 * time.Second
	MaxPartitionFor   = 10 * time.Second
	SlowMemberLatency = 300 * time.Millisecond
	// PingTimeout is the demo's ping timeout: shorter than
	// SlowMemberLatency, so that the slow member's pings time out and the
	// timeout metrics (mongoprobe_timeout_overshoot_seconds, the stages)
	// move, one probe per round.
	PingTimeout = 250 * time.Millisecond
)

// Demo is a running simulated replica set.
type Demo struct {
	RS *mongotest.ReplicaSet
}

// Start starts the three-member replica set on loopback ports.
func Start() (*Demo, error) {
	rs, err := mongotest.StartReplicaSet(3, mongotest.ReplicaSetOptions{ElectionDelay: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("demo: starting the simulated replica set: %w", err)
	}
	return &Demo{RS: rs}, nil
}

// Close stops the replica set.
func (d *Demo) Close() { d.RS.Close() }

// Addrs returns the members' addresses.
func (d *Demo) Addrs() []string {
	var out []string
	for _, m := range d.RS.Members() {
		out = append(out, m.Addr())
	}
	return out
}

// Settings returns the demo cluster's settings: every second, reads with
// primary, secondaryPreferred and nearest, pings under PingTimeout.
func (d *Demo) Settings() (probe.Settings, error) {
	s, err := config.ClusterFromURI(ClusterName, d.RS.URI())
	if err != nil {
		return s, err
	}
	s.Interval = time.Second
	s.PingTimeout = PingTimeout
	s.ReadPreferences = nil
	for _, m := range []string{"primary", "secondaryPreferred", "nearest"} {
		s.ReadPreferences = append(s.ReadPreferences, probe.ReadPreference{Name: m, Pref: driver.ReadPreference{Mode: m}})
	}
	return s, nil
}

// Banner writes what the demo is and where to look.
func (d *Demo) Banner(w io.Writer, listen string) {
	fmt.Fprintf(w, `
  ============================================================================
  mongoprobe DEMO: this is a SIMULATION. The cluster "demo" is an in-process
  mongotest replica set (3 members on loopback), NOT a real MongoDB:
      %s
  Faults are injected every so often (a step-down, a slow member, a partition).
  Look at:  http://%s/metrics
            http://%s/probe?target=demo
            http://%s/-/ready
  To probe a real cluster: --uri 'mongodb://...', or MONGOPROBE_URI, or
  --config.file mongoprobe.yaml (see mongoprobe --help).
  ============================================================================

`, strings.Join(d.Addrs(), ", "), listen, listen, listen)
}

// Fault is one injected fault.
type Fault struct {
	Kind   string // "step-down", "slow-member" or "partition"
	Member string // the member's address
	Time   time.Time
}

// Scheduler injects faults into a replica set in turn: a step-down of the
// primary, a slow secondary (SlowMemberLatency for SlowFor), a partitioned
// secondary (for PartitionFor), then again.
type Scheduler struct {
	RS     *mongotest.ReplicaSet
	Logger *slog.Logger
	// First is the wait before the first fault, Every the time between
	// two faults' starts.
	First, Every          time.Duration
	SlowFor, PartitionFor time.Duration
	// OnFault, when set, is called as each fault is injected.
	OnFault func(Fault)

	turn int
}

// NewScheduler returns the scheduler for a fault interval: the first fault
// after the smaller of every and 20s, a slow member for the smaller of 20s
// and 2/3 of every, a partition for the smaller of 10s and 1/3 of every,
// so that each fault is over before the next.
func NewScheduler(rs *mongotest.ReplicaSet, logger *slog.Logger, every time.Duration) *Scheduler {
	return &Scheduler{
		RS: rs, Logger: logger, Every: every,
		First:        min(MaxFirstFault, every),
		SlowFor:      min(MaxSlowFor, every*2/3).Round(time.Millisecond),
		PartitionFor: min(MaxPartitionFor, every/3).Round(time.Millisecond),
	}
}

// Run injects faults until ctx ends, then undoes the one in progress.
func (s *Scheduler) Run(ctx context.Context) {
	log := s.Logger.With("component", "demo")
	var undo sync.WaitGroup
	defer undo.Wait()
	timer := time.NewTimer(s.First)
	defer timer.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		timer.Reset(s.Every)
		switch i % 3 {
		case 0:
			s.stepDown(ctx, log, &undo)
		case 1:
			s.slow(ctx, log, &undo)
		case 2:
			s.partition(ctx, log, &undo)
		}
	}
}

func (s *Scheduler) fault(kind, member string) {
	if s.OnFault != nil {
		s.OnFault(Fault{Kind: kind, Member: member, Time: time.Now()})
	}
}

func (s *Scheduler) stepDown(ctx context.Context, log *slog.Logger, undo *sync.WaitGroup) {
	p := s.RS.Primary()
	if p == nil {
		log.Info("demo fault skipped: no primary to step down")
		return
	}
	log.Info("demo fault: stepping down the primary", "fault", "step-down", "member", p.Addr())
	s.fault("step-down", p.Addr())
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.RS.StepDown(sctx); err != nil {
		log.Warn("demo fault: the step-down failed", "fault", "step-down", "member", p.Addr(), "error", err)
		return
	}
	// The election (ElectionDelay) goes on while the next fault waits.
	undo.Add(1)
	go func() {
		defer undo.Done()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if np, err := s.RS.WaitForPrimary(wctx); err == nil {
			log.Info("demo: a new primary was elected", "member", np.Addr(), "previous", p.Addr())
		}
	}()
}

// secondary returns a member that is not the primary, rotating.
func (s *Scheduler) secondary(turn int) (int, *mongotest.Server) {
	members := s.RS.Members()
	p := s.RS.Primary()
	for k := range members {
		i := (turn + k) % len(members)
		if members[i] != p {
			return i, members[i]
		}
	}
	return -1, nil
}

func (s *Scheduler) slow(ctx context.Context, log *slog.Logger, undo *sync.WaitGroup) {
	s.turn++
	_, m := s.secondary(s.turn)
	if m == nil {
		return
	}
	log.Info("demo fault: slowing a secondary down", "fault", "slow-member", "member", m.Addr(), "latency", SlowMemberLatency, "for", s.SlowFor)
	s.fault("slow-member", m.Addr())
	m.AddLatency(SlowMemberLatency)
	undo.Add(1)
	go func() {
		defer undo.Done()
		select {
		case <-ctx.Done():
		case <-time.After(s.SlowFor):
		}
		m.AddLatency(0)
		log.Info("demo: the slow secondary is back to normal speed", "fault", "slow-member", "member", m.Addr())
	}()
}

func (s *Scheduler) partition(ctx context.Context, log *slog.Logger, undo *sync.WaitGroup) {
	s.turn++
	i, m := s.secondary(s.turn)
	if m == nil {
		return
	}
	if err := s.RS.Partition(i); err != nil {
		log.Warn("demo fault: the partition failed", "fault", "partition", "member", m.Addr(), "error", err)
		return
	}
	log.Info("demo fault: partitioned a secondary off", "fault", "partition", "member", m.Addr(), "for", s.PartitionFor)
	s.fault("partition", m.Addr())
	undo.Add(1)
	go func() {
		defer undo.Done()
		select {
		case <-ctx.Done():
		case <-time.After(s.PartitionFor):
		}
		if err := s.RS.Heal(i); err != nil {
			log.Warn("demo: healing the partition failed", "member", m.Addr(), "error", err)
			return
		}
		log.Info("demo: the partition healed", "fault", "partition", "member", m.Addr())
	}()
}
