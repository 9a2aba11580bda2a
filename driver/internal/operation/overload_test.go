package operation

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

func replyWith(backoff any) bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "ok", 0)
	switch v := backoff.(type) {
	case int32:
		b = bson.AppendInt32Element(b, "baseBackoffMS", v)
	case float64:
		b = bson.AppendDoubleElement(b, "baseBackoffMS", v)
	case string:
		b = bson.AppendStringElement(b, "baseBackoffMS", v)
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

func TestBackoffFor(t *testing.T) {
	overload := func(backoff any) error {
		return &Error{Op: "find", Err: &conn.CommandError{Code: 462, Labels: []string{"SystemOverloadedError", "RetryableError"}, Raw: replyWith(backoff)}}
	}
	for _, tc := range []struct {
		name    string
		jitter  float64
		attempt int
		err     error
		want    time.Duration
	}{
		{"first retry", 1, 1, overload(nil), 200 * time.Millisecond},
		{"second retry", 1, 2, overload(nil), 400 * time.Millisecond},
		{"half jitter", 0.5, 2, overload(nil), 200 * time.Millisecond},
		{"no jitter", 0, 2, overload(nil), 0},
		{"capped at 10 s", 1, 10, overload(nil), 10 * time.Second},
		{"capped, huge attempt", 1, 200, overload(nil), 10 * time.Second},
		{"baseBackoffMS", 1, 1, overload(int32(50)), 100 * time.Millisecond},
		{"baseBackoffMS double", 1, 2, overload(12.5), 50 * time.Millisecond},
		{"baseBackoffMS zero", 1, 1, overload(int32(0)), 200 * time.Millisecond},
		{"baseBackoffMS negative", 1, 1, overload(int32(-5)), 200 * time.Millisecond},
		{"baseBackoffMS not a number", 1, 1, overload("x"), 200 * time.Millisecond},
		{"baseBackoffMS capped", 1, 3, overload(int32(5000)), 10 * time.Second},
		{"baseBackoffMS huge", 1, 1, overload(1e300), 10 * time.Second},
		{"baseBackoffMS over int64 nanoseconds", 1, 1, overload(1e13), 10 * time.Second},
		{"baseBackoffMS infinite", 1, 1, overload(math.Inf(1)), 10 * time.Second},
		{"baseBackoffMS NaN", 1, 1, overload(math.NaN()), 200 * time.Millisecond},
		{"baseBackoffMS tiny", 1, 1, overload(1e-9), 0},
		{"network error", 1, 1, &conn.NetworkError{Labels: []string{"SystemOverloadedError", "RetryableError"}}, 200 * time.Millisecond},
		{"jitter above 1 clamped", 3, 1, overload(nil), 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &Executor{Overload: OverloadPolicy{Jitter: func() float64 { return tc.jitter }}}
			if got := x.backoffFor(tc.attempt, tc.err); got != tc.want {
				t.Errorf("backoff %v, want %v", got, tc.want)
			}
		})
	}
	x := &Executor{}
	for i := 0; i < 100; i++ {
		if d := x.backoffFor(1, overload(nil)); d < 0 || d > 200*time.Millisecond {
			t.Fatalf("random jitter gave %v, want within [0, 200ms]", d)
		}
	}
}

func TestBackoffContext(t *testing.T) {
	err := &conn.CommandError{Code: 462}
	x := &Executor{Overload: OverloadPolicy{Jitter: func() float64 { return 1 }}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if e := x.backoff(ctx, 2, err); !errors.Is(e, context.Canceled) || time.Since(start) > 300*time.Millisecond {
		t.Errorf("canceled backoff: %v after %v", e, time.Since(start))
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	start = time.Now()
	if e := x.backoff(dctx, 2, err); e == nil || time.Since(start) > 40*time.Millisecond {
		t.Errorf("backoff past the deadline: %v after %v, want an error at once", e, time.Since(start))
	}
}

func TestOpKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   Op
		want Kind
	}{
		{"find", Op{Retry: RetryRead}, KindRead},
		{"insert", Op{Retry: RetryWrite, Selector: selection.Write()}, KindWrite},
		{"updateMany", Op{Selector: selection.Write()}, KindWrite},
		{"write concern", Op{WriteConcern: bson.Raw{5, 0, 0, 0, 0}}, KindWrite},
		{"getMore", Op{Binding: &Binding{}}, KindRead},
		{"runCommand", Op{Kind: KindCommand, Selector: selection.Write()}, KindCommand},
		{"aggregate $out", Op{Kind: KindWrite}, KindWrite},
		{"other", Op{}, KindRead},
	} {
		if got := tc.op.kind(); got != tc.want {
			t.Errorf("%s: kind %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRetryableOverload(t *testing.T) {
	both := &conn.CommandError{Labels: []string{"SystemOverloadedError", "RetryableError"}}
	for _, tc := range []struct {
		name          string
		reads, writes bool
		kind          Kind
		err           error
		want          bool
	}{
		{"read", true, false, KindRead, both, true},
		{"read, retryReads off", false, true, KindRead, both, false},
		{"write", false, true, KindWrite, both, true},
		{"write, retryWrites off", true, false, KindWrite, both, false},
		{"runCommand", true, true, KindCommand, both, true},
		{"runCommand, retryReads off", false, true, KindCommand, both, false},
		{"runCommand, retryWrites off", true, false, KindCommand, both, false},
		{"one label", true, true, KindRead, &conn.CommandError{Labels: []string{"SystemOverloadedError"}}, false},
		{"other label", true, true, KindRead, &conn.CommandError{Labels: []string{"RetryableError"}}, false},
		{"disconnected", true, true, KindRead, errors.Join(both, ErrClientDisconnected), false},
	} {
		x := &Executor{RetryReads: tc.reads, RetryWrites: tc.writes}
		if got := x.retryableOverload(context.Background(), &Op{Kind: tc.kind}, tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	e1, e2, e3 := errors.New("1"), errors.New("2"), errors.New("3")
	for _, tc := range []struct {
		name      string
		errs      []error
		attempted []bool
		want      error
	}{
		{"all attempted: the last", []error{e1, e2, e3}, []bool{true, true, true}, e3},
		{"none attempted: the first", []error{e1, e2, e3}, []bool{false, false, false}, e1},
		{"the last attempted", []error{e1, e2, e3}, []bool{true, true, false}, e2},
		{"an attempt after none", []error{e1, e2, e3}, []bool{false, true, false}, e2},
	} {
		var o outcome
		for i, err := range tc.errs {
			o.add(Result{}, err, tc.attempted[i])
		}
		if o.err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, o.err, tc.want)
		}
	}
}
