package driver_test

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/internal/spectest"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/internal/spectest/unified/externaldeploy"
)

// The unified-format spec suites that FerretDB v1 can serve, run against
// the FerretDB standalone named by MONGOSCOPE_FERRETDB_URI (make test
// starts it): CRUD, collection management, runCommand and command
// monitoring. index-management is left out: its search-index tests need a
// replica set, a sharded cluster or a load balancer, and its other tests
// the driver's missing rawData option, so none would run. One test at a
// time, each after the databases it names are dropped. Without the variable the suites skip, unless
// MONGOSCOPE_REQUIRE_FERRETDB=1 makes that a failure.
//
// Where FerretDB v1 differs from MongoDB a test is skipped with the
// difference written down, in one of two precise ways, never by
// loosening a matcher: an error by which FerretDB itself says it lacks
// the feature (ferretGaps), or a table of tests and the exact failure the
// difference causes (ferretDifferences), where a listed test that passes
// or fails any other way still fails. tools/ferretdb/README.md sums the
// differences up.

func ferretUnifiedRunner(t *testing.T) *unified.Runner {
	t.Helper()
	return &unified.Runner{
		Provider: externaldeploy.Provider{URI: interopFerretURI(t), Name: "FerretDB", Gaps: ferretGap},
		Skip: func(file string, test bson.Raw) string {
			if r := deprecatedPoolOptions(test); r != "" {
				return r
			}
			return ""
		},
		ServerDifference: ferretDifference,
		KnownFailure:     knownFailure,
	}
}

// ferretGapRule is an error by which FerretDB says it lacks a feature: its
// code and a pattern its message matches in full.
type ferretGapRule struct {
	code    int32
	message *regexp.Regexp
	reason  string
}

var ferretGapRules = []ferretGapRule{
	{238, regexp.MustCompile(`^\w+: support for field "collation" with value .* is not implemented yet$`), "FerretDB v1 does not implement collation (NotImplemented)"},
	{238, regexp.MustCompile(`^\w+: support for field "let" with value .* is not implemented yet$`), "FerretDB v1 does not implement let (NotImplemented)"},
	{238, regexp.MustCompile(`^\w+: support for field "arrayFilters" with value .* is not implemented yet$`), "FerretDB v1 does not implement arrayFilters (NotImplemented)"},
	{238, regexp.MustCompile("^`aggregate` stage \"\\$out\" is not implemented yet$"), "FerretDB v1 does not implement the $out stage (NotImplemented)"},
	{238, regexp.MustCompile(`^create: support for field "viewOn" with value .* is not implemented yet$`), "FerretDB v1 does not implement views (NotImplemented)"},
	{238, regexp.MustCompile(`^create: support for field "timeseries" with value .* is not implemented yet$`), "FerretDB v1 does not implement time-series collections (NotImplemented)"},
	{238, regexp.MustCompile("^`collMod` command is not implemented yet$"), "FerretDB v1 does not implement collMod (NotImplemented)"},
	{238, regexp.MustCompile(`^findAndModify: support for field "fields" with value .* is not implemented yet$`), "FerretDB v1 does not implement findAndModify's projection (NotImplemented)"},
	{238, regexp.MustCompile(`^find: support for field "returnKey" with non-default value true is not implemented yet$`), "FerretDB v1 does not implement find's returnKey (NotImplemented)"},
	{238, regexp.MustCompile(`^Aggregation pipelines are not supported yet$`), "FerretDB v1 does not implement pipeline updates (NotImplemented from findAndModify, TypeMismatch from update)"},
	{14, regexp.MustCompile(`^BSON field 'update\.updates\.u' is the wrong type 'array', expected type 'object'$`), "FerretDB v1 does not implement pipeline updates (NotImplemented from findAndModify, TypeMismatch from update)"},
	{14, regexp.MustCompile(`^BSON field '\w+\.comment' is the wrong type '\w+', expected type 'string'$`), "FerretDB v1 takes only a string comment (TypeMismatch); MongoDB 4.4+ takes any value"},
	{2, regexp.MustCompile(`^invalid key: ".*" \(key must not (start with '\$'|contain '\.') sign\)$`), "FerretDB v1 refuses every field name that holds a dot or starts with $ (BadValue); MongoDB 5.0+ stores them, except $-prefixed ones in _id"},
	{59, regexp.MustCompile(`^no such command: 'configureFailPoint'$`), "FerretDB v1 has no fail points (configureFailPoint is CommandNotFound)"},
}

