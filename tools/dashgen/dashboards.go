package main

import (
	"fmt"
	"strings"
)

// sel is a selector of metric in the chosen clusters, with more matchers.
func sel(metric string, matchers ...string) string {
	return metric + `{` + strings.Join(append([]string{`cluster=~"$cluster"`}, matchers...), ", ") + `}`
}

// rate is the per-second rate of a counter (or a histogram's _count or
// _bucket) over Grafana's $__rate_interval.
func rate(metric string, matchers ...string) string {
	return "rate(" + sel(metric, matchers...) + "[$__rate_interval])"
}

func increase(metric string, matchers ...string) string {
	return "increase(" + sel(metric, matchers...) + "[$__rate_interval])"
}

// quantile is the q-quantile of histogram h (its name without _bucket),
// per the labels by.
func quantile(q float64, h, by string, matchers ...string) string {
	b := "le"
	if by != "" {
		b = "le, " + by
	}
	return fmt.Sprintf("histogram_quantile(%g, sum by (%s) (%s))", q, b, rate(h+"_bucket", matchers...))
}

// quantiles are the p50 and p99 queries of histogram h per the labels by,
// with legend the legend of each without its quantile.
func quantiles(h, by, legend string, matchers ...string) []Q {
	if legend != "" {
		legend += " "
	}
	return []Q{
		{quantile(0.5, h, by, matchers...), legend + "p50"},
		{quantile(0.99, h, by, matchers...), legend + "p99"},
	}
}

// Driver is driver.json: the driver's own metrics (mongodb_driver_*), as
// mongoprobe exports them for each cluster it probes, or as any program
// using telemetry/metrics does when it adds a cluster label.
func Driver() *Dashboard {
	d := NewDashboard("mongoscope-driver", "mongoscope: driver",
		"The mongoscope driver's metrics (mongodb_driver_*): operations, commands, connection pools, server selection, SDAM, timeouts and retries.")

	d.Row("Operations")
	d.TimeSeries("Operations per second", "Operations completed per second, by operation and outcome.", OpsSec,
		Q{"sum by (operation, outcome) (" + rate("mongodb_driver_operation_duration_seconds_count") + ")", "{{operation}} {{outcome}}"})
	d.Histogram("Operation latency", "The operations' duration (selection, checkout, every attempt), p50 and p99 per operation. The points are exemplars: each opens its trace.", Seconds,
		quantiles("mongodb_driver_operation_duration_seconds", "operation", "{{operation}}")...)
	d.TimeSeries("Failed operations by error code", "Operations that ended in an error, per second, by operation and server error code (empty for errors without one).", OpsSec,
		Q{"sum by (operation, error_code) (" + rate("mongodb_driver_operation_duration_seconds_count", `outcome="failure"`) + ")", "{{operation}} {{error_code}}"})

	d.Row("Commands")
	d.TimeSeries("Commands per second", "Commands sent per second, by command and server.", OpsSec,
		Q{"sum by (command, server) (" + rate("mongodb_driver_command_duration_seconds_count") + ")", "{{command}} {{server}}"})
	d.Histogram("Command latency", "The commands' round trip, p50 and p99 per command. The points are exemplars.", Seconds,
		quantiles("mongodb_driver_command_duration_seconds", "command", "{{command}}")...)
	d.TimeSeries("Command outcomes by server", "Commands per second by server and outcome, and the failed ones by server error code.", OpsSec,
		Q{"sum by (server, outcome) (" + rate("mongodb_driver_command_duration_seconds_count") + ")", "{{server}} {{outcome}}"},
		Q{"sum by (server, error_code) (" + rate("mongodb_driver_command_duration_seconds_count", `outcome="failure"`) + ")", "{{server}} failed: {{error_code}}"})

	d.Row("Connection pools")
	d.TimeSeries("Pool connections by state", "Connections per server and state (pending, idle, in_use), with the pool's maximum.", Short,
		Q{"sum by (server, state) (" + sel("mongodb_driver_pool_connections") + ")", "{{server}} {{state}}"},
		Q{"max by (server) (" + sel("mongodb_driver_pool_max_connections") + ")", "{{server}} max"})
	d.Histogram("Checkout wait", "How long operations waited for a connection, p50 and p99 per server. The points are exemplars.", Seconds,
		quantiles("mongodb_driver_pool_checkout_duration_seconds", "server", "{{server}}")...)
	d.TimeSeries("Pending checkouts", "Operations waiting for a connection now, per server.", Short,
		Q{"sum by (server) (" + sel("mongodb_driver_pool_pending_checkouts") + ")", "{{server}}"})
	d.TimeSeries("Checkouts by outcome", "Connection checkouts per second, by server and outcome, and the failed ones by CMAP reason (poolClosed, timeout, connectionError).", OpsSec,
		Q{"sum by (server, outcome) (" + rate("mongodb_driver_pool_checkout_duration_seconds_count") + ")", "{{server}} {{outcome}}"},
		Q{"sum by (server, reason) (" + rate("mongodb_driver_pool_checkout_failures_total") + ")", "{{server}} failed: {{reason}}"})
	d.TimeSeries("Pool clears and closed connections", "Pool clears (after a network error or a state change) and connections closed, by reason, in each interval.", Short,
		Q{"sum by (server) (" + increase("mongodb_driver_pool_clears_total") + ")", "{{server}} cleared"},
		Q{"sum by (server, reason) (" + increase("mongodb_driver_connections_closed_total") + ")", "{{server}} closed {{reason}}"})
	d.Histogram("Connection establishment", "Time to open a connection (TCP, TLS, handshake, authentication), p50 and p99 per server.", Seconds,
		quantiles("mongodb_driver_connection_create_duration_seconds", "server", "{{server}}")...)

	d.Row("Server selection")
	d.Histogram("Server selection time", "How long operations waited for a suitable server, p50 and p99 by outcome. The points are exemplars.", Seconds,
		quantiles("mongodb_driver_server_selection_duration_seconds", "outcome", "{{outcome}}")...)
	d.TimeSeries("Server selections by outcome", "Server selections per second, by outcome.", OpsSec,
		Q{"sum by (outcome) (" + rate("mongodb_driver_server_selection_duration_seconds_count") + ")", "{{outcome}}"})

	d.Row("SDAM")
	d.TimeSeries("Server types", "Each server's SDAM type (1 for the current one).", Short,
		Q{"max by (server, type) (" + sel("mongodb_driver_server_type") + ") == 1", "{{server}} {{type}}"})
	d.Histogram("Heartbeat duration", "The monitors' heartbeats, p50 and p99 per server (awaited streaming heartbeats last up to heartbeatFrequencyMS).", Seconds,
		quantiles("mongodb_driver_server_heartbeat_duration_seconds", "server, awaited", "{{server}} awaited={{awaited}}")...)
	d.TimeSeries("Server RTT", "Each server's round-trip time, as the RTT monitor measures it.", Seconds,
		Q{"max by (server) (" + sel("mongodb_driver_server_rtt_seconds") + ")", "{{server}}"})
	d.TimeSeries("Topology changes", "Topology description changes in each interval.", Short,
		Q{"sum by (cluster) (" + increase("mongodb_driver_topology_changes_total") + ")", "{{cluster}}"})

	d.Row("Timeouts and retries")
	d.TimeSeries("CSOT timeouts by stage", "Operations whose timeoutMS ran out, in each interval, by the stage where it did: selection, checkout, connect, before_send, network, server, retry, other.", Short,
		Q{"sum by (stage) (" + increase("mongodb_driver_operation_timeouts_total") + ")", "{{stage}}"})
	d.TimeSeries("Retries by operation", "Retries of retryable reads and writes, per second, by operation and the error code that caused them, beside the operations per second.", OpsSec,
		Q{"sum by (operation, error_code) (" + rate("mongodb_driver_operation_retries_total") + ")", "{{operation}} retried: {{error_code}}"},
		Q{"sum by (operation) (" + rate("mongodb_driver_operation_duration_seconds_count") + ")", "{{operation}} operations"})
	return d
}

