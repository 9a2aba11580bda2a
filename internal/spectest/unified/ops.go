package unified

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// result is what an entity operation returned: a value for expectResult
// and saveResultAsEntity (zero when none), how expectResult matches it,
// and, for operations that create one, an entity (a cursor).
type result struct {
	v      bson.RawValue
	top    Top
	entity any
}

// opFunc runs one entity operation on obj (of the kind it is registered
// for) with its arguments (nil when it has none). A malformed argument is
// an *InvalidTestError, which fails the test whatever the expectations;
// any other error is the operation's, which expectError judges.
type opFunc func(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error)

// specialFunc runs one special test operation (object "testRunner").
type specialFunc func(ctx context.Context, tr *testRun, args bson.Raw) error

// entityOps is the registry of entity operations, by entity kind and
// operation name. Each operation registers itself from the file of its
// entity kind (ops_client.go, ops_database.go, ...).
var entityOps = map[string]map[string]opFunc{}

// specialOps is the registry of special test operations
// (ops_testrunner.go).
var specialOps = map[string]specialFunc{}

func register(kind, name string, f opFunc) {
	m := entityOps[kind]
	if m == nil {
		m = map[string]opFunc{}
		entityOps[kind] = m
	}
	if _, dup := m[name]; dup {
		panic("unified: operation " + kind + "." + name + " registered twice")
	}
	m[name] = f
}

func init() {
	// Change stream entities are made by createChangeStream, which the
	// driver cannot do yet.
	for _, kind := range []string{"client", "database", "collection"} {
		register(kind, "createChangeStream", func(context.Context, *testRun, any, bson.Raw) (result, error) {
			return result{}, skipf("changeStream entities: the driver has no change stream API yet")
		})
	}
}

func registerSpecial(name string, f specialFunc) {
	if _, dup := specialOps[name]; dup {
		panic("unified: special operation " + name + " registered twice")
	}
	specialOps[name] = f
}

// knownOps are the operations the format and the specifications define
// for each entity kind. One that is not registered skips its test with
// "operation X not implemented"; a name in neither is an error, as the
// format requires for an unsupported operation.
// notOffered are operations the driver leaves out on purpose, with the
// reason.
var notOffered = map[string]string{
	"count":     "the CRUD specification says the deprecated count helper should not be implemented in new drivers (CountDocuments and EstimatedDocumentCount replace it)",
	"mapReduce": "mapReduce is deprecated since MongoDB 5.0 and in no CRUD API of the specifications; RunCommand sends it",
}

var knownOps = map[string][]string{
	"client": {"close", "appendMetadata", "createChangeStream", "watch", "clientBulkWrite", "listDatabases",
		"listDatabaseNames", "listDatabaseObjects", "startSession", "dropDatabase"},
	"database": {"aggregate", "createChangeStream", "watch", "listCollections", "listCollectionNames",
		"listCollectionObjects", "runCommand", "runCursorCommand", "createCommandCursor", "createCollection",
		"dropCollection", "modifyCollection", "dropDatabase"},
	"collection": {"aggregate", "bulkWrite", "countDocuments", "estimatedDocumentCount", "count", "distinct",
		"find", "findOne", "findOneAndDelete", "findOneAndReplace", "findOneAndUpdate", "insertOne", "insertMany",
		"deleteOne", "deleteMany", "replaceOne", "updateOne", "updateMany", "createFindCursor", "createChangeStream",
		"watch", "createIndex", "createIndexes", "dropIndex", "dropIndexes", "listIndexes", "listIndexNames",
		"createSearchIndex", "createSearchIndexes", "dropSearchIndex", "listSearchIndexes", "updateSearchIndex",
		"drop", "rename", "mapReduce"},
	"cursor": {"iterateUntilDocumentOrError", "iterateOnce", "close"},
}

func isKnown(kind, name string) bool {
	for _, n := range knownOps[kind] {
		if n == name {
			return true
		}
	}
	return false
}

