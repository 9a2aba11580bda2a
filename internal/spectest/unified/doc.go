// Package unified runs MongoDB unified-format spec tests against the
// driver, through its public API only (driver.Connect, Client,
// Database, Collection, Cursor, the driver/event monitors and a
// driver/logging handler).
//
// The matching engine decides whether an actual BSON value (a command, a
// reply, an operation's result, a log message's data) matches an expected
// value written in a spec test file, with the format's special operators
// ($$exists, $$type, $$unsetOrMatches, $$matchesEntity, $$matchesHexBytes,
// $$sessionLsid, $$lte, $$matchAsDocument, $$matchAsRoot), flexible
// numeric comparison and the root-versus-nested rule for extra fields. A
// mismatch is a *MismatchError naming the path of the first value that
// differs; a malformed expectation is an *InvalidTestError. MatchError
// applies an expectedError object to an error's observable parts.
//
// The runner (Runner) loads a file (schemaVersion up to SchemaVersion,
// major version 1), and runs each test on a fresh Deployment from its
// Provider (package mongotestdeploy plays them with mongotest; package
// externaldeploy hands out one running server, such as FerretDB, which the
// runner cleans before each test and uses one test at a time): it checks
// runOnRequirements against the server (buildInfo, the topology the
// client discovers, connectionStatus, getParameter), sets up initialData,
// creates the entities, runs the operations, then checks expectEvents,
// expectLogMessages, expectTracingMessages and outcome. Tracing comes
// through the Runner's Tracing hook, which brings the tracing library
// (telemetry/tracing's tests hook in the OpenTelemetry SDK's recorder): a
// client with observeTracingMessages gets the hook's monitor, and its
// spans, as Span trees, are matched with the same engine (attributes as a
// root-level document, nested spans in start order). Without the hook,
// a test that expects tracing messages is skipped ("no tracing hook"). Entity operations are a registry keyed
// by entity kind and name, one function each in ops_<kind>.go; the
// special operations are in ops_testrunner.go. A test that needs a
// driver feature that does not exist yet (transactions, GridFS, change
// streams, client-side encryption, an operation without a driver method)
// is skipped with the reason, never passed; a server feature the
// deployment lacks (GapReporter) skips it too.
package unified
