package main

import (
	"testing"
	"time"
)

// The CSOT accuracy row's invariants, briefly: every run times out, and
// none returns more than 1 ms before its timeoutMS.
func TestCSOTRow(t *testing.T) {
	for _, side := range []string{"ours", "theirs"} {
		st, err := csotRow(side, 50*time.Millisecond, 10)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: median %v, p99 %v, earliest %v", side, st.median, st.p99, st.earliest)
		if st.timeouts != 10 {
			t.Errorf("%s: %d of 10 runs timed out (%s)", side, st.timeouts, st.firstOther)
		}
		if side == "ours" && st.earliest < -time.Millisecond {
			t.Errorf("ours returned %v before timeoutMS", -st.earliest)
		}
	}
}
