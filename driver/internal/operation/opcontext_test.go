package operation

import (
	"context"
	"testing"
)

// wrapCtx is a context a monitor might return: it wraps another and adds
// no ending of its own.
type wrapCtx struct{ context.Context }

// An OpContext is found under the contexts monitors wrap it in, as long as
// they add no ending of their own; then the connection needs no watch.
func TestOpContextOf(t *testing.T) {
	base, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	oc := &OpContext{Context: base}
	type key struct{}
	canceled, stop := context.WithCancel(oc)
	defer stop()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want *OpContext
	}{
		{"itself", oc, oc},
		{"under a value", context.WithValue(oc, key{}, 1), oc},
		{"under a monitor's context", wrapCtx{context.WithValue(oc, key{}, 1)}, oc},
		{"under a cancelable context", canceled, nil},
		{"under a monitor's context over a cancelable one", wrapCtx{canceled}, nil},
		{"none", context.Background(), nil},
		{"none, cancelable", base, nil},
	} {
		if got := opContextOf(tc.ctx); got != tc.want {
			t.Errorf("%s: opContextOf = %p, want %p", tc.name, got, tc.want)
		}
	}
}