// knownOperations lists, for tests, which known
// operations are implemented: kind -> sorted names.
func knownOperations() (implemented, missing map[string][]string) {
	implemented, missing = map[string][]string{}, map[string][]string{}
	for kind, names := range knownOps {
		for _, n := range names {
			if entityOps[kind][n] != nil {
				implemented[kind] = append(implemented[kind], n)
			} else {
				missing[kind] = append(missing[kind], n)
			}
		}
		sort.Strings(implemented[kind])
		sort.Strings(missing[kind])
	}
	return implemented, missing
}

var operationKeys = []string{"name", "object", "arguments", "ignoreResultAndError", "expectError", "expectResult", "saveResultAsEntity"}

// operation runs one operation object and checks its expectations.
func (tr *testRun) operation(op bson.Raw) error {
	if err := checkKeys(op, operationKeys...); err != nil {
		return invalid("operation", err, "malformed operation")
	}
	name, ok := op.Lookup("name").StringValueOK()
	if !ok {
		return invalid("operation", nil, "name is required")
	}
	object, ok := op.Lookup("object").StringValueOK()
	if !ok {
		return invalid("operation", nil, "object is required")
	}
	var args bson.Raw
	if v := op.Lookup("arguments"); !v.IsZero() {
		if args, ok = v.DocumentOK(); !ok {
			return invalid("arguments", nil, "arguments must be a document")
		}
	}
	if object == "testRunner" {
		f, ok := specialOps[name]
		if !ok {
			return fmt.Errorf("unknown special test operation %q", name)
		}
		return f(tr.ctx, tr, args)
	}
	obj, err := tr.lookup(object)
	if err != nil {
		return err
	}
	kind := entityKind(obj)
	f := entityOps[kind][name]
	if f == nil {
		if isKnown(kind, name) {
			if why, ok := notOffered[name]; ok {
				return skipf("operation %s not offered: %s", name, why)
			}
			return skipf("operation %s not implemented", name)
		}
		return fmt.Errorf("unsupported operation %q on a %s entity", name, kind)
	}
	ctx, args, err := tr.sessionContext(tr.ctx, args)
	if err != nil {
		return err
	}
	if ctx, args, err = timeoutContext(ctx, args); err != nil {
		return err
	}
	res, opErr := f(ctx, tr, obj, args)
	if reason := tr.gap(opErr); reason != "" {
		return &skipError{reason: reason}
	}
	var ie *InvalidTestError
	var se *skipError
	if errors.As(opErr, &ie) || errors.As(opErr, &se) {
		return opErr
	}
	if ign, _ := op.Lookup("ignoreResultAndError").BooleanOK(); ign {
		return nil
	}
	if exp, ok := op.Lookup("expectError").DocumentOK(); ok {
		if opErr == nil {
			return mismatch("expectError", op.Lookup("expectError"), bson.RawValue{}, "the operation succeeded (result %s); want an error", show(res.v))
		}
		return MatchError(exp, actualError(opErr, res), &Options{Entities: tr})
	}
	if opErr != nil {
		return fmt.Errorf("unexpected error: %w", opErr)
	}
	if exp := op.Lookup("expectResult"); !exp.IsZero() {
		if err := Match(exp, res.v, &Options{Entities: tr, Path: "expectResult", Top: res.top}); err != nil {
			return err
		}
	}
	if id, ok := op.Lookup("saveResultAsEntity").StringValueOK(); ok {
		switch {
		case res.entity != nil:
			return tr.add(id, res.entity)
		case !res.v.IsZero():
			return tr.add(id, &bsonEntity{v: res.v})
		default:
			return fmt.Errorf("saveResultAsEntity %q: the operation returned no result", id)
		}
	}
	return nil
}

// labelsToAsk are the error labels the runner asks HasErrorLabel about,
// beyond those a server reply carries.
var labelsToAsk = []string{
	"RetryableWriteError", "TransientTransactionError", "UnknownTransactionCommitResult",
	"NoWritesPerformed", "ResumableChangeStreamError", "SystemOverloadedError", "RetryableError",
}

