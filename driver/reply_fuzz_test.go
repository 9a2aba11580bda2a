package driver

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// The reply parsers get arbitrary documents: none may panic, and each
// refusal must be a *ReplyError that names the field and says why.

func replySeeds(f *testing.F, replies ...any) {
	f.Helper()
	for _, r := range replies {
		b, err := bson.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func checkReplyError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var re *ReplyError
	if !errors.As(err, &re) || re.Field == "" || re.Reason == "" {
		t.Fatalf("error %v (%T): want a *ReplyError with a field and a reason", err, err)
	}
	_ = err.Error()
}

// valid tells whether b is a well-formed document, as the wire layer
// hands replies over; properties of accepted results are checked on those.
func valid(b []byte) bool { return bson.Raw(b).Validate() == nil }

type rd = bson.D

func re(k string, v any) bson.E { return bson.E{Key: k, Value: v} }

// FuzzReadReplies drives the parsers of findAndModify, count (the count
// command and countDocuments' $group) and distinct replies.
func FuzzReadReplies(f *testing.F) {
	replySeeds(f,
		rd{re("lastErrorObject", rd{re("n", int32(1)), re("updatedExisting", true)}), re("value", rd{re("_id", 1), re("x", 2)}), re("ok", 1.0)},
		rd{re("lastErrorObject", rd{re("n", int32(0)), re("updatedExisting", false)}), re("value", nil), re("ok", 1.0)},
		rd{re("lastErrorObject", rd{re("n", int32(1)), re("updatedExisting", false), re("upserted", 7)}), re("value", rd{re("_id", 7)}), re("ok", 1.0)},
		rd{re("value", 3), re("ok", 1.0)},
		rd{re("ok", 1.0)},
	)
	replySeeds(f,
		rd{re("n", int32(12)), re("ok", 1.0)},
		rd{re("n", int64(1)<<40), re("ok", 1.0)},
		rd{re("n", -1), re("ok", 1.0)},
		rd{re("n", "12")},
		rd{re("cursor", rd{re("firstBatch", bson.A{rd{re("_id", 1), re("n", int32(3))}}), re("id", int64(0)), re("ns", "db.c")}), re("ok", 1.0)},
		rd{re("cursor", rd{re("firstBatch", bson.A{}), re("id", int64(0)), re("ns", "db.c")}), re("ok", 1.0)},
		rd{re("cursor", rd{re("firstBatch", bson.A{"x"}), re("id", int64(0))})},
	)
	replySeeds(f,
		rd{re("values", bson.A{1, "a", rd{re("x", 1)}, nil}), re("ok", 1.0)},
		rd{re("values", rd{re("0", 1)})},
		rd{re("ok", 1.0)},
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFindAndModifyReply(t, body)
		checkCountReply(t, body)
		checkDistinctReply(t, body)
	})
}

func checkFindAndModifyReply(t *testing.T, body []byte) {
	d, found, err := parseFindAndModifyReply(body)
	checkReplyError(t, err)
	if err == nil && found && d == nil {
		t.Fatal("found without a document")
	}
	if err == nil && valid(body) {
		v, lerr := bson.Raw(body).LookupErr("value")
		if lerr != nil || (v.Type != bson.TypeNull && v.Type != bson.TypeEmbeddedDocument) {
			t.Fatalf("accepted a reply whose value is %v", v.Type)
		}
	}
}

func checkCountReply(t *testing.T, body []byte) {
	for _, op := range []string{"count", "aggregate"} {
		doc := bson.Raw(body)
		if op == "aggregate" {
			d, ok, err := operation.FirstDocument(body)
			if err != nil {
				var re *operation.ReplyError
				if !errors.As(err, &re) || re.Field == "" {
					t.Fatalf("FirstDocument: %v (%T)", err, err)
				}
				continue
			}
			if !ok {
				continue
			}
			doc = d
		}
		n, err := countField(doc, op, "")
		var oe *OperationError
		if err != nil && !errors.As(err, &oe) {
			t.Fatalf("%T, want an *OperationError", err)
		}
		checkReplyError(t, err)
		if err == nil && n < 0 {
			t.Fatalf("a negative count %d", n)
		}
	}
}

func checkDistinctReply(t *testing.T, body []byte) {
	values, err := distinctValues(body)
	checkReplyError(t, err)
	if err == nil {
		var out []any
		_ = bson.UnmarshalValue(bson.TypeArray, values, &out)
	}
}