// ferretGap implements the Provider's Gaps: the reason of the rule a
// server error or write error of err matches.
func ferretGap(err error) string {
	type coded struct {
		code int32
		msg  string
	}
	var errs []coded
	var ce *driver.CommandError
	var we *driver.WriteException
	var bwe *driver.BulkWriteException
	switch {
	case errors.As(err, &ce):
		errs = append(errs, coded{ce.Code, ce.Message})
	case errors.As(err, &we):
		for _, w := range we.WriteErrors {
			errs = append(errs, coded{w.Code, w.Message})
		}
	case errors.As(err, &bwe):
		for _, w := range bwe.WriteErrors {
			errs = append(errs, coded{w.Code, w.Message})
		}
	}
	for _, e := range errs {
		for _, r := range ferretGapRules {
			if e.code == r.code && r.message.MatchString(e.msg) {
				return r.reason
			}
		}
	}
	return ""
}

// ferretDiff is a way FerretDB v1 differs from MongoDB that a test
// shows, and the exact failure it causes.
type ferretDiff struct{ reason, symptom string }

// The differences, by test file and description (checked against
// FerretDB v1.24.2's replies).
var ferretDifferences = map[[2]string]ferretDiff{
	{"bulkWrite.json", "BulkWrite with replaceOne operations"}:                  {upsertIndex, "expectResult.upsertedIds.2: missing; want 3"},
	{"bulkWrite.json", "BulkWrite with updateOne operations"}:                   {upsertIndex, "expectResult.upsertedIds.3: missing; want 3"},
	{"bulkWrite.json", "BulkWrite with updateMany operations"}:                  {upsertIndex, "expectResult.upsertedIds.3: missing; want 3"},
	{"db-aggregate.json", "Aggregate with $listLocalSessions"}:                  {dbAggregate, dbAggregateSymptom},
	{"db-aggregate.json", "Aggregate with $listLocalSessions and allowDiskUse"}: {dbAggregate, dbAggregateSymptom},
	{"findOneAndUpdate-errorResponse.json", "findOneAndUpdate DuplicateKey error is accessible"}: {
		"FerretDB v1's DuplicateKey error has no keyPattern or keyValue", "expectError.errorResponse.keyPattern: missing"},
	{"clustered-indexes.json", "listCollections includes clusteredIndex"}: {clustered, "expectResult.0.options.clusteredIndex: missing"},
	{"clustered-indexes.json", "listIndexes returns the index"}:           {clustered, `expectResult.0.name: got "_id_", want "test index"`},
	{"runCursorCommand.json", "does not close the cursor when receiving an empty batch"}: {
		"FerretDB v1 closes a tailable cursor whose first batch holds every document (cursor id 0), so no getMore follows",
		`"commandName":"getMore"}}) missing`},
	{"updateOne.json", "A successful updateOne with write errors"}: {
		"FerretDB v1's update reply holding a write error has no n or nModified", "commandSucceededEvent.reply.n: missing; want 0"},
}

const (
	upsertIndex        = "FerretDB v1 numbers an update reply's upserted entries among the upserts, not among the statements, so upsertedIds names the wrong request"
	dbAggregate        = "FerretDB v1 refuses a database aggregate, {aggregate: 1} (FailedToParse)"
	dbAggregateSymptom = "server error 9 (FailedToParse): Invalid command format: the 'aggregate' field must specify a collection name or 1"
	clustered          = "FerretDB v1 accepts create's clusteredIndex but ignores it: listCollections shows no clusteredIndex, listIndexes only _id_"
)