// actualError describes an operation's error in the terms expectedError
// asserts on, through the driver's public error types.
func actualError(err error, res result) *ActualError {
	a := &ActualError{Err: err, IsTimeoutError: driver.IsTimeout(err), Result: res.v}
	var ce *driver.CommandError
	var wce *driver.WriteConcernError
	var we *driver.WriteException
	var bwe *driver.BulkWriteException
	switch {
	case errors.As(err, &we) && (len(we.WriteErrors) > 0 || we.WriteConcernError != nil):
		// A write's error: the code is its write error's, or else its
		// write concern error's.
		if len(we.WriteErrors) > 0 {
			a.HasCode, a.Code, a.CodeName = true, we.WriteErrors[0].Code, we.WriteErrors[0].CodeName
		} else {
			a.HasCode, a.Code, a.CodeName = true, we.WriteConcernError.Code, we.WriteConcernError.CodeName
		}
		a.Labels = append(a.Labels, we.Labels...)
		a.Response = we.Raw
	case errors.As(err, &bwe) && (len(bwe.WriteErrors) > 0 || len(bwe.WriteConcernErrors) > 0):
		if len(bwe.WriteErrors) > 0 {
			a.HasCode, a.Code, a.CodeName = true, bwe.WriteErrors[0].Code, bwe.WriteErrors[0].CodeName
		} else {
			a.HasCode, a.Code, a.CodeName = true, bwe.WriteConcernErrors[0].Code, bwe.WriteConcernErrors[0].CodeName
		}
		a.Labels = append(a.Labels, bwe.Labels...)
	case errors.As(err, &ce):
		// The server refused the command itself (ok: 0).
		a.HasCode, a.Code, a.CodeName = true, ce.Code, ce.CodeName
		a.Labels = append(a.Labels, ce.Labels...)
		a.Response = ce.Raw
		if ce.WriteConcernError != nil {
			a.Labels = append(a.Labels, ce.WriteConcernError.Labels...)
		}
	case errors.As(err, &wce):
		a.HasCode, a.Code, a.CodeName = true, wce.Code, wce.CodeName
		a.Labels = append(a.Labels, wce.Labels...)
	default:
		// Not derived from a server response: argument checks, network
		// errors, timeouts, selection failures.
		a.IsClientError = true
	}
	if a.Response == nil && !a.IsClientError {
		if d, ok := res.v.DocumentOK(); ok && len(d) > 5 {
			a.Response = d
		}
	}
	for _, l := range labelsToAsk {
		if !contains(a.Labels, l) && driver.HasErrorLabel(err, l) {
			a.Labels = append(a.Labels, l)
		}
	}
	return a
}

// argument readers: each refuses a missing required argument or a wrong
// type with an *InvalidTestError.

func reqString(args bson.Raw, key string) (string, error) {
	s, ok := args.Lookup(key).StringValueOK()
	if !ok {
		return "", invalid("arguments."+key, nil, "%s is required and must be a string", key)
	}
	return s, nil
}

// stringArgs checks that args holds only keys, each a string, and returns
// their values in order.
func stringArgs(args bson.Raw, keys ...string) ([]string, error) {
	if err := argKeys(args, keys...); err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		s, err := reqString(args, k)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func reqDoc(args bson.Raw, key string) (bson.Raw, error) {
	d, ok := args.Lookup(key).DocumentOK()
	if !ok {
		return nil, invalid("arguments."+key, nil, "%s is required and must be a document", key)
	}
	return d, nil
}

func reqInt(args bson.Raw, key string) (int64, error) {
	v := args.Lookup(key)
	if !isNumber(v.Type) {
		return 0, invalid("arguments."+key, nil, "%s is required and must be a number", key)
	}
	n, ok := v.AsInt64OK()
	if !ok {
		f, _ := v.AsFloat64OK()
		n = int64(f)
	}
	return n, nil
}

// argKeys refuses an argument the operation does not know, as the format
// requires ("MUST raise an error for an unsupported argument").
func argKeys(args bson.Raw, allowed ...string) error {
	if args == nil {
		return nil
	}
	if err := checkKeys(args, allowed...); err != nil {
		return invalid("arguments", err, "unsupported argument")
	}
	return nil
}
