package conn

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// FuzzReplyError feeds ReplyError, which every command reply goes through
// first, arbitrary documents: it must not panic, it may return nil only
// for ok:1 (or true) without a writeConcernError document, and a
// *CommandError keeps a copy of the whole reply.
func FuzzReplyError(f *testing.F) {
	for _, r := range []bson.D{
		{{Key: "ok", Value: 1.0}},
		{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "not primary"}, {Key: "code", Value: int32(10107)}, {Key: "codeName", Value: "NotWritablePrimary"},
			{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}},
		{{Key: "n", Value: int32(1)}, {Key: "writeConcernError", Value: bson.D{{Key: "code", Value: int32(64)}, {Key: "errmsg", Value: "waiting for replication timed out"},
			{Key: "errInfo", Value: bson.D{{Key: "wtimeout", Value: true}}}}}, {Key: "ok", Value: 1.0}},
		{{Key: "ok", Value: "1"}},
		{{Key: "ok", Value: true}, {Key: "writeConcernError", Value: "x"}},
	} {
		b, err := bson.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := ReplyError(body)
		if err == nil {
			ok := bson.Raw(body).Lookup("ok")
			f, isNum := ok.AsFloat64OK()
			b, isBool := ok.BooleanOK()
			if !(isNum && f == 1) && !(isBool && b) {
				t.Fatalf("nil for a reply whose ok is %v", ok.Type)
			}
			if bson.Raw(body).Lookup("writeConcernError").Type == bson.TypeEmbeddedDocument {
				t.Fatal("nil for a reply with a writeConcernError document")
			}
			return
		}
		if err.Error() == "" {
			t.Fatal("an error without a message")
		}
		var ce *CommandError
		if errors.As(err, &ce) {
			if !bytes.Equal(ce.Raw, body) {
				t.Fatal("CommandError.Raw is not the reply")
			}
			if len(body) > 0 && &ce.Raw[0] == &body[0] {
				t.Fatal("CommandError.Raw aliases the reply buffer")
			}
		}
	})
}
