package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// docsOfSizes returns documents of the given sizes (only the length matters
// to SplitBatch).
func docsOfSizes(sizes ...int) []bson.Raw {
	out := make([]bson.Raw, len(sizes))
	for i, n := range sizes {
		out[i] = make(bson.Raw, n)
	}
	return out
}

func TestSplitBatch(t *testing.T) {
	many := make([]int, 100_001)
	for i := range many {
		many[i] = 5
	}
	tests := []struct {
		name     string
		docs     []bson.Raw
		overhead int
		l        Limits
		want     int
		err      string
	}{
		{"empty", nil, 100, Limits{}, 0, ""},
		{"all fit", docsOfSizes(10, 20, 30), 100, Limits{}, 3, ""},
		{"count limit", docsOfSizes(10, 10, 10, 10), 0, Limits{MaxBatchCount: 3}, 3, ""},
		{"count limit of 1", docsOfSizes(10, 10), 0, Limits{MaxBatchCount: 1}, 1, ""},
		{"default count limit", docsOfSizes(many...), 0, Limits{}, 100_000, ""},
		{"message limit exact", docsOfSizes(10, 10, 10), 70, Limits{MaxMessageSize: 100}, 3, ""},
		{"message limit one over", docsOfSizes(10, 10, 11), 70, Limits{MaxMessageSize: 100}, 2, ""},
		{"message limit first only", docsOfSizes(30, 1), 70, Limits{MaxMessageSize: 100}, 1, ""},
		{"later document too large ends batch", docsOfSizes(10, 10, 60, 10), 0, Limits{MaxDocumentSize: 50}, 2, ""},
		{"document at exact size limit", docsOfSizes(50, 50), 0, Limits{MaxDocumentSize: 50}, 2, ""},
		{"default document size", docsOfSizes(16<<20, 16<<20+1), 1000, Limits{}, 1, ""},
		{"default message size", docsOfSizes(16<<20, 16<<20, 16<<20), 1000, Limits{}, 2, ""},
		{"first document too large", docsOfSizes(51, 1), 0, Limits{MaxDocumentSize: 50},
			0, "wire: batch: document 0 is 51 bytes, over maxBsonObjectSize 50"},
		{"first document fits no message", docsOfSizes(40, 1), 70, Limits{MaxMessageSize: 100},
			0, "wire: batch: document 0 is 40 bytes and the rest of the message 70, over maxMessageSizeBytes 100"},
		{"overhead alone over the limit", docsOfSizes(5), 200, Limits{MaxMessageSize: 100},
			0, "wire: batch: document 0 is 5 bytes and the rest of the message 200, over maxMessageSizeBytes 100"},
		{"negative overhead", docsOfSizes(5), -1, Limits{}, 0, "wire: batch: overhead -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitBatch(tt.docs, tt.overhead, tt.l)
			if tt.err != "" {
				var we *Error
				if !errors.As(err, &we) || err.Error() != tt.err {
					t.Fatalf("SplitBatch = %d, %v; want error %q", got, err, tt.err)
				}
				if strings.Contains(tt.err, "over max") && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("error %v is not ErrTooLarge", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("SplitBatch = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// TestSplitBatchBuildsFittingMessages splits a real insert and checks each
// built message stays within the limits.
func TestSplitBatchBuildsFittingMessages(t *testing.T) {
	msg, err := ParseMsg(bigMsg(t, 300))
	if err != nil {
		t.Fatal(err)
	}
	docs := msg.Sequences[0].Docs
	body := msg.Body
	// Fixed part: header, flags, kind-0 byte, body, kind-1 byte, size,
	// "documents\0", checksum.
	overhead := HeaderLen + 4 + 1 + len(body) + 1 + 4 + len("documents") + 1 + 4
	l := Limits{MaxBatchCount: 70, MaxMessageSize: 4000}
	total := 0
	for len(docs) > 0 {
		n, err := SplitBatch(docs, overhead, l)
		if err != nil {
			t.Fatal(err)
		}
		out := AppendMsg(nil, 1, 0, ChecksumPresent, body, Sequence{"documents", docs[:n]})
		if len(out) > l.MaxMessageSize || n > l.MaxBatchCount {
			t.Fatalf("batch of %d documents is %d bytes", n, len(out))
		}
		// Adding one more document must have broken a limit.
		if n < len(docs) && n < l.MaxBatchCount {
			if more := AppendMsg(nil, 1, 0, ChecksumPresent, body, Sequence{"documents", docs[:n+1]}); len(more) <= l.MaxMessageSize {
				t.Fatalf("batch of %d stopped early: %d more fit", n, n+1)
			}
		}
		total += n
		docs = docs[n:]
	}
	if total != 300 {
		t.Fatalf("split %d documents, want 300", total)
	}
}
