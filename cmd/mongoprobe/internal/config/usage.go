package config

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Usage writes the command's help.
func Usage(w io.Writer) {
	fmt.Fprint(w, `mongoprobe keeps exercising MongoDB clusters through the mongoscope driver
and reports, as Prometheus metrics, logs and traces, what an application
would feel: pings of every member, canary reads per read preference and
canary writes, failovers and their duration.

Usage:
  mongoprobe [run] [flags]     probe the clusters and serve /metrics (the default)
  mongoprobe check [flags]     probe every cluster once, print a table, and exit
                               0 when every probe succeeded, 1 otherwise
  mongoprobe drill --step-down [--cluster <name>] --yes [flags]
                               step the cluster's primary down (replSetStepDown,
                               stepDownSecs 60), probe every 500ms until the
                               failover settles (or --drill.timeout), print its
                               report; exit 0 if it settled, 1 otherwise
  mongoprobe check --timeouts  run reads under tight budgets, print how far past their
                               timeoutMS the timeouts returned, and exit 0 when every
                               overshoot stayed under --timeouts.max-overshoot, 1 otherwise
  mongoprobe --help | --version

Clusters come from --uri, else `+EnvURI+`, else --config.file (a YAML
file listing several clusters); with none of them, mongoprobe runs its demo:
an in-process SIMULATED replica set with injected faults. A URI and
--config.file together are an error.

Flags:
`)
	f := newFlags()
	f.fs.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		line := "  --" + fl.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintln(w, line)
		usage = strings.ReplaceAll(usage, "\n", "\n      ")
		fmt.Fprintf(w, "      %s", usage)
		if fl.DefValue != "" && fl.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprint(w, `
Endpoints (on --web.listen-address):
  /metrics                 the probes' metrics, Go and process metrics (OpenMetrics with exemplars)
  /probe?target=<cluster>  one round on a configured cluster, blackbox-exporter style
  /api/failovers           the failovers observed (the last 20 per cluster), JSON; ?cluster=<name>
  /-/healthy, /-/ready     liveness; readiness (every scheduled cluster did a first round)

Environment:
  `+EnvURI+`                      the cluster's connection string, when --uri is not given
  OTEL_EXPORTER_OTLP_ENDPOINT         when set (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), spans are
                                      exported over OTLP/HTTP; the other OTEL_* variables apply
                                      (OTEL_SERVICE_NAME defaults to mongoprobe)
  MONGODB_LOG_*                       the driver's own log components, levels
  NO_COLOR                            no colour in console logs

Exit codes: 0 success; 1 a failed check or a runtime error; 2 a configuration error.

Examples:
  mongoprobe                                               # the demo, on http://127.0.0.1:9417/metrics
  mongoprobe --uri 'mongodb://probe:secret@db1,db2,db3/?replicaSet=rs0'
  MONGOPROBE_URI='mongodb://db1:27017' mongoprobe --cluster.name prod
  mongoprobe --config.file mongoprobe.yaml --web.listen-address :9417 --web.listen-remote
  mongoprobe check --uri 'mongodb://127.0.0.1:27017/?serverSelectionTimeoutMS=2000'
  mongoprobe drill --step-down --cluster prod --config.file mongoprobe.yaml --yes
  mongoprobe check --timeouts --uri 'mongodb://db1/?replicaSet=rs0' --timeouts.collection test.big \
      --timeouts.filter '{"$where": "sleep(100) || true"}' --timeouts.budgets 50ms,200ms

Configuration file (--config.file):
`)
	for _, l := range strings.Split(strings.TrimRight(Example, "\n"), "\n") {
		fmt.Fprintln(w, "  "+l)
	}
}
