// Package tracing is the driver's OpenTelemetry tracing sink: spans for
// operations and commands, as the MongoDB OpenTelemetry specification
// describes, made from the driver's events (package driver/event). It
// uses the OpenTelemetry API only (never the SDK), and the driver never
// imports it: a Tracer is one more monitor in driver.ClientOptions.Monitors.
//
//	t := tracing.New(tracing.Options{}) // the global TracerProvider; on if the environment says so
//	opts.Monitors = append(opts.Monitors, t)
//
// # Turning it on
//
// Tracing is off by default. Options.Enabled turns it on or off for the
// clients the Tracer is given to; when it is nil,
// OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED decides ("1", "true" or "yes",
// in any case, turn it on). Options.QueryTextMaxLength, or else
// OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH, adds db.query.text
// to command spans, cut to that many bytes; an unset, non-numeric or
// negative value means 0, which leaves it out. The tracer is asked of
// Options.TracerProvider, or of otel.GetTracerProvider() when New runs,
// with the handshake's driver name and version (driver.DriverName,
// driver.DriverVersion).
//
// A disabled Tracer may stay attached: it asks the driver for no event
// family (event.FamilyFilter), so the client builds no events for it and
// runs as fast as one without it; its hooks, if called, return at once
// without allocating.
//
// # Spans
//
// Each operation gets a span of kind client named "<operation> <db>.<coll>"
// (or "<operation> <db>"), with db.system.name, db.namespace,
// db.collection.name, db.operation.name and db.operation.summary. It starts
// before server selection, so selection and connection checkout fall
// inside it. Operations are named as the specification names them: the
// driver's name, which is the command's, except dropCollection (the drop
// command), createCollection (create) and runCommand (any command the
// application wrote: RunCommand, RunCursorCommand, Ping).
//
// Each command sent gets a child span of kind client named after the
// command, one per attempt (the retries of an operation are siblings),
// with db.system.name, db.namespace, db.collection.name, db.command.name,
// db.query.summary, server.address, server.port (int64; none over a Unix
// socket), network.transport ("tcp" or "unix"),
// db.mongodb.driver_connection_id, db.mongodb.server_connection_id,
// db.mongodb.cursor_id (a cursor the command uses or, on success, returns),
// db.mongodb.lsid (the session id, as UUID text), db.mongodb.txn_number,
// and on failure db.response.status_code (the server's error code as
// text). db.query.text, when on, is the command as relaxed Extended JSON
// without lsid, $db, $clusterTime and signature, and "..." after a cut.
// Security-sensitive commands (authentication, and hello with
// speculativeAuthenticate; event.IsSensitiveCommand) get no span at all, so
// no credential reaches a span.
//
// # Errors
//
// A failed operation or command is recorded on its span with
// Span.RecordError (with the stack trace) and the status Error. OTel-Go
// puts exception.message, exception.type and exception.stacktrace on the
// "exception" span event that RecordError adds, which is what
// OpenTelemetry backends display; they are not copied to the span's own
// attributes. (The specification's tests expect them as span attributes:
// this package's test hook reads them from the event.)
//
// # Cursors
//
// The specification leaves open where a cursor's later getMore and
// killCursors belong. Here each is an operation span ("getMore db.coll",
// "killCursors db.coll", holding its command's span) whose parent is the
// span of the operation that opened the cursor (find, aggregate, ...), so
// that the trace of a query holds all of its round trips, as the Ruby
// driver does; the span current where the application iterates is added
// as a link. The driver hands the opening operation's context to the
// cursor's operations (event.OperationStarted.Origin) only when operation
// monitors are attached.
//
// # Beyond the specification
//
// Operation spans get span events from the driver's selection and pool
// events: "server selected" (server.address, server.port, and
// db.mongodb.wait.duration: seconds since selection started), "server
// selection failed", "connection checked out"
// (db.mongodb.driver_connection_id and db.mongodb.wait.duration: the
// checkout's wait) and "connection check out failed"
// (db.mongodb.checkout.failure_reason). When the operation ends it gets
// db.mongodb.selection.duration and db.mongodb.checkout.duration (the
// totals over all attempts, in seconds, as float64), db.mongodb.attempts
// (int64: command attempts, retries included) and, when the operation had
// a time budget (timeoutMS or the context's deadline), db.mongodb.timeout
// (seconds).
//
// # Transactions
//
// The specification's "transaction" span comes with the driver's
// transactions (issue 16). An operation span's parent is decided in one
// place (the Tracer.parent method), which is where an operation in a
// transaction will find the transaction's span.
//
// # Sampling and cost
//
// A span that is not recording (a sampler left it out, or the provider is
// a no-op one) gets none of this package's events or end-of-operation
// attributes, and a command under such an operation span starts with its
// name-decided attributes only (the others are added should its own span
// record after all): the hooks then allocate little more than the SDK's
// non-recording spans. Such spans still carry the trace context, so the
// spans an application or another library starts under them propagate.
// The context the operation and command hooks return is their span's
// state itself (one allocation), and an operation's name, summary and
// fixed attributes are built once per operation, database and collection.
//
// The Tracer starts no goroutine and never panics on any event.
package tracing
