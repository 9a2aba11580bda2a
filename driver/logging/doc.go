// Package logging is the driver's standardized-logging sink: it turns the
// typed events of driver/event into the log messages of the MongoDB logging
// specification (exact message texts and field names) and writes them to a
// log/slog handler.
//
// A Sink implements event.CommandMonitor, event.PoolMonitor,
// event.TopologyMonitor and event.SelectionMonitor, so
// event.NewDispatcher(sink) attaches it to a client.
//
// # Components and levels
//
// Each message belongs to one component (the specification's command,
// topology, serverSelection and connection, and the driver's own failover)
// and is emitted only when its level is at least as severe as that
// component's configured minimum. Levels set in Options override the
// environment variables MONGODB_LOG_COMMAND, MONGODB_LOG_TOPOLOGY,
// MONGODB_LOG_SERVER_SELECTION, MONGODB_LOG_CONNECTION and
// MONGODB_LOG_FAILOVER, which override MONGODB_LOG_ALL. With no level
// set anywhere, a Sink whose handler was given in Options (Handler or
// Logger) logs every component at informational and above, and one
// without (writing where MONGODB_LOG_PATH says) logs nothing, as the
// specification's default is.
//
// The handler filters too: a record below the handler's own level is
// dropped. slog.Default(), for one, stops at slog.LevelInfo, so debug
// messages need a handler with a lower level; New warns when a level asked
// for would be dropped this way.
//
// The specification's ten levels map onto slog levels as follows, so that
// the specification's "debug" (where almost every message lives) is
// slog.LevelDebug and the levels slog lacks sit between and beyond slog's:
//
//	trace          slog.LevelDebug-4  (-8)
//	debug          slog.LevelDebug    (-4)
//	informational  slog.LevelInfo     (0)
//	notice         slog.LevelInfo+2   (2)
//	warning        slog.LevelWarn     (4)
//	error          slog.LevelError    (8)
//	critical       slog.LevelError+4  (12)
//	alert          slog.LevelError+8  (16)
//	emergency      slog.LevelError+12 (20)
//
// "off" disables a component entirely.
//
// # Primary changes
//
// Besides the specification's messages, which are all at debug level, the
// driver's own failover component has one message at informational level,
// so that a failover shows without debug logging: "Primary changed",
// logged when a TopologyDescriptionChanged event changes the primary (its
// address, or its electionId when the same server was elected again). It
// is on with MONGODB_LOG_FAILOVER or MONGODB_LOG_ALL at informational or
// finer, and by default for a handler given in code. The sink finds the primary in the event's previous and
// new descriptions, so it keeps no state. Its fields are topologyId,
// previousPrimary and newPrimary (an address, or "none") and reason, e.g.
//
//	a:27017 stepped down (now RSSecondary)
//	a:27017 unreachable: conn: read a:27017 (connection 1): ... EOF
//	a:27017 marked Unknown: server error 10107 (NotWritablePrimary): ...
//	a:27017 replaced by a newer primary; elected, electionId 7fffffff0000000000000002, setVersion 1
//	elected, electionId 7fffffff0000000000000002, setVersion 1
//	discovered, electionId 7fffffff0000000000000001, setVersion 1
//
// A failover the driver sees in two steps (the old primary stepping down,
// then the new one elected) gives two messages, the first with newPrimary
// "none": the window without a primary is when writes fail. Closing the
// client logs none. The specification's "Topology description changed"
// message, at debug level, shows every field that Server Description
// Equality compares, primary, setVersion, electionId and topologyVersion
// among them, so its previous and new descriptions never read the same.
//
// The failover component also has one warning, "Last server removed from
// topology", which the SDAM specification says a client SHOULD emit: an
// update removed the topology's last server (every seed turned out to be
// outside the deployment configured, e.g. a member of another replica set,
// or a standalone when a replica set was asked for), so no operation can
// succeed until the deployment changes. Its fields are topologyId,
// topologyType, setName (when one was configured) and removedServers,
// e.g. "a:27017 (RSPrimary, setName other)". The topology tells the sink
// itself; closing a client, which also leaves no servers, logs none.
//
// # Documents
//
// Commands, replies and heartbeat replies are logged as relaxed Extended
// JSON, cut to MaxDocumentLength bytes (MONGODB_LOG_MAX_DOCUMENT_LENGTH,
// default 1000) at a UTF-8 boundary, with "..." appended when cut. The
// security-sensitive commands of the command monitoring specification
// (authenticate, saslStart, saslContinue, getnonce, createUser, updateUser,
// copydbgetnonce, copydbsaslstart, copydb, and hello or isMaster carrying
// speculativeAuthenticate) are logged as "{}", and their failures as an
// empty string.
//
// # Cost
//
// A message whose component or level is disabled costs one comparison: no
// attribute is built and nothing is serialized.
//
// # Trace correlation
//
// When the event's context carries an OpenTelemetry span context, each
// message gets trace_id and span_id attributes, so logs join traces.
package logging
