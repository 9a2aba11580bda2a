package driver

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func writeErr(index, code any) rd {
	return rd{re("index", index), re("code", code), re("codeName", "DuplicateKey"), re("errmsg", "E11000 duplicate key error")}
}

// TestWriteReplyRejectsMalformed: a write reply the results would be made
// from wrongly is refused with the field named.
func TestWriteReplyRejectsMalformed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply rd
		op    string
		sent  int
		field string // "" for a sound reply
	}{
		{"insert", rd{re("n", int32(2)), re("ok", 1.0)}, "insert", 2, ""},
		{"update with upsert", rd{re("n", int32(1)), re("nModified", int32(0)), re("upserted", bson.A{rd{re("index", int32(0)), re("_id", 5)}}), re("ok", 1.0)}, "update", 1, ""},
		{"write error", rd{re("n", int32(0)), re("writeErrors", bson.A{writeErr(int32(0), int32(11000))}), re("ok", 1.0)}, "insert", 1, ""},
		{"n missing", rd{re("ok", 1.0)}, "insert", 1, "n"},
		{"n missing beside write errors (FerretDB v1) is n: 0", rd{re("writeErrors", bson.A{writeErr(int32(0), int32(11000))}), re("ok", 1.0)}, "update", 1, ""},
		{"n a string", rd{re("n", "1")}, "insert", 1, "n"},
		{"n negative", rd{re("n", int32(-1))}, "delete", 1, "n"},
		{"n a fraction", rd{re("n", 1.5)}, "delete", 1, "n"},
		{"n huge", rd{re("n", 1e300)}, "delete", 1, "n"},
		{"more inserted than sent", rd{re("n", int32(3))}, "insert", 2, "n"},
		{"nModified negative", rd{re("n", int32(1)), re("nModified", int64(-3))}, "update", 1, "nModified"},
		{"nModified over matched", rd{re("n", int32(1)), re("nModified", int32(2))}, "update", 1, "nModified"},
		{"more upserted than n", rd{re("n", int32(0)), re("upserted", bson.A{rd{re("index", 0), re("_id", 1)}})}, "update", 1, "n"},
		{"upserted not an array", rd{re("n", int32(1)), re("upserted", rd{})}, "update", 1, "upserted"},
		{"upserted entry a number", rd{re("n", int32(1)), re("upserted", bson.A{7})}, "update", 1, "upserted.0"},
		{"upserted without index", rd{re("n", int32(1)), re("upserted", bson.A{rd{re("_id", 1)}})}, "update", 1, "upserted.0.index"},
		{"upserted without _id", rd{re("n", int32(1)), re("upserted", bson.A{rd{re("index", 0)}})}, "update", 1, "upserted.0._id"},
		{"upserted index outside", rd{re("n", int32(1)), re("upserted", bson.A{rd{re("index", 4), re("_id", 1)}})}, "update", 1, "upserted.0.index"},
		{"writeErrors a string", rd{re("n", int32(0)), re("writeErrors", "x")}, "insert", 1, "writeErrors"},
		{"write error a number", rd{re("n", int32(0)), re("writeErrors", bson.A{1})}, "insert", 1, "writeErrors.0"},
		{"write error without code", rd{re("n", int32(0)), re("writeErrors", bson.A{rd{re("index", 0), re("errmsg", "x")}})}, "insert", 1, "writeErrors.0.code"},
		{"write error code a string", rd{re("n", int32(0)), re("writeErrors", bson.A{writeErr(0, "11000")})}, "insert", 1, "writeErrors.0.code"},
		{"write error code over int32", rd{re("n", int32(0)), re("writeErrors", bson.A{writeErr(0, int64(1)<<40)})}, "insert", 1, "writeErrors.0.code"},
		{"write error without index", rd{re("n", int32(0)), re("writeErrors", bson.A{rd{re("code", 11000)}})}, "insert", 1, "writeErrors.0.index"},
		{"write error index negative", rd{re("n", int32(0)), re("writeErrors", bson.A{writeErr(-1, 11000)})}, "insert", 1, "writeErrors.0.index"},
		{"write error index outside", rd{re("n", int32(0)), re("writeErrors", bson.A{writeErr(int32(0), 1), writeErr(int32(5), 1)})}, "insert", 2, "writeErrors.1.index"},
		{"write error index twice", rd{re("n", int32(0)), re("writeErrors", bson.A{writeErr(int32(1), 1), writeErr(int32(1), 1)})}, "insert", 2, "writeErrors.1.index"},
		{"inserted and refused over sent", rd{re("n", int32(2)), re("writeErrors", bson.A{writeErr(int32(1), 1)})}, "insert", 2, "n"},
		{"write error errmsg a number", rd{re("n", int32(0)), re("writeErrors", bson.A{rd{re("index", 0), re("code", 2), re("errmsg", 3)}})}, "insert", 1, "writeErrors.0.errmsg"},
		{"write error errInfo a string", rd{re("n", int32(0)), re("writeErrors", bson.A{rd{re("index", 0), re("code", 121), re("errInfo", "x")}})}, "insert", 1, "writeErrors.0.errInfo"},
		{"writeConcernError a string", rd{re("n", int32(1)), re("writeConcernError", "x")}, "insert", 1, "writeConcernError"},
		{"writeConcernError without code", rd{re("n", int32(1)), re("writeConcernError", rd{re("errmsg", "waiting")})}, "insert", 1, "writeConcernError.code"},
		{"errorLabels a string", rd{re("n", int32(1)), re("errorLabels", "RetryableWriteError")}, "insert", 1, "errorLabels"},
		{"errorLabels with a number", rd{re("n", int32(1)), re("errorLabels", bson.A{"a", 2})}, "insert", 1, "errorLabels.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bson.Marshal(tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			wr, err := parseWriteReply(b, 0)
			if err == nil {
				err = checkWriteReply(&wr, tc.op, 0, tc.sent)
			}
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var re *ReplyError
			if !errors.As(err, &re) || re.Field != tc.field {
				t.Fatalf("error %v, want a *ReplyError on %q", err, tc.field)
			}
		})
	}
}