func ferretDifference(tc *unified.Test) (string, string) {
	d := ferretDifferences[[2]string{filepath.Base(tc.File.Path), tc.Doc.Lookup("description").StringValue()}]
	return d.reason, d.symptom
}

func runFerretUnifiedSuite(t *testing.T, name string, dir ...string) *spectest.Tally {
	t.Helper()
	tally := ferretUnifiedRunner(t).RunSuite(t, unified.Suite{Name: name + " on FerretDB", Dir: dir})
	checkNoDriverGoroutines(t)
	return tally
}

// TestUnifiedFerretDBCRUD also checks that the suite really ran: a setup
// that skips everything must not pass (well over a hundred tests pass on
// FerretDB v1.24.2).
func TestUnifiedFerretDBCRUD(t *testing.T) {
	const minPassed = 100
	tally := runFerretUnifiedSuite(t, "crud/unified", "crud", "tests", "unified")
	if tally.Passed < minPassed {
		t.Errorf("only %d CRUD tests passed on FerretDB, want at least %d: the setup is broken", tally.Passed, minPassed)
	}
}

func TestUnifiedFerretDBCollectionManagement(t *testing.T) {
	runFerretUnifiedSuite(t, "collection-management", "collection-management", "tests")
}

func TestUnifiedFerretDBRunCommand(t *testing.T) {
	runFerretUnifiedSuite(t, "run-command/unified", "run-command", "tests", "unified")
}

func TestUnifiedFerretDBCommandMonitoring(t *testing.T) {
	runFerretUnifiedSuite(t, "command-logging-and-monitoring/monitoring", "command-logging-and-monitoring", "tests", "monitoring")
}

// TestFerretGap checks the gap rules on FerretDB's own messages, and that
// an error no rule names stays a failure.
func TestFerretGap(t *testing.T) {
	cmdErr := func(code int32, msg string) error {
		return &driver.OperationError{Err: &driver.CommandError{Code: code, Message: msg}}
	}
	tests := []struct {
		err  error
		want string // a substring of the reason; "" for none
	}{
		{cmdErr(238, `find: support for field "collation" with value &{map[locale:1] [{en_US locale}] false 0} is not implemented yet`), "collation"},
		{cmdErr(238, "`aggregate` stage \"$out\" is not implemented yet"), "$out"},
		{cmdErr(238, "`aggregate` stage \"$merge\" is not implemented yet"), ""},
		{cmdErr(14, "BSON field 'distinct.comment' is the wrong type 'object', expected type 'string'"), "string comment"},
		{cmdErr(14, "BSON field 'find.filter' is the wrong type 'array', expected type 'object'"), ""},
		{cmdErr(59, "no such command: 'configureFailPoint'"), "fail points"},
		{cmdErr(59, "no such command: 'fooBar'"), ""},
		{&driver.OperationError{Err: &driver.BulkWriteException{WriteErrors: []driver.WriteError{{Code: 2, Message: `invalid key: "a.b" (key must not contain '.' sign)`}}}}, "dot"},
		{&driver.OperationError{Err: &driver.WriteException{WriteErrors: []driver.WriteError{{Code: 2, Message: `invalid key: "$a" (key must not start with '$' sign)`}}}}, "dot"},
		{&driver.OperationError{Err: &driver.WriteException{WriteErrors: []driver.WriteError{{Code: 11000, Message: "E11000 duplicate key error"}}}}, ""},
		{errors.New("network error"), ""},
	}
	for _, tt := range tests {
		got := ferretGap(tt.err)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("ferretGap(%v) = %q, want one naming %q", tt.err, got, tt.want)
		}
	}
}