// FuzzCatalogReplies drives the parsers of listDatabases replies, listCollections
// and listIndexes documents, and createIndexes and createSearchIndexes replies.
func FuzzCatalogReplies(f *testing.F) {
	replySeeds(f,
		rd{re("databases", bson.A{rd{re("name", "admin"), re("sizeOnDisk", int64(40960)), re("empty", false)},
			rd{re("name", "shop"), re("sizeOnDisk", 8192.0), re("empty", false), re("shards", rd{re("s0", int64(8192))})}}),
			re("totalSize", int64(49152)), re("totalSizeMb", int64(0)), re("ok", 1.0)},
		rd{re("databases", bson.A{rd{re("name", "admin")}}), re("ok", 1.0)},
		rd{re("databases", bson.A{rd{re("name", 3)}, 4})},
		rd{re("databases", "x")},
	)
	idIndex := rd{re("v", int32(2)), re("key", rd{re("_id", int32(1))}), re("name", "_id_")}
	replySeeds(f,
		rd{re("name", "items"), re("type", "collection"), re("options", rd{}),
			re("info", rd{re("readOnly", false), re("uuid", bson.Binary{Subtype: 4, Data: make([]byte, 16)})}), re("idIndex", idIndex)},
		rd{re("name", "v"), re("type", "view"), re("options", rd{re("viewOn", "items"), re("pipeline", bson.A{})}), re("info", rd{re("readOnly", true)})},
		rd{re("name", "items"), re("type", "collection")},
		rd{re("name", 1), re("idIndex", "x")},
	)
	replySeeds(f,
		rd{re("v", int32(2)), re("key", rd{re("_id", int32(1))}), re("name", "_id_")},
		rd{re("v", int32(2)), re("key", rd{re("created", int32(1))}), re("name", "created_1"), re("expireAfterSeconds", int32(3600)), re("sparse", true)},
		rd{re("v", int32(1)), re("unique", 1.0), re("key", rd{re("a", int32(1)), re("b", "text")}), re("name", "a_1_b_text"), re("ns", "db.c")},
		rd{re("v", int32(2)), re("key", rd{re("t", 1)}), re("name", "t_1"), re("expireAfterSeconds", "never")},
		rd{re("key", 1), re("name", 2)},
	)
	replySeeds(f,
		rd{re("numIndexesBefore", int32(1)), re("numIndexesAfter", int32(2)), re("createdCollectionAutomatically", false), re("ok", 1.0)},
		rd{re("numIndexesBefore", int32(2)), re("numIndexesAfter", int32(2)), re("note", "all indexes already exist"), re("ok", 1.0)},
		rd{re("raw", rd{re("s0/localhost:27018", rd{re("numIndexesBefore", int32(1)), re("numIndexesAfter", int32(2)), re("ok", 1.0)})}), re("ok", 1.0)},
		rd{re("numIndexesAfter", -1)},
	)
	replySeeds(f,
		rd{re("indexesCreated", bson.A{rd{re("id", "6524096020da840844a4c4a7"), re("name", "default")}}), re("ok", 1.0)},
		rd{re("indexesCreated", bson.A{1})},
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkListDatabasesReply(t, body)
		checkCollectionSpecification(t, body)
		checkIndexSpecification(t, body)
		fuzzCreateIndexesReply(t, body)
		checkCreatedSearchIndexes(t, body)
	})
}

func checkListDatabasesReply(t *testing.T, body []byte) {
	r, err := parseListDatabases(body)
	checkReplyError(t, err)
	if err != nil {
		return
	}
	if r.TotalSize < 0 {
		t.Fatalf("negative totalSize %d", r.TotalSize)
	}
	for _, d := range r.Databases {
		if d.SizeOnDisk < 0 {
			t.Fatalf("negative sizeOnDisk %d", d.SizeOnDisk)
		}
	}
}

func checkCollectionSpecification(t *testing.T, body []byte) {
	s, err := collectionSpecification(body, "db", "collection 0: ")
	checkReplyError(t, err)
	if err == nil && s.IDIndex != nil && s.IDIndex.KeysDocument == nil {
		t.Fatal("an accepted idIndex without keys")
	}
}

func checkIndexSpecification(t *testing.T, body []byte) {
	_, err := indexSpecification(body, "db.c", "index 0: ")
	checkReplyError(t, err)
	d := bson.Raw(body)
	if err == nil && valid(body) && (d.Lookup("name").Type != bson.TypeString || d.Lookup("key").Type != bson.TypeEmbeddedDocument) {
		t.Fatal("accepted an index without a name string or a key document")
	}
}

func fuzzCreateIndexesReply(t *testing.T, body []byte) {
	checkReplyError(t, checkCreateIndexesReply(body))
}

func checkCreatedSearchIndexes(t *testing.T, body []byte) {
	_, err := createdSearchIndexes(body)
	checkReplyError(t, err)
}
