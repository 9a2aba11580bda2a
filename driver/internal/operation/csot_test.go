package operation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
)

func doc(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWithoutAndWithInt64(t *testing.T) {
	tests := []struct {
		name string
		in   bson.D
		want bson.D
	}{
		{"replaces", bson.D{{Key: "find", Value: "c"}, {Key: "maxTimeMS", Value: int64(5)}}, bson.D{{Key: "find", Value: "c"}, {Key: "maxTimeMS", Value: int64(42)}}},
		{"appends", bson.D{{Key: "find", Value: "c"}}, bson.D{{Key: "find", Value: "c"}, {Key: "maxTimeMS", Value: int64(42)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := withInt64(without(doc(t, tc.in), "maxTimeMS"), "maxTimeMS", 42)
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			if want := doc(t, tc.want); string(got) != string(want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

func TestCheckCursorTimeout(t *testing.T) {
	tests := []struct {
		name    string
		op      Op
		t       time.Duration
		set     bool
		mode    string
		hasMode bool
		wantArg string // "" for no error
	}{
		{name: "mode without timeoutMS", mode: ModeIteration, hasMode: true, wantArg: "timeoutMode"},
		{name: "lifetime on tailable", op: Op{CursorKind: Tailable}, t: time.Second, set: true, mode: ModeCursorLifetime, hasMode: true, wantArg: "timeoutMode"},
		{name: "iteration with $out", op: Op{OutMerge: true}, t: time.Second, set: true, mode: ModeIteration, hasMode: true, wantArg: "timeoutMode"},
		{name: "maxAwait equal", op: Op{CursorKind: TailableAwait, MaxAwait: time.Second}, t: time.Second, set: true, wantArg: "maxAwaitTimeMS"},
		{name: "maxAwait below", op: Op{CursorKind: TailableAwait, MaxAwait: time.Millisecond}, t: time.Second, set: true},
		{name: "maxAwait with timeoutMS 0", op: Op{CursorKind: TailableAwait, MaxAwait: time.Second}, set: true},
		{name: "unknown mode", t: time.Second, set: true, mode: "forever", hasMode: true, wantArg: "timeoutMode"},
		{name: "lifetime on non-tailable", t: time.Second, set: true, mode: ModeCursorLifetime, hasMode: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCursorTimeout(&tc.op, tc.t, tc.set, tc.mode, tc.hasMode)
			var ae *ArgError
			switch {
			case tc.wantArg == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantArg != "" && (!errors.As(err, &ae) || ae.Argument != tc.wantArg):
				t.Fatalf("got %v, want an *ArgError naming %s", err, tc.wantArg)
			}
		})
	}
}

func TestTimeoutErrorTransform(t *testing.T) {
	on := context.WithValue(context.Background(), budgetKey{}, &budget{set: true, on: true})
	off := context.Background()
	tests := []struct {
		name  string
		ctx   context.Context
		err   error
		stage string // "" when err must pass unchanged
	}{
		{"MaxTimeMSExpired", on, &Error{Op: "find", Err: &conn.CommandError{Code: 50}}, StageServerSide},
		{"write concern 50", on, &Error{Op: "insert", Err: &conn.WriteConcernError{Code: 50}}, StageServerSide},
		{"other code", on, &Error{Op: "find", Err: &conn.CommandError{Code: 2}}, ""},
		{"no timeoutMS", off, &Error{Op: "find", Err: &conn.CommandError{Code: 50}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := timeoutError(tc.ctx, tc.err)
			var te *TimeoutError
			if tc.stage == "" {
				if got != tc.err {
					t.Fatalf("got %v, want the error unchanged", got)
				}
				return
			}
			if !errors.As(got, &te) || te.Stage != tc.stage || !errors.Is(got, context.DeadlineExceeded) {
				t.Fatalf("got %v, want a TimeoutError during %q", got, tc.stage)
			}
		})
	}
}
