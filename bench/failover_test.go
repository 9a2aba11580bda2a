package main

import (
	"testing"
	"time"
)

// The failover row's promise, briefly: with retries on, planned
// step-downs cost the application no error, and no write is lost or
// applied twice, with or without retries.
func TestFailoverRow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for seconds")
	}
	for _, retries := range []bool{true, false} {
		res, err := failoverRow("ours", retries, 4*time.Second, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("retries %v: %d operations, %d errors, %d step-downs, longest %v", retries, res.ops, res.errs, res.stepDowns, res.longest)
		if res.stepDowns == 0 || res.ops == 0 {
			t.Fatalf("retries %v: %d step-downs, %d operations: nothing was tested", retries, res.stepDowns, res.ops)
		}
		if res.lost != 0 || res.double != 0 {
			t.Errorf("retries %v: %d writes lost, %d applied twice", retries, res.lost, res.double)
		}
		if retries && res.errs != 0 {
			t.Errorf("retries on: %d application errors (first: %s)", res.errs, res.firstErr)
		}
	}
}
