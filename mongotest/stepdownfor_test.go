package mongotest

import (
	"testing"
	"time"
)

// StepDownFor freezes the old primary for the given time only: three
// step-downs in a row on a 3-member set succeed once the first member's
// freeze has passed (with StepDown's 60 s, the third would find no
// electable member and fail after the catch-up period).
func TestStepDownFor(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: 20 * time.Millisecond})
	ctx := ctxT(t)
	if err := rs.StepDownFor(ctx, 0); err == nil {
		t.Fatal("StepDownFor(0) accepted")
	}
	const freeze = 300 * time.Millisecond
	for i := 0; i < 3; i++ {
		if _, err := rs.WaitForPrimary(ctx); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := rs.StepDownFor(ctx, freeze); err != nil {
			t.Fatalf("step-down %d: %v", i, err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("step-down %d waited %v", i, el)
		}
		time.Sleep(freeze)
	}
}
