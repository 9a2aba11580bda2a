package operation

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// appendLabel adds a label to a reply's errorLabels (labelPre44, for a
// write concern error before 4.4) and leaves a reply it cannot read as
// the server sent it.
func TestAppendLabel(t *testing.T) {
	doc := func(d bson.D) bson.Raw {
		b, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	labels := func(body bson.Raw) []string {
		var out []string
		arr, ok := body.Lookup("errorLabels").ArrayOK()
		if !ok {
			return nil
		}
		vs, _ := arr.Values()
		for _, v := range vs {
			out = append(out, v.StringValue())
		}
		return out
	}
	wce := bson.D{{Key: "code", Value: 91}}
	for _, tc := range []struct {
		name string
		body bson.Raw
		want []string // nil: the body comes back unchanged
	}{
		{"no labels", doc(bson.D{{Key: "ok", Value: 1}, {Key: "writeConcernError", Value: wce}}), []string{"RetryableWriteError"}},
		{"empty labels", doc(bson.D{{Key: "ok", Value: 1}, {Key: "errorLabels", Value: bson.A{}}}), []string{"RetryableWriteError"}},
		{"other labels", doc(bson.D{{Key: "errorLabels", Value: bson.A{"A", "B"}}, {Key: "ok", Value: 1}}), []string{"A", "B", "RetryableWriteError"}},
		{"labels not an array", doc(bson.D{{Key: "ok", Value: 1}, {Key: "errorLabels", Value: "x"}}), nil},
		{"truncated body", bson.Raw{5, 0, 0}, nil},
		{"empty body", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := appendLabel(tc.body, "RetryableWriteError")
			if tc.want == nil {
				if string(got) != string(tc.body) {
					t.Fatalf("body changed: %v, want it as it was", got)
				}
				return
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("invalid result: %v", err)
			}
			l := labels(got)
			if len(l) != len(tc.want) {
				t.Fatalf("labels %v, want %v", l, tc.want)
			}
			for i := range l {
				if l[i] != tc.want[i] {
					t.Fatalf("labels %v, want %v", l, tc.want)
				}
			}
			if ok := got.Lookup("ok"); ok.Type == 0 {
				t.Errorf("the other fields were lost: %v", got)
			}
		})
	}
}