// Probe is probe.json: mongoprobe's own metrics (mongoprobe_*).
func Probe() *Dashboard {
	d := NewDashboard("mongoscope-probe", "mongoscope: mongoprobe",
		"mongoprobe's view of each cluster: availability of the cluster and its members, probe success and latency, failovers, time without a writable primary, and timeouts.")

	d.Row("Availability")
	d.Stat("Cluster up", "1 when a member answered the last round's ping or read.", Short,
		Q{"max by (cluster) (" + sel("mongoprobe_up") + ")", "{{cluster}}"}).GoodFrom(1)
	d.Stat("Writable primary", "1 when the driver's topology has a writable primary.", Short,
		Q{"max by (cluster) (" + sel("mongoprobe_writable_primary") + ")", "{{cluster}}"}).GoodFrom(1)
	d.Stat("Probe success ratio", "The share of probes that succeeded in the last interval, every probe of the cluster together.", Percent,
		Q{"sum by (cluster) (" + rate("mongoprobe_probes_total", `outcome="success"`) + ") / sum by (cluster) (" + rate("mongoprobe_probes_total") + ")", "{{cluster}}"}).GoodFrom(0.99)
	d.Stat("Last round age", "Seconds since the last completed round of probes.", Seconds,
		Q{"time() - max by (cluster) (" + sel("mongoprobe_last_round_timestamp_seconds") + ")", "{{cluster}}"}).BadFrom(60)
	d.Stat("Scrape up", "Prometheus's own up for the jobs scraping mongoprobe: 0 when the scrape failed.", Short,
		Q{`min by (job, instance) (up{job=~"mongoprobe.*"})`, "{{job}} {{instance}}"}).GoodFrom(1)
	d.Stat("Primary changes", "Primary changes since mongoprobe started.", Short,
		Q{"max by (cluster) (" + sel("mongoprobe_primary_changes_total") + ")", "{{cluster}}"})
	d.TimeSeries("Members up", "1 when the member answered its last ping.", Short,
		Q{"max by (cluster, member) (" + sel("mongoprobe_member_up") + ")", "{{cluster}} {{member}}"})
	d.TimeSeries("Member types", "Each member's SDAM type, as mongoprobe's driver sees it.", Short,
		Q{"max by (cluster, member, type) (" + sel("mongoprobe_member_type") + ") == 1", "{{member}} {{type}}"})
	d.TimeSeries("Member RTT", "Each member's round-trip time from the driver's monitors.", Seconds,
		Q{"max by (cluster, member) (" + sel("mongoprobe_member_rtt_seconds") + ")", "{{cluster}} {{member}}"})

	d.Row("Probes")
	d.TimeSeries("Probe success ratio by target", "The share of each probe's runs that succeeded, per probe (ping, read, write) and target (member, read preference, primary).", Percent,
		Q{"sum by (probe, target) (" + rate("mongoprobe_probes_total", `outcome="success"`) + ") / sum by (probe, target) (" + rate("mongoprobe_probes_total") + ")", "{{probe}} {{target}}"})
	d.TimeSeries("Probe latency", "Each probe's latency, p50 and p99 per probe and target, from mongoprobe_probe_duration_seconds.", Seconds,
		quantiles("mongoprobe_probe_duration_seconds", "probe, target", "{{probe}} {{target}}")...)
	d.TimeSeries("Probe failures by class", "Failed probes in each interval, by probe and error class (network, timeout, not_primary, auth, server, client).", Short,
		Q{"sum by (probe, class) (" + increase("mongoprobe_probes_total", `outcome="failure"`) + ")", "{{probe}} {{class}}"})
	d.TimeSeries("Probe retries", "The driver's retries during probes, per second, by probe and target.", OpsSec,
		Q{"sum by (probe, target) (" + rate("mongoprobe_probe_retries_total") + ")", "{{probe}} {{target}}"})
	d.TimeSeries("Answering members", "Which member answered each probe, per second.", OpsSec,
		Q{"sum by (probe, target, member) (" + rate("mongoprobe_probe_answers_total", `probe!="ping"`) + ")", "{{probe}} {{target}} → {{member}}"})

	d.Row("Failovers")
	d.TimeSeries("Failovers closed", "Failovers closed in each interval: settled (a new primary and a successful canary write on it) or not (capped, superseded, stopped).", Short,
		Q{"sum by (settled) (" + increase("mongoprobe_failovers_total") + ")", "settled={{settled}}"})
	d.TimeSeries("Time to a new primary", "From the old primary seen gone to the new primary in the driver's topology, p50 and p99.", Seconds,
		quantiles("mongoprobe_failover_detection_to_primary_seconds", "", "")...)
	d.TimeSeries("Write unavailability", "From the first failed or blocked canary write to the first successful one, per failover, p50 and p99.", Seconds,
		quantiles("mongoprobe_failover_write_unavailable_seconds", "", "")...)
	d.TimeSeries("Reads failed during failovers", "Read probes that failed during failovers, in each interval, by read preference.", Short,
		Q{"sum by (read_preference) (" + increase("mongoprobe_failover_read_errors_total") + ")", "{{read_preference}}"})
	d.TimeSeries("No writable primary", "The current window without a writable primary (0 with a primary).", Seconds,
		Q{"max by (cluster) (" + sel("mongoprobe_no_writable_primary_seconds") + ")", "{{cluster}}"})
	d.TimeSeries("Share of time without a writable primary", "The share of each interval spent without a writable primary.", Percent,
		Q{"sum by (cluster) (" + rate("mongoprobe_no_writable_primary_seconds_total") + ")", "{{cluster}}"})

	d.Row("Timeouts")
	d.TimeSeries("Timeout overshoot", "For each probe that timed out: when it returned minus its timeoutMS, p50 and p99 per stage (negative: the driver gave up early).", Seconds,
		quantiles("mongoprobe_timeout_overshoot_seconds", "stage", "{{stage}}")...)
	d.TimeSeries("Timeouts by stage", "Probes that timed out in each interval, by probe and the stage where the budget ran out.", Short,
		Q{"sum by (probe, stage) (" + increase("mongoprobe_probe_timeouts_total") + ")", "{{probe}} {{stage}}"})
	d.TimeSeries("Timeouts by side", "Timeouts in each interval by side: server (MaxTimeMSExpired came first) or client.", Short,
		Q{"sum by (probe, side) (" + increase("mongoprobe_timeout_side_total") + ")", "{{probe}} {{side}}"})
	return d
}
