package metrics

import (
	"strconv"
	"testing"
)

// TestNamespacesLargeCap: with a large cap every pair keeps its labels,
// looked up again before and after the merges, the pair past the cap is
// Other, and a negative cap keeps none.
func TestNamespacesLargeCap(t *testing.T) {
	const max = 20000
	n := newNamespaces(max)
	for i := 0; i < max; i++ {
		c := "c" + strconv.Itoa(i)
		v := n.getString("db", c)
		if v.db != "db" || v.coll != c || n.getString("db", c) != v {
			t.Fatalf("pair %d: %+v", i, *v)
		}
	}
	for i := 0; i < max; i += 997 {
		if c := "c" + strconv.Itoa(i); n.getString("db", c).coll != c {
			t.Fatalf("pair %d lost", i)
		}
	}
	if v := n.getString("db", "one more"); v != otherNS {
		t.Errorf("past the cap: %+v", *v)
	}
	if v := newNamespaces(-1).getString("db", "c"); v != otherNS {
		t.Errorf("negative cap: %+v", *v)
	}
}
