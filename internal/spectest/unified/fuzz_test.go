package unified

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// FuzzMatch matches random expected and actual values, seeded with every
// pair of the table tests (as documents, so raw bytes can be mutated). It
// checks that Match never panics and that any error is one of the two
// documented types.
func FuzzMatch(f *testing.F) {
	wrap := func(s string) []byte {
		if s == "" {
			return nil
		}
		d, err := bson.Marshal(bson.D{{Key: "v", Value: bson.RawValue(mustValue(s))}})
		if err != nil {
			f.Fatalf("seed %s: %v", s, err)
		}
		return d
	}
	for _, cases := range [][]matchCase{documentCases, numberCases, operatorCases} {
		for _, c := range cases {
			f.Add(wrap(c.exp), wrap(c.act), uint8(c.top))
		}
	}
	f.Fuzz(func(t *testing.T, exp, act []byte, top uint8) {
		// Whole documents, as a runner passes a reply, and their first
		// values, so scalars and operators are reached at the top too.
		pairs := [][2]bson.RawValue{{docValue(exp), docValue(act)}}
		ev, av := bson.Raw(exp).Lookup("v"), bson.Raw(act).Lookup("v")
		pairs = append(pairs, [2]bson.RawValue{ev, av})
		for _, p := range pairs {
			err := Match(p[0], p[1], &Options{Entities: fakeEntities{}, Top: Top(top % 3), Path: "f"})
			if err == nil {
				continue
			}
			switch err.(type) {
			case *MismatchError, *InvalidTestError:
				_ = err.Error()
			default:
				t.Fatalf("Match returned %T: %v", err, err)
			}
		}
		// expectedError objects take the same operands.
		_ = MatchError(bson.Raw(exp), &ActualError{Err: errFuzz, Response: bson.Raw(act), Result: av}, nil)
	})
}

type fuzzError struct{}

func (fuzzError) Error() string { return "fuzz error" }

var errFuzz error = fuzzError{}

// FuzzRunnerInputs feeds random documents to the runner's readers of
// test-file input (runOnRequirements, uriOptions, expected events and log
// messages, operation arguments): none may panic, whatever the bytes.
func FuzzRunnerInputs(f *testing.F) {
	for _, s := range []string{
		`{"r": [{"minServerVersion": "4.4", "topologies": ["single"], "auth": true, "serverParameters": {"a": 1}}]}`,
		`{"u": {"readPreferenceTags": ["a:b", ""], "authMechanismProperties": {"A": "b"}, "directConnection": true, "w": 1.5}}`,
		`{"e": {"commandStartedEvent": {"command": {"a": 1}, "hasServiceId": true}}}`,
		`{"m": {"level": "debug", "component": "command", "failureIsRedacted": true, "data": {"message": "x"}}}`,
		`{"a": {"filter": {}, "limit": 2, "session": "s", "readConcern": {"level": "local"}, "writeConcern": {"w": "majority"}}}`,
	} {
		d, err := bson.ParseExtJSON([]byte(s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(d))
	}
	ev := recEvent{kind: "command", name: "commandStartedEvent", doc: bson.Raw{5, 0, 0, 0, 0}}
	msg := logMessage{data: bson.Raw{5, 0, 0, 0, 0}}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := bson.Raw(b)
		if d.Validate() != nil {
			return
		}
		elems, err := d.Elements()
		if err != nil || len(elems) == 0 {
			return
		}
		v := elems[0].Value()
		_, _ = parseRequirements(v)
		if doc, ok := v.DocumentOK(); ok {
			_, _, _ = applyURIOptions("mongodb://a:1,b:2/?replicaSet=rs", doc, true)
			_ = matchEvent(doc, ev, nil, "e")
			_ = matchLogMessage(doc, msg, nil, "m")
			a := newArgs(doc)
			a.doc("filter", true)
			a.int64Ptr("limit")
			a.readConcern()
			a.writeConcern()
			a.readPreference()
			a.update("update")
			a.array("arrayFilters")
			_ = a.done()
			_, _ = writeModel(0, v)
		}
	})
}
