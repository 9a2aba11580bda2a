// Package mongotest is a programmable, in-process MongoDB server for tests,
// demos and benchmarks, the way net/http/httptest serves HTTP:
//
//	s := mongotest.NewServer(t, mongotest.Options{})
//	client := connect(s.URI())
//
// It speaks the wire protocol on a loopback port, plays a chosen role in a
// deployment, injects faults, and records every command it receives so a
// test can assert on what a driver sent.
//
// # Protocol
//
// Supported:
//   - OP_MSG with checksums (verified; a reply carries one when its request
//     did, as mongod does on connections without TLS), document sequences
//     (merged into the command as arrays, as mongod presents them to
//     commands), moreToCome requests (no reply) and exhaustAllowed;
//   - OP_COMPRESSED with snappy, zlib and zstd (and noop): a reply is
//     compressed with the compressor of its request, except replies to the
//     commands the compression specification never compresses (hello,
//     saslStart, ...);
//   - OP_QUERY for the legacy hello only (isMaster, ismaster or hello on
//     any <db>.$cmd, also wrapped in $query), answered with OP_REPLY. Any
//     other OP_QUERY gets an OP_REPLY error with code 352
//     (UnsupportedOpQueryCommand), as mongod 6.0 and later send.
//
// A message that cannot be decoded (bad header, size over
// maxMessageSizeBytes, bad checksum, invalid BSON, unknown flag bits, an
// unknown or disabled compressor, an unsupported opcode) closes that
// connection; the reason is recorded and returned by ConnectionErrors.
// Problems a reply can describe (no $db, an invalid database name, a
// sequence duplicating a body field, an unknown command) get a mongod-shaped
// error reply and the connection stays open.
//
// # Roles and hello
//
// Topology.Role picks standalone, replica-set primary, secondary, arbiter
// or hidden member, mongos, or load-balanced (a mongos behind a load
// balancer). hello, isMaster and ismaster answer with the fields of that
// role: setName, hosts, passives, arbiters, primary, me, tags, passive,
// hidden, arbiterOnly, electionId, setVersion, lastWrite (opTime and
// lastWriteDate, for staleness), topologyVersion, msg:"isdbgrid",
// serviceId, logicalSessionTimeoutMinutes (30), min/maxWireVersion (0 and
// Options.MaxWireVersion, default 25), the size limits, connectionId,
// localTime, readOnly, helloOk, compression (the client's list, in its
// order, filtered by the server's), saslSupportedMechs and
// speculativeAuthenticate. Replica-set members and mongos add
// $clusterTime (with the zero signature of a deployment without keys) and
// operationTime to every reply. The cluster clock is shared by every
// server over one store (a replica set's members, a cluster's mongoses):
// each successful write (insert, update, delete, findAndModify, bulkWrite,
// aggregate with $out or $merge, and the catalog writes) advances it, and its reply's operationTime is
// the write's time; other replies carry the current time. A request's
// $clusterTime moves the clock up, as mongod's logical clock takes a
// gossiped time.
//
// The awaitable hello is supported: with topologyVersion and
// maxAwaitTimeMS the reply waits until SetTopology changes the topology
// (the counter increments) or the time runs out; with exhaustAllowed the
// server keeps streaming replies with moreToCome, re-running hello (and
// the failCommand fail point) each time, until the client hangs up.
//
// # Replica sets
//
// NewReplicaSet (StartReplicaSet outside a test) starts n members on
// loopback ports that share one store, so a write on the primary is on
// every member at once (writes to the others fail with NotWritablePrimary,
// reads without secondaryOk with NotPrimaryNoSecondaryOk). The members
// agree on one configuration: every member's hello lists the same hosts,
// passives and arbiters, setName, setVersion (1) and primary, and the
// primary adds its electionId (0x7fffffff then the term, as mongod derives
// it). ReplicaSetOptions mark members hidden,
// passive or arbiters and give them tags; member 0 starts as the primary
// in term 1. URI lists every member but the hidden ones, with replicaSet.
//
// A Go call triggers each change, and every change is recorded as an event
// (Events, LastEvent, WaitFor) that a test can wait on:
//   - StepDown, or the replSetStepDown command (stepDownSecs,
//     secondaryCatchUpPeriodSecs, force): once another member is electable
//     the primary becomes a secondary that may not be elected for
//     stepDownSecs (60 by default); without one it waits for the catch-up
//     period, then fails with ExceededTimeLimit (262). On a non-primary it
//     fails with NotWritablePrimary (10107). Connections stay open, as in
//     mongod 4.2 and later;
//   - an election follows ElectionDelay (DefaultElectionDelay, 50ms,
//     when zero; at once when negative) after the set loses its primary.
//     The electable member (reachable, not hidden, passive, an arbiter or
//     frozen) with the least lag wins, then the lowest index; the term,
//     and so the electionId, increase. Elect(i) forces one at once;
//   - Kill stops a member (its port closes, its connections drop) and
//     Restart brings it back on the same port as a secondary with a new
//     processId, the set's data and users, and no fail points;
//   - Partition closes a member's connections and every new one as soon
//     as it is accepted, though the port stays open; Heal ends that;
//   - SetLag makes a secondary's lastWrite (opTime and lastWriteDate)
//     trail the primary's, for maxStalenessSeconds;
//   - replSetFreeze (secs; 0 unfreezes) keeps a secondary from being
//     elected; on the primary it fails with NotSecondary (135).
//
// Every member votes: a primary left without a reachable majority steps
// down, and no member is elected until a majority is back. Each change
// gives every member whose view changed a new topologyVersion, which
// answers its waiting awaitable and streaming hellos at once.
// replSetGetStatus reports set, date, myState, term and, per member, _id,
// name, health, state, stateStr, uptime, optime, optimeDate, electionTime
// and electionDate (the primary), configVersion and self. The three
// replSet commands run on the admin database only, and fail with
// NoReplicationEnabled (76) on a server outside a ReplicaSet.
//
// # Sharded clusters and load balancers
//
// NewShardedCluster (StartShardedCluster) starts n mongoses (RoleMongos)
// on loopback ports over one shared store, as if one shard stood behind
// them: a write through one mongos is read through any other. URI lists
// every mongos, so a driver spreads its operations over them (the spec
// tests' useMultipleMongoses). Each mongos keeps its own connections,
// cursors (a getMore on another mongos fails with CursorNotFound) and fail
// points, as real mongos processes do; retryable writes are remembered
// cluster-wide, so a retry through another mongos is not applied twice.
// A mongos answers isdbgrid ({isdbgrid: 1, hostname}) and listShards (one
// shard, "shard0", described as a replica-set shard whose host is
// shard0.mongotest.invalid, since the shared store has no address); on a
// mongos the replSet* commands do not exist (CommandNotFound), and on a
// mongod isdbgrid and listShards do not. listCommands lists what the role
// has.
//
// NewLoadBalancer (StartLoadBalancer) starts n services (RoleLoadBalanced,
// each with its own serviceId) over one shared store behind a TCP front on
// one address: each new connection goes to the next service, round robin,
// and its bytes are forwarded both ways until either side closes, as a
// layer-4 load balancer does. URI carries loadBalanced=true;
// Connections counts the connections handed to each service. Close stops
// the front, its forwarding goroutines and the services.
//
// # Commands
//
// Built in: hello, isMaster, ismaster, ping, buildInfo (and buildinfo),
// serverStatus (host, version, process, pid, uptime, connections,
// opcounters), endSessions, refreshSessions, killAllSessions (accepted,
// nothing to kill), connectionStatus, whatsmyuri, saslStart, saslContinue,
// logout and configureFailPoint. commitTransaction, abortTransaction
// (admin) and mapReduce exist so that fail points naming them fire, and
// otherwise fail with NotImplemented. Command names are case-sensitive as in mongod.
// Unknown commands fail with CommandNotFound (59). Server.Handle scripts
// any command's reply. A handler's error becomes {ok: 0, errmsg, code,
// codeName, errorLabels}; a successful reply gets ok: 1. The Stable API's
// apiVersion is checked ("1"); apiStrict: true refuses commands outside
// API version 1 with APIStrictError (323), stages are not checked, and
// apiStrict or apiDeprecationErrors without apiVersion fail as in mongod.
//
// CRUD: insert (ordered or not), update (operators or replacement, upsert
// with the query's equality fields and _id, multi, arrayFilters), delete
// (limit 0 or 1), findAndModify (and findandmodify: query, sort, remove,
// update, new, fields, upsert, arrayFilters; lastErrorObject with n,
// updatedExisting and upserted), count (query, skip, limit), distinct (key,
// query; values through arrays, sorted and unique as mongod's set keeps
// them). Write replies have mongod's shape: n, nModified, upserted
// [{index, _id}] and writeErrors [{index, code, errmsg, keyPattern,
// keyValue}]; a bad query or update in one statement is that statement's
// write error, a malformed statement fails the command. bulkWrite (admin;
// ops on any namespaces of nsInfo, ordered, errorsOnly, let,
// bypassDocumentValidation, retryable with txnNumber) runs each op as a
// one-statement insert, update or delete and replies with mongod's
// per-op items ({ok, idx, n, nModified, upserted} or the error) through a
// cursor on admin.$cmd.bulkWrite, beside nErrors, nInserted, nMatched,
// nModified, nUpserted and nDeleted; nsInfo's collectionUUID,
// encryptionInformation and isTimeseriesNamespace are NotImplemented.
//
// Reads: find (filter, projection, sort including {$natural: ±1}, skip,
// limit, batchSize, singleBatch, tailable, awaitData, noCursorTimeout,
// allowPartialResults and allowDiskUse accepted, hint checked against the
// indexes and otherwise ignored, comment), getMore (batchSize; maxTimeMS
// for awaitData cursors, default one second) and killCursors
// (cursorsKilled, cursorsNotFound, cursorsAlive, cursorsUnknown). Cursors
// belong to the server, get random ids, and close when exhausted; a
// getMore on another namespace fails with Unauthorized (13), on an unknown
// id with CursorNotFound (43). Batches hold 101 documents first by default
// and at most 16 MiB of documents (always at least one). A scan stops as
// soon as its batch is full, as mongod's executor does, so a result that
// ends exactly at a batch boundary takes one more, empty getMore. Tailable
// cursors need a capped collection; an awaitData getMore waits for an
// insert, and a tailable cursor whose last document was evicted fails
// with CappedPositionLost (136). failGetMoreAfterCursorCheckout fails the
// getMore with data.errorCode (default InternalError) or closes the
// connection (data.closeConnection), and kills the cursor. A filter {_id:
// v} is answered from the _id index.
//
// Aggregation: aggregate with the stages of the agg engine and
// cursor.batchSize; $out fills a temporary collection (with the target's
// indexes) and renames it over the target, so a failed $out leaves the
// target as it was. $merge (into, on with a unique index, whenMatched
// replace, keepExisting, merge, fail or a pipeline that reads $$new or
// the stage's let, evaluated on each source document, and the command's let,
// whenNotMatched insert, discard or fail) writes document by document as
// mongod. Both reply with an empty firstBatch and, on a replica-set
// secondary with a read preference that allows it, write to the set's
// store as mongod 5.0+ sends the write to the primary.
//
// Collation: find, count, distinct, aggregate, update and delete
// statements, findAndModify, bulkWrite ops and create (the collection's
// default, used by commands without their own) take a collation, parsed
// as mongod does (missing locale 40414, unknown field 40415, strength
// outside 0-5 51024, bad locale BadValue) and compared by CLDR's
// collation tables (golang.org/x/text/collate): locale, strength 1-5,
// caseLevel, numericOrdering, backwards. It governs filters, sorts,
// distinct's values, $group keys and its $min, $max and $addToSet,
// $lookup matches, comparison expressions, the update operators that
// compare ($min, $max, $addToSet, $pull, $pullAll, $push's $sort) and
// arrayFilters, and $bucket's boundaries. caseFirst upper/lower, alternate
// "shifted", locale variants ("@collation=") and $merge under a collation
// fail with NotImplemented. A
// unique index with a collation (its own or the collection's) and the
// _id index of a collection with one compare strings by it. A view's
// collation is the one its reads use; naming another fails with
// OptionNotSupportedOnView (167), as does a view on a view of another
// collation. listIndexes and listCollections show collations with
// mongod's defaults filled in.
//
// let: find, update, delete, findAndModify and bulkWrite take let (reads
// on views too); $expr works in their filters (at the top level and under
// $and, $or and $nor; inside $elemMatch it is BadValue, as in mongod) and
// pipeline updates read the variables.
//
// Views: create with viewOn, pipeline and collation,
// listed with type "view"; find, aggregate, count and distinct run the
// view's pipeline (and those of the views under it) first; writes fail
// with CommandNotSupportedOnView (166); collMod changes viewOn and
// pipeline (a cycle fails with GraphContainsCycle 5, more than 20 stacked
// views with ViewDepthLimitExceeded 43); drop removes the view. $lookup
// and $unionWith (also inside a view's pipeline) read a view as its
// pipeline's result; views that name each other through them are created
// (mongod refuses them with GraphContainsCycle) and fail when read with
// ViewDepthLimitExceeded.
//
// Catalog: listDatabases (admin only; filter, nameOnly), listCollections
// (filter, nameOnly, cursor), listIndexes, createIndexes (unique, sparse,
// partial, hidden, TTL listed), dropIndexes (by name, names, key pattern
// or "*"; also deleteIndexes), create (capped with size and max, which
// evict the oldest documents on insert; views;
// validator, validationLevel and validationAction are stored and listed;
// clusteredIndex on {_id: 1}, listed in options and by listIndexes with
// clustered:true in place of _id_, which dropIndexes refuses to drop
// (5979800); timeseries with timeField, metaField,
// granularity or bucketMaxSpanSeconds and bucketRoundingSeconds, listed
// with type "timeseries" in mongod's canonical form; expireAfterSeconds
// with either; changeStreamPreAndPostImages and autoIndexId, listed; on a
// namespace that exists, create succeeds when the options are the same and
// fails with NamespaceExists (48) saying what differs otherwise, compared
// as mongod 7.0+ does), drop, dropDatabase,
// renameCollection (admin only; dropTarget) and collMod (index hidden and
// expireAfterSeconds, validator and its settings,
// changeStreamPreAndPostImages).
//
// A time-series collection keeps its measurements as plain documents:
// inserts need a date in timeField (BadValue otherwise), _id values need
// not be unique, and reads (find, count, distinct, aggregate) see the
// measurements as mongod's view does. listIndexes shows the
// {metaField: 1, timeField: 1} index mongod creates. update, delete,
// findAndModify, createIndexes, renameCollection, $out and $merge on one
// fail with NotImplemented, as does timeseries with clusteredIndex or
// capped.
//
// Test harness commands, as the drivers' test runners use them:
// getParameter ("*", {allParameters, showDetails} or named parameters:
// featureCompatibilityVersion, requireApiVersion,
// transactionLifetimeLimitSeconds, cursorTimeoutMillis, enableTestCommands,
// authenticationMechanisms, quiet, the ingress rate limiter's
// ingressRequestRateLimiterEnabled, ingressRequestAdmissionRatePerSec and
// ingressRequestAdmissionBurstSize, and externalClientBaseBackoffMS; unknown ones fail with InvalidOptions
// 72), setParameter (the runtime ones; requireApiVersion is enforced with
// mongod's error 498870, hellos included), listCommands, hostInfo,
// getCmdLineOpts, getLog ("*", "global" with one line per recent
// command, names only, and an empty "startupWarnings"), dbStats and
// collStats (sizes estimated as listDatabases does), and the stages
// $collStats (storageStats, count) and, on admin, $currentOp (the running
// operation; other connections as idle with idleConnections), and
// $listLocalSessions (the sessions commands carried as lsid, by user;
// endSessions removes them). find's
// showRecordId adds $recordId; returnKey gives {} where mongod would scan
// the collection and {_id} where it would scan the _id index.
// createSearchIndexes, updateSearchIndex, dropSearchIndex and
// $listSearchIndexes fail with SearchNotEnabled (31082), as a mongod
// without Atlas Search. Users: createUser (pwd, roles, customData,
// mechanisms), updateUser, dropUser, dropAllUsersFromDatabase and
// usersInfo manage the users SCRAM authenticates; roles are stored and
// listed, not enforced. listIndexes' cursor is on db.coll, as mongod's.
//
// Arguments: every command checks its fields as mongod's parser does: an
// unknown field fails with 40415 ("BSON field 'find.x' is an unknown
// field."), a wrong type with TypeMismatch, a negative skip, limit or
// batchSize with 51024. Options mongod has and mongotest does not
// implement fail with NotImplemented (238) naming them, never silently:
// transactions (startTransaction, autocommit), find's min and max, returnKey except on a
// certain collection scan, showRecordId with a sort, aggregate's explain,
// time-series and clustered collections.
// writeConcern (w, j, wtimeout) and readConcern levels local, available,
// majority and linearizable are checked and accepted. readConcern
// afterClusterTime is honoured: every write is visible at once, so a time
// at or before the cluster time needs no wait, and a later one fails with
// InvalidOptions (72, "readConcern afterClusterTime value must not be
// greater than the current clusterTime. ..."), on a standalone with
// IllegalOperation, as in mongod.
//
// Snapshot reads: readConcern {level: "snapshot"}, with or without
// atClusterTime, outside transactions, on replica-set members and mongos
// (a standalone refuses it with NotAReplicaSet, 123, as mongod 5.0+ does).
// find, aggregate and distinct take it, and getMore continues a snapshot
// cursor at its time; any other command, and an aggregate with $out or
// $merge, fails with InvalidOptions (72). Without atClusterTime the read
// is at the current cluster time, which the reply names as mongod's does:
// cursor.atClusterTime for find and aggregate, a top-level atClusterTime
// for distinct. A read at time T sees each document's newest version
// written at or before T: documents deleted since are there, documents
// inserted since are not, on any member (they share one store). The store
// numbers every change; each write command marks the number with its
// cluster time. History is bounded: the last 4096 write commands' marks,
// at most 16 older versions per document, and deleted documents until
// their delete falls out of the window; a time older than that fails with
// SnapshotTooOld (239), one later than the cluster time with InvalidOptions
// (72), both of which mongod returns. Capped collections fail with
// SnapshotUnavailable (246), as in mongod; views, and $lookup or
// $unionWith of a view, fail with NotImplemented. Collection creation,
// drops and renames are not versioned: a snapshot read sees the current
// catalog (a collection created after T reads as empty at T). Writes that
// run concurrently with another write command may show at that command's
// time rather than their own.
//
// maxTimeMS: every command but getMore (where it is an awaitData
// cursor's wait) takes maxTimeMS (0 means none; a negative, fractional,
// non-numeric or over-int32 value is BadValue). As in mongod, the
// deadline starts when the command arrives, before a failCommand
// blockConnection blocks it: a command blocked past its maxTimeMS then
// fails with MaxTimeMSExpired (50, "operation exceeded time limit")
// without running, though only after the whole block, as mongod's
// fail point sleeps uninterrupted; a fail point's errorCode, raised in
// the fail point, comes first. The work itself is in memory and never
// takes long enough to expire.
//
// Roles: writes (including the catalog writes) on
// a secondary, hidden member or arbiter fail with NotWritablePrimary
// (10107), labelled RetryableWriteError for retryable writes. Reads on a
// secondary or hidden member need a $readPreference other than primary,
// else NotPrimaryNoSecondaryOk (13435); an arbiter refuses reads with
// NotPrimaryOrSecondary (13436).
//
// Retryable writes: a write with lsid and txnNumber records each committed
// statement per session and txnNumber; a retry with the same txnNumber
// reports the recorded statements without applying them again (and runs
// the ones that had not committed), findAndModify returns its recorded
// reply, and an older txnNumber fails with TransactionTooOld (225). A
// standalone refuses txnNumber (IllegalOperation), as mongod does. The
// record is shared by every server over one store, so a write retried on
// a replica set's new primary is not applied twice. onPrimaryTransactionalWrite
// fires after a retryable write commits (once per insert command, once per
// update or delete statement, as mongod): it closes the connection unless
// data.closeConnection is false, and with
// data.failBeforeCommitExceptionCode the write is taken back and fails
// with that code.
//
// Each connection is served by one goroutine, which reads, runs and
// answers one message at a time, as mongod does; while a command waits (an
// awaitable hello, blockConnection, added latency) a short-lived watcher
// notices the client hanging up. Close stops them all.
//
// # Authentication
//
// Server-side SCRAM-SHA-1 and SCRAM-SHA-256 for users added with AddUser
// (only salted keys are kept, never the password), with mechanism
// negotiation (saslSupportedMechs), speculative authentication in hello,
// and both the skipEmptyExchange and the older extra empty exchange. With
// Options.Auth, every command except hello, ping, buildInfo, saslStart,
// saslContinue, authenticate, logout, connectionStatus, whatsmyuri and endSessions fails
// with Unauthorized (13) until the connection has authenticated. Users
// have no roles beyond that: an authenticated user may run everything
// (connectionStatus reports root). The legacy authenticate command exists
// (so fail points and command monitoring see it) and fails as mongod
// without a client certificate does: MONGODB-X509 with
// AuthenticationFailed (ProtocolError outside $external), any other
// mechanism with MechanismUnavailable.
//
// # Fault injection
//
// configureFailPoint (or SetFailPoint from Go) with failCommand: modes
// alwaysOn, off, {times: n} and {skip: n}; data failCommands,
// closeConnection, errorCode, errorLabels, blockConnection with
// blockTimeMS, writeConcernError (the command runs, and its ok:1 reply
// carries the writeConcernError) and appName (matched against the client
// metadata of the connection's handshake, which the handshake's own hello
// already carries, so a fail point can block or fail connection
// establishment for one application, as the CMAP tests do). The reply's
// count is how many
// times the fail point had fired. onPrimaryTransactionalWrite and
// failGetMoreAfterCursorCheckout are consulted by the retryable writes and
// getMore (see Commands). AddLatency delays every reply, ResetConnections
// closes every open connection, CloseNextConnections closes the next n accepted
// ones. Every command the retryable reads and writes, client-side
// operations timeout and client backpressure tests name in failCommands
// exists, so their fail points fire on it.
//
// Overload: SetIngressRateLimit (or setParameter
// ingressRequestRateLimiterEnabled with ingressRequestAdmissionRatePerSec
// and ingressRequestAdmissionBurstSize) switches on mongod 8.2's ingress
// request rate limiter, a token bucket: over its rate a command fails
// with IngressRequestRateLimitExceeded (462, "Rate limiter
// 'ingressRequestRateLimiter' rate exceeded") labelled
// SystemOverloadedError and RetryableError. hello, isMaster,
// authentication, configureFailPoint, setParameter and getParameter are
// never limited, nor, with Options.Auth, unauthenticated connections.
// With externalClientBaseBackoffMS above 0, every error labelled
// SystemOverloadedError (the limiter's or a fail point's) carries it as
// baseBackoffMS, which the client backpressure specification reads.
//
// Error labels: as mongod 4.4 and later, the server adds
// RetryableWriteError to an error whose code the retryable writes
// specification lists (and to an ok:1 reply whose writeConcernError code
// it lists) when the command is a retryable write (insert, update, delete,
// findAndModify or bulkWrite with txnNumber and outside a transaction) or
// commitTransaction/abortTransaction. A fail point with errorLabels
// replaces that choice, even with an empty list. Replies carrying a "not
// primary" code include the topologyVersion; shutdown errors (91, 11600)
// do not, as mongod outside quiesce mode.
//
// # Assertions
//
// Commands, CommandsOn, WaitForCommand and ClearCommands expose every
// command received, in order, with its connection id, database, name and a
// copy of its body. Authentication commands, and hellos carrying
// speculativeAuthenticate, are logged with an empty body, as command
// monitoring redacts them.
//
// # Differences from mongod
//
//   - The load-balanced role refuses a first hello without
//     loadBalanced:true (BadValue), where mongos would answer without a
//     serviceId; drivers in load-balanced mode always send it.
//   - A malformed message closes the connection; mongod answers some
//     decoding problems with an error reply instead.
//   - configureFailPoint knows only the three fail points above; others
//     fail with BadValue. activationProbability is not supported.
//   - Awaitable hello argument errors use BadValue, not mongod's
//     dedicated location codes.
//   - lastWrite.lastWriteDate is "now" unless Topology.LastWrite is set, as
//     for a member whose no-op writer keeps it current.
//   - There are no roles or privileges beyond "authenticated"; X.509,
//     PLAIN, GSSAPI, AWS and OIDC authentication are not supported:
//     saslStart answers MechanismUnavailable (334), on any database
//     including $external, as a mongod without those mechanisms enabled
//     does (PLAIN is off by default in mongod's authenticationMechanisms).
//   - TLS is not supported.
//   - The query, update and aggregation engines have their own documented
//     limits (internal packages query, update and agg); secondary indexes
//     are enforced for uniqueness but never used to answer queries.
//   - find refuses a negative limit or batchSize (51024) as mongod 4.4+
//     does; the legacy "negative limit means one batch" is OP_QUERY only.
//   - Cursors never time out: they live until exhausted, killed or the
//     server closes (noCursorTimeout is accepted and changes nothing).
//   - Validators are stored and listed but not enforced; TTL indexes,
//     and expireAfterSeconds of clustered and time-series collections,
//     never expire documents.
//   - A time-series collection has no system.buckets collection (nor
//     system.views) beside it, and returns measurements in insertion
//     order rather than bucket order.
//   - changeStreamPreAndPostImages is listed but changes nothing: there
//     are no change streams.
//   - A retryable-write record is kept per session for the newest
//     txnNumber, for at most 10,000 sessions. A session unused for
//     logicalSessionTimeoutMinutes (30; refreshSessions and any command
//     carrying its lsid use it) expires: it leaves $listLocalSessions and
//     its retryable-write record is forgotten, noticed when it is listed
//     or next used rather than by a background reaper. A delete that the
//     onPrimaryTransactionalWrite fail point takes back re-inserts the
//     document at the end of natural order.
//   - Write replies on replica-set members carry no opTime or electionId.
//   - Replica sets: the members notice a killed or partitioned primary at
//     once (their hellos drop it) rather than after electionTimeoutMillis;
//     a partition closes connections rather than leaving them silent; a
//     step-down does not wait for a secondary to catch up on lag (any
//     electable member will do); a lagging member's lag stays as set, and
//     SetLag also answers waiting hellos; as the store is shared, a
//     lagging secondary's reads still see the latest writes.
//     replSetGetStatus leaves out the heartbeat, sync source and
//     optimes-by-kind fields.
package mongotest