// FuzzWriteReply: parseWriteReply and checkWriteReply on any document;
// what they accept keeps every statement index inside the batch, so the
// bulk write's merging (which maps batch positions to the caller's
// models) cannot go out of range.
func FuzzWriteReply(f *testing.F) {
	replySeeds(f,
		rd{re("n", int32(2)), re("ok", 1.0)},
		rd{re("n", int32(1)), re("nModified", int32(0)), re("upserted", bson.A{rd{re("index", int32(0)), re("_id", bson.NewObjectID())}}), re("ok", 1.0)},
		rd{re("n", int32(1)), re("writeErrors", bson.A{writeErr(int32(1), int32(11000))}), re("ok", 1.0), re("errorLabels", bson.A{"RetryableWriteError"})},
		rd{re("n", int32(1)), re("writeConcernError", rd{re("code", int32(64)), re("codeName", "WriteConcernFailed"), re("errmsg", "waiting for replication timed out"),
			re("errInfo", rd{re("wtimeout", true)})}), re("ok", 1.0)},
		rd{re("n", "x"), re("writeErrors", bson.A{1, rd{}})},
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		const offset, sent = 3, 4
		wr, err := parseWriteReply(body, offset)
		checkReplyError(t, err)
		if err != nil {
			return
		}
		for _, name := range []string{"insert", "update", "delete"} {
			w := wr
			err := checkWriteReply(&w, name, offset, sent)
			checkReplyError(t, err)
			if err != nil {
				continue
			}
			if w.n < 0 || w.nModified < 0 || w.nModified > w.n {
				t.Fatalf("counts n %d nModified %d", w.n, w.nModified)
			}
			for _, we := range w.writeErrors {
				if we.Index < offset || we.Index >= offset+sent {
					t.Fatalf("write error index %d outside [%d, %d)", we.Index, offset, offset+sent)
				}
			}
			for _, u := range w.upserted {
				if u.Index < offset || u.Index >= offset+sent || u.ID.Type == 0 {
					t.Fatalf("upserted %+v", u)
				}
				_ = rawValueToAny(u.ID)
			}
			if e := w.exception(); e != nil {
				_ = e.Error()
			}
		}
	})
}
