package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// TestSpecConcernDocuments runs the read-write-concern specification's
// document tests: each read or write concern, as a user would set it,
// must be valid or not as the file says, encode to the document the file
// gives, and report isServerDefault and isAcknowledged.
func TestSpecConcernDocuments(t *testing.T) {
	total := spectest.NewTally("read-write-concern/document")
	files := spectest.Files(t, "*.json", "read-write-concern", "tests", "document")
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Tests []struct {
				Description     string          `json:"description"`
				Valid           bool            `json:"valid"`
				WriteConcern    map[string]any  `json:"writeConcern"`
				WCDocument      json.RawMessage `json:"writeConcernDocument"`
				ReadConcern     map[string]any  `json:"readConcern"`
				RCDocument      json.RawMessage `json:"readConcernDocument"`
				IsServerDefault *bool           `json:"isServerDefault"`
				IsAcknowledged  *bool           `json:"isAcknowledged"`
			}
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		tally := spectest.NewTally(filepath.Base(path))
		for _, tc := range f.Tests {
			tally.Run(t, filepath.Base(path)+"/"+tc.Description, func(t *testing.T) {
				var got bson.Raw
				var wantDoc json.RawMessage
				if tc.ReadConcern != nil {
					rc := &ReadConcern{}
					if l, ok := tc.ReadConcern["level"].(string); ok {
						rc.Level = l
					}
					got, wantDoc = rc.encode(), tc.RCDocument
				} else {
					wc := &WriteConcern{}
					for k, v := range tc.WriteConcern {
						switch k {
						case "w":
							switch w := v.(type) {
							case float64:
								wc.W = &W{Nodes: int(w)}
							case string:
								wc.W = &W{Tag: w}
							}
						case "journal":
							j := v.(bool)
							wc.Journal = &j
						case "wtimeoutMS":
							wc.WTimeout = time.Duration(v.(float64)) * time.Millisecond
						default:
							t.Fatalf("unknown write concern field %q", k)
						}
					}
					err := wc.validate()
					if (err == nil) != tc.Valid {
						t.Fatalf("validate: %v, want valid=%v", err, tc.Valid)
					}
					if tc.IsAcknowledged != nil && wc.Acknowledged() != *tc.IsAcknowledged {
						t.Fatalf("Acknowledged() = %v, want %v", wc.Acknowledged(), *tc.IsAcknowledged)
					}
					if !tc.Valid {
						return
					}
					got, wantDoc = wc.encode(), tc.WCDocument
				}
				if tc.IsServerDefault != nil && (got == nil) != *tc.IsServerDefault {
					t.Fatalf("server default = %v, want %v", got == nil, *tc.IsServerDefault)
				}
				want, err := bson.ParseExtJSON(wantDoc)
				if err != nil {
					t.Fatal(err)
				}
				if got == nil {
					got = bson.Raw{5, 0, 0, 0, 0}
				}
				if !equalNumbersLoose(got, want) {
					t.Fatalf("document %v, want %v", got, want)
				}
			})
		}
		total.Add(tally)
	}
	total.Log(t)
}

// equalNumbersLoose compares two documents key by key, numbers by value
// (the files' JSON numbers parse as int32 or int64).
func equalNumbersLoose(a, b bson.Raw) bool {
	ae, err1 := a.Elements()
	be, err2 := b.Elements()
	if err1 != nil || err2 != nil || len(ae) != len(be) {
		return false
	}
	for i := range ae {
		if ae[i].Key() != be[i].Key() {
			return false
		}
		av, bv := ae[i].Value(), be[i].Value()
		if an, ok := av.AsInt64OK(); ok {
			if bn, ok := bv.AsInt64OK(); ok && an == bn {
				continue
			}
			return false
		}
		if !av.Equal(bv) {
			return false
		}
	}
	return true
}
