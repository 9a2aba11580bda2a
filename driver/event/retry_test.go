package event_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mongoscope/mongoscope/driver/event"
)

type retryCounter struct{ n *int }

func (r retryCounter) OperationRetry(_ context.Context, e *event.OperationRetry) { *r.n += e.Attempt }

func TestDispatcherRetry(t *testing.T) {
	if event.NewDispatcher().Retry() || (*event.Dispatcher)(nil).Retry() {
		t.Fatal("Retry() true without a RetryMonitor")
	}
	n := 0
	inner := event.NewDispatcher(retryCounter{&n})
	d := event.NewDispatcher(inner, retryCounter{&n})
	if !d.Retry() || len(d.Unused()) != 0 {
		t.Fatalf("Retry() %v, unused %v", d.Retry(), d.Unused())
	}
	d.OperationRetry(context.Background(), &event.OperationRetry{Attempt: 2})
	(*event.Dispatcher)(nil).OperationRetry(context.Background(), &event.OperationRetry{Attempt: 5})
	if n != 4 {
		t.Fatalf("the two monitors added %d, want 4", n)
	}
}

type coded struct{ code int32 }

func (c *coded) Error() string          { return "coded" }
func (c *coded) ServerErrorCode() int32 { return c.code }

type netErr struct{}

func (netErr) Error() string      { return "net" }
func (netErr) NetworkError() bool { return true }

func TestErrorClassifiers(t *testing.T) {
	wrapped := fmt.Errorf("op: %w", &coded{11000})
	if c, ok := event.ServerErrorCode(wrapped); !ok || c != 11000 {
		t.Errorf("ServerErrorCode = %d, %v", c, ok)
	}
	if _, ok := event.ServerErrorCode(errors.New("x")); ok {
		t.Error("a plain error has a code")
	}
	if _, ok := event.ServerErrorCode(nil); ok {
		t.Error("nil has a code")
	}
	if !event.IsNetworkError(fmt.Errorf("a: %w", netErr{})) || event.IsNetworkError(wrapped) || event.IsNetworkError(nil) {
		t.Error("IsNetworkError")
	}
}
