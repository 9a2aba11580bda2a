// Package metrics is the driver's Prometheus sink: a prometheus.Collector
// fed by the driver's events (package driver/event). It is the only package
// of the module that imports client_golang; the driver never imports it.
//
//	m := metrics.New(metrics.Options{})
//	prometheus.MustRegister(m)
//	client, err := driver.Connect(ctx, &driver.ClientOptions{Monitors: []any{m}})
//
// # Metrics
//
// Durations are in seconds, in histograms whose buckets are
// Options.Buckets (by default OpenTelemetry's for database client
// durations: 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10).
//
// Operations and commands:
//
//   - mongodb_driver_operation_duration_seconds (histogram; operation,
//     database, collection, outcome, error_code): each operation (find,
//     insert, getMore, a runCommand's command...) from before server
//     selection to the end of its last attempt, retries included.
//   - mongodb_driver_command_duration_seconds (histogram; command,
//     database, collection, server, outcome, error_code): each command sent,
//     from sending to its reply. The collection is the value of the
//     command's first element when that is a string (find: "c"), a
//     getMore's collection field, else "" (always "" for the user and
//     role management commands, whose first element names a user or role).
//   - mongodb_driver_operation_retries_total (counter; operation,
//     error_code): retries, by the error of the attempt that failed.
//   - mongodb_driver_operation_timeouts_total (counter; operation, stage):
//     operations whose time budget (timeoutMS, or the context's deadline)
//     ran out, by where: selection, checkout, connect (establishing a
//     connection), before_send (too little time left to send), network
//     (waiting for the reply), server (MaxTimeMSExpired), retry (while a
//     retryable error was to be retried) or other.
//
// Connection pools (one per server):
//
//   - mongodb_driver_pool_connections (gauge; server, state): connections
//     by state, pending (being established), idle (available) or in_use
//     (checked out).
//   - mongodb_driver_pool_min_connections, mongodb_driver_pool_max_connections
//     (gauges; server): the pool's minPoolSize and maxPoolSize (0: no limit).
//   - mongodb_driver_pool_pending_checkouts (gauge; server): checkouts in
//     progress, waiting for a connection.
//   - mongodb_driver_pool_checkout_duration_seconds (histogram; server,
//     outcome): the time a checkout took, successful or not.
//   - mongodb_driver_pool_checkout_failures_total (counter; server,
//     reason): failed checkouts by CMAP reason: poolClosed, timeout,
//     connectionError.
//   - mongodb_driver_pool_clears_total (counter; server): pool clears.
//
// Connections:
//
//   - mongodb_driver_connection_create_duration_seconds (histogram;
//     server): establishing a connection, handshake and authentication
//     included (ConnectionReady).
//   - mongodb_driver_connection_use_duration_seconds (histogram; server):
//     from checkout to check-in.
//   - mongodb_driver_connections_closed_total (counter; server, reason):
//     closed connections by CMAP reason: stale, idle, error, poolClosed.
//
// Server selection and servers:
//
//   - mongodb_driver_server_selection_duration_seconds (histogram;
//     outcome): each server selection.
//   - mongodb_driver_server_heartbeat_duration_seconds (histogram; server,
//     awaited, outcome): server checks; awaited="true" for the streaming
//     protocol's checks, which wait for a change up to maxAwaitTimeMS;
//     outcome="canceled" for a check the client stopped itself
//     (Disconnect, or a pool clear interrupting a streaming check), which
//     says nothing about the server.
//   - mongodb_driver_server_rtt_seconds (gauge; server): the server's
//     average round trip time, from its description and non-awaited
//     checks (a moving average weighting each new sample 0.2, as SDAM's).
//   - mongodb_driver_server_type (gauge; server, type): 1 for the
//     server's current type, as SDAM names it (Unknown, Standalone, Mongos,
//     RSPrimary, RSSecondary, RSArbiter, RSOther, RSGhost, LoadBalancer,
//     PossiblePrimary); a former type's series is gone.
//   - mongodb_driver_topology_changes_total (counter): changes of the
//     topology description.
//
// # OpenTelemetry metrics
//
// With Options.MeterProvider set, the same measurements also go to
// OpenTelemetry instruments (the metric API only: the application brings
// the SDK), named as the semantic conventions for database client metrics
// name them, with db.system.name="mongodb":
//
//   - db.client.operation.duration (histogram, s; db.operation.name,
//     db.namespace, db.collection.name, error.type and, for a server error,
//     db.response.status_code): as mongodb_driver_operation_duration_seconds,
//     with the same capped values (error.type is the error_code label).
//   - db.client.connection.count (up-down counter; db.client.connection.pool.name,
//     db.client.connection.state idle or used): established connections.
//   - db.client.connection.idle.min and db.client.connection.max
//     (up-down counters; pool name): minPoolSize and maxPoolSize.
//   - db.client.connection.pending_requests (up-down counter; pool name):
//     checkouts waiting.
//   - db.client.connection.timeouts (counter; pool name): checkouts that
//     timed out.
//   - db.client.connection.create_time, db.client.connection.wait_time,
//     db.client.connection.use_time (histograms, s; pool name): establishing
//     a connection, checking one out (successful or not), using one.
//
// The pool name is the server's address. A closed pool's counts go back
// to 0. The SDK takes exemplars from the contexts the measurements are
// recorded with.
//
// # Labels
//
// outcome is "success" or "failure" (a write that the server acknowledged
// with write errors is a success of the operation and its command: the
// command ran). error_code is "" on success, the server's error code
// ("11000") for a server error, else "timeout", "network", "canceled" or
// "client" (an error the driver raised). server is a server's address,
// host:port, as the deployment names it: never a URI, never credentials.
// No label holds a connection id, a document or a value from one.
//
// Cardinality is bounded. database and collection keep the first
// Options.MaxNamespaces (default 100) distinct (database, collection)
// pairs; every later pair is counted under database="_other",
// collection="_other". operation and command keep the first 100 distinct
// names (runCommand's names are the application's), error_code the first
// 100 server codes, server 256 addresses; past those the value is
// "_other". A server removed from the topology, or a closed pool, loses
// its gauges (the series of counters and histograms stay, as Prometheus
// expects of them).
//
// # Exemplars
//
// When the context of an event carries a sampled OpenTelemetry span (the
// tracing sink, telemetry/tracing, puts one there when it runs before
// this sink), the histogram observation carries the span's trace id as an
// exemplar, {trace_id="..."}, so that a dashboard can link a slow bucket
// to its trace. A series' bucket takes an exemplar at most once per
// Options.ExemplarInterval (default 1s; negative turns exemplars off):
// the first sampled observation that finds the bucket's exemplar older
// than that replaces it, the others are counted without one. A bucket
// holds only its latest exemplar, which Prometheus reads at each scrape
// (every 15 to 60 seconds), so this loses nothing a dashboard could show,
// and spares most observations the exemplar's allocations. The times are kept in 256
// slots per histogram, a series' bucket mapping to one of them; buckets
// that share a slot share its interval, so a histogram takes at most 256
// exemplars per interval. Exemplars are exposed in the OpenMetrics format
// (promhttp.HandlerOpts{EnableOpenMetrics: true}).
//
// # Cost
//
// Each event takes a few lock-free map lookups and an atomic histogram
// update; a histogram caches the observers of its first series, so an
// observation does not hash its label values' bytes. A command's
// collection is carried from its start event to its end event in the
// context, so CommandStarted allocates that context (24 bytes per
// command); once the label values have been seen, a successful
// operation's events, a checkout and a check-in allocate nothing else,
// with a sampled span or without, once the buckets have their exemplars.
// Classifying an error, an exemplar (at most one per bucket and
// ExemplarInterval) and the OpenTelemetry instruments' attributes
// allocate a little.
package metrics
