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
