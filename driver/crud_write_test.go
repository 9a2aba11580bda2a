package driver_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

func d(kv ...any) bson.D {
	var out bson.D
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return out
}

// writeCommands returns the insert, update, delete and findAndModify
// commands srv logged.
func writeCommands(srv *mongotest.Server) []mongotest.Command {
	var out []mongotest.Command
	for _, c := range srv.Commands() {
		switch c.Name {
		case "insert", "update", "delete", "findAndModify":
			out = append(out, c)
		}
	}
	return out
}

func writeNames(srv *mongotest.Server) []string {
	var out []string
	for _, c := range writeCommands(srv) {
		out = append(out, c.Name)
	}
	return out
}

// reseed empties coll and inserts docs.
func reseed(t *testing.T, ctx context.Context, coll *driver.Collection, docs ...any) {
	t.Helper()
	if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if len(docs) > 0 {
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
}

// contents returns coll's documents in _id order.
func contents(t *testing.T, ctx context.Context, coll *driver.Collection) []item {
	t.Helper()
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{Sort: d("_id", 1)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := driver.All[item](ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestUpdateReplaceDelete(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")
	base := []any{item{ID: 1, Qty: 10, Tag: "a"}, item{ID: 2, Qty: 20, Tag: "a"}, item{ID: 3, Qty: 30, Tag: "b"}}

	tests := []struct {
		name string
		run  func() (outcome, error)
		want outcome
		// after is the collection's content afterwards.
		after []item
	}{
		{"UpdateOne $set", func() (outcome, error) {
			r, err := coll.UpdateOne(ctx, d("tag", "a"), d("$set", d("qty", 11)), &driver.UpdateOptions{Sort: d("_id", 1)})
			return upd(r), err
		}, outcome{matched: 1, modified: 1}, []item{{1, 11, "a"}, {2, 20, "a"}, {3, 30, "b"}}},
		{"UpdateOne sort picks the last", func() (outcome, error) {
			r, err := coll.UpdateOne(ctx, d("tag", "a"), d("$inc", d("qty", 1)), &driver.UpdateOptions{Sort: d("_id", -1)})
			return upd(r), err
		}, outcome{matched: 1, modified: 1}, []item{{1, 10, "a"}, {2, 21, "a"}, {3, 30, "b"}}},
		{"UpdateOne no change", func() (outcome, error) {
			r, err := coll.UpdateOne(ctx, d("_id", 1), d("$set", d("qty", 10)))
			return upd(r), err
		}, outcome{matched: 1, modified: 0}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}}},
		{"UpdateOne pipeline", func() (outcome, error) {
			r, err := coll.UpdateOne(ctx, d("_id", 3), bson.A{d("$set", d("qty", d("$multiply", bson.A{"$qty", 2})))})
			return upd(r), err
		}, outcome{matched: 1, modified: 1}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 60, "b"}}},
		{"UpdateOne upsert", func() (outcome, error) {
			r, err := coll.UpdateOne(ctx, d("_id", 9), d("$set", d("qty", 90)), &driver.UpdateOptions{Upsert: driver.Ptr(true)})
			return upd(r), err
		}, outcome{upserted: 1, upsertedID: int32(9)}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}, {9, 90, ""}}},
		{"UpdateOne hint", func() (outcome, error) {
			r, err := coll.UpdateOne(ctx, d("_id", 1), d("$set", d("tag", "z")), &driver.UpdateOptions{Hint: "_id_"})
			return upd(r), err
		}, outcome{matched: 1, modified: 1}, []item{{1, 10, "z"}, {2, 20, "a"}, {3, 30, "b"}}},
		{"UpdateMany", func() (outcome, error) {
			r, err := coll.UpdateMany(ctx, d("tag", "a"), d("$inc", d("qty", 5)))
			return upd(r), err
		}, outcome{matched: 2, modified: 2}, []item{{1, 15, "a"}, {2, 25, "a"}, {3, 30, "b"}}},
		{"UpdateMany nothing", func() (outcome, error) {
			r, err := coll.UpdateMany(ctx, d("tag", "q"), d("$inc", d("qty", 5)))
			return upd(r), err
		}, outcome{}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}}},
		{"ReplaceOne", func() (outcome, error) {
			r, err := coll.ReplaceOne(ctx, d("_id", 2), d("qty", 7))
			return upd(r), err
		}, outcome{matched: 1, modified: 1}, []item{{1, 10, "a"}, {2, 7, ""}, {3, 30, "b"}}},
		{"ReplaceOne upsert", func() (outcome, error) {
			r, err := coll.ReplaceOne(ctx, d("_id", 4), d("qty", 40), &driver.ReplaceOptions{Upsert: driver.Ptr(true)})
			return upd(r), err
		}, outcome{upserted: 1, upsertedID: int32(4)}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}, {4, 40, ""}}},
		{"DeleteOne", func() (outcome, error) {
			r, err := coll.DeleteOne(ctx, d("tag", "a"), &driver.DeleteOptions{Hint: d("_id", 1)})
			return del(r), err
		}, outcome{deleted: 1}, []item{{2, 20, "a"}, {3, 30, "b"}}},
		{"DeleteMany", func() (outcome, error) {
			r, err := coll.DeleteMany(ctx, d("tag", "a"))
			return del(r), err
		}, outcome{deleted: 2}, []item{{3, 30, "b"}}},
		{"DeleteMany nothing", func() (outcome, error) {
			r, err := coll.DeleteMany(ctx, d("tag", "q"))
			return del(r), err
		}, outcome{}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reseed(t, ctx, coll, base...)
			got, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("result %+v, want %+v", got, tt.want)
			}
			if after := contents(t, ctx, coll); !reflect.DeepEqual(after, tt.after) {
				t.Errorf("collection %+v, want %+v", after, tt.after)
			}
		})
	}
}

func TestUpdateArrayFilters(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("arrays")
	if _, err := coll.InsertMany(ctx, []any{d("_id", 1, "a", bson.A{1, 5, 9}), d("_id", 2, "a", bson.A{7})}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"UpdateOne", func() error {
			_, err := coll.UpdateOne(ctx, d("_id", 1), d("$set", d("a.$[x]", 0)), &driver.UpdateOptions{ArrayFilters: []any{d("x", d("$gt", 4))}})
			return err
		}, `[{"_id":1,"a":[1,0,0]},{"_id":2,"a":[7]}]`},
		{"UpdateMany", func() error {
			_, err := coll.UpdateMany(ctx, d(), d("$inc", d("a.$[x]", 1)), &driver.UpdateOptions{ArrayFilters: []any{d("x", d("$gte", 1))}})
			return err
		}, `[{"_id":1,"a":[2,0,0]},{"_id":2,"a":[8]}]`},
		{"FindOneAndUpdate", func() error {
			return coll.FindOneAndUpdate(ctx, d("_id", 2), d("$set", d("a.$[x]", 3)), &driver.FindOneAndUpdateOptions{ArrayFilters: []any{d("x", 8)}}).Err()
		}, `[{"_id":1,"a":[2,0,0]},{"_id":2,"a":[3]}]`},
		{"BulkWrite", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.UpdateManyModel{Filter: d(), Update: d("$set", d("a.$[x]", 4)), ArrayFilters: []any{d("x", 0)}}})
			return err
		}, `[{"_id":1,"a":[2,4,4]},{"_id":2,"a":[3]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); err != nil {
				t.Fatal(err)
			}
			cur, err := coll.Find(ctx, d(), &driver.FindOptions{Sort: d("_id", 1)})
			if err != nil {
				t.Fatal(err)
			}
			docs, err := driver.All[bson.Raw](ctx, cur)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, doc := range docs {
				parts = append(parts, doc.String())
			}
			if got := "[" + strings.Join(parts, ",") + "]"; got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// outcome is an UpdateResult's or a DeleteResult's counts.
type outcome struct {
	matched, modified, upserted, deleted int64
	upsertedID                           any
}

func upd(r *driver.UpdateResult) outcome {
	var o outcome
	if r != nil {
		o.matched, o.modified, o.upserted, o.upsertedID = r.MatchedCount, r.ModifiedCount, r.UpsertedCount, r.UpsertedID
	}
	return o
}

func del(r *driver.DeleteResult) outcome {
	var o outcome
	if r != nil {
		o.deleted = r.DeletedCount
	}
	return o
}

// TestWriteCommandShape checks each option lands where the server
// expects it, from the command log (mongotest refuses collation and let
// with NotImplemented, after logging them).
func TestWriteCommandShape(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")
	tests := []struct {
		name string
		run  func() error
		// want maps a path in the logged command to its value in
		// extended JSON; "-" means absent.
		want map[string]string
	}{
		{"update", func() error {
			_, err := coll.UpdateOne(ctx, d("_id", 1), d("$set", d("a.$[x]", 1)), &driver.UpdateOptions{
				ArrayFilters: []any{d("x", 2)}, BypassDocumentValidation: driver.Ptr(true), Collation: d("locale", "fr"),
				Hint: "h", Upsert: driver.Ptr(false), Let: d("v", 1), Comment: "c", Sort: d("s", 1)})
			return err
		}, map[string]string{"ordered": "true", "bypassDocumentValidation": "true", "let": `{"v": 1}`, "comment": `"c"`,
			"updates.0.q": `{"_id": 1}`, "updates.0.upsert": "false", "updates.0.multi": "-", "updates.0.arrayFilters": `[{"x": 2}]`,
			"updates.0.collation": `{"locale": "fr"}`, "updates.0.hint": `"h"`, "updates.0.sort": `{"s": 1}`}},
		{"updateMany", func() error {
			_, err := coll.UpdateMany(ctx, d(), d("$set", d("a", 1)))
			return err
		}, map[string]string{"updates.0.multi": "true", "updates.0.upsert": "-", "bypassDocumentValidation": "-", "comment": "-"}},
		{"replace", func() error {
			_, err := coll.ReplaceOne(ctx, d("_id", 1), d("a", 1), &driver.ReplaceOptions{Let: d("v", 2), Hint: d("_id", 1)})
			return err
		}, map[string]string{"updates.0.u": `{"a": 1}`, "updates.0.hint": `{"_id": 1}`, "let": `{"v": 2}`, "updates.0.multi": "-"}},
		{"deleteOne", func() error {
			_, err := coll.DeleteOne(ctx, d("_id", 1), &driver.DeleteOptions{Collation: d("locale", "fr"), Hint: "h", Let: d("v", 1), Comment: 5})
			return err
		}, map[string]string{"deletes.0.limit": "1", "deletes.0.collation": `{"locale": "fr"}`, "deletes.0.hint": `"h"`, "let": `{"v": 1}`, "comment": "5"}},
		{"deleteMany", func() error {
			_, err := coll.DeleteMany(ctx, d("_id", 1))
			return err
		}, map[string]string{"deletes.0.limit": "0", "deletes.0.q": `{"_id": 1}`}},
		{"findOneAndUpdate", func() error {
			return coll.FindOneAndUpdate(ctx, d("_id", 1), d("$set", d("a", 1)), &driver.FindOneAndUpdateOptions{
				ArrayFilters: []any{d("x", 2)}, BypassDocumentValidation: driver.Ptr(true), Collation: d("locale", "fr"), Hint: "h",
				Let: d("v", 1), Comment: "c", MaxTime: driver.Ptr(2 * time.Second), Projection: d("a", 1), ReturnDocument: driver.After,
				Sort: d("s", 1), Upsert: driver.Ptr(true)}).Err()
		}, map[string]string{"query": `{"_id": 1}`, "update": `{"$set": {"a": 1}}`, "new": "true", "fields": `{"a": 1}`, "upsert": "true",
			"bypassDocumentValidation": "true", "maxTimeMS": "2000", "collation": `{"locale": "fr"}`, "arrayFilters": `[{"x": 2}]`,
			"hint": `"h"`, "let": `{"v": 1}`, "comment": `"c"`, "sort": `{"s": 1}`, "remove": "-"}},
		{"findOneAndReplace", func() error {
			return coll.FindOneAndReplace(ctx, d("_id", 1), d("a", 1), &driver.FindOneAndReplaceOptions{ReturnDocument: driver.Before}).Err()
		}, map[string]string{"update": `{"a": 1}`, "new": "-", "remove": "-"}},
		{"findOneAndDelete", func() error {
			return coll.FindOneAndDelete(ctx, d("_id", 1), &driver.FindOneAndDeleteOptions{Sort: d("s", -1), Projection: d("b", 0)}).Err()
		}, map[string]string{"remove": "true", "update": "-", "new": "-", "sort": `{"s": -1}`, "fields": `{"b": 0}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.ClearCommands()
			_ = tt.run() // only the command's shape is checked, not its result
			cmds := writeCommands(srv)
			if len(cmds) != 1 {
				t.Fatalf("sent %v, want one write command", writeNames(srv))
			}
			for path, want := range tt.want {
				v, err := cmds[0].Body.LookupPath(path)
				got := "-"
				if err == nil {
					got = v.String()
				}
				if want = strings.ReplaceAll(want, " ", ""); got != want {
					t.Errorf("%s = %s, want %s (command %s)", path, got, want, cmds[0].Body)
				}
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")
	reseed(t, ctx, coll, item{ID: 1, Qty: 1}, item{ID: 2, Qty: 2})
	tests := []struct {
		name string
		run  func() error
		code int32
	}{
		{"ReplaceOne changes _id", func() error {
			_, err := coll.ReplaceOne(ctx, d("_id", 1), d("_id", 5, "qty", 1))
			return err
		}, 66},
		{"UpdateOne changes _id", func() error {
			_, err := coll.UpdateOne(ctx, d("_id", 1), d("$set", d("_id", 2)))
			return err
		}, 66},
		{"UpdateOne mixed operators", func() error {
			_, err := coll.UpdateOne(ctx, d("_id", 1), d("$set", d("qty", 2), "qty", 3))
			return err
		}, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			var we *driver.WriteException
			if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Index != 0 || we.WriteErrors[0].Code != tt.code {
				t.Fatalf("err %v (%T), want a write error with code %d", err, err, tt.code)
			}
			var oe *driver.OperationError
			if !errors.As(err, &oe) {
				t.Errorf("%T is not in an *OperationError", err)
			}
		})
	}

	// A write concern error: the write is applied and reported.
	if err := srv.SetFailPoint(d("configureFailPoint", "failCommand", "mode", d("times", 3),
		"data", d("failCommands", bson.A{"update", "delete", "findAndModify"}, "writeConcernError", d("code", 64, "codeName", "WriteConcernFailed", "errmsg", "waiting for replication timed out")))); err != nil {
		t.Fatal(err)
	}
	wceTests := []struct {
		name string
		run  func() error
	}{
		{"UpdateOne", func() error { _, err := coll.UpdateOne(ctx, d("_id", 2), d("$set", d("qty", 22))); return err }},
		{"DeleteOne", func() error { _, err := coll.DeleteOne(ctx, d("_id", 99)); return err }},
		{"FindOneAndUpdate", func() error {
			return coll.FindOneAndUpdate(ctx, d("_id", 2), d("$set", d("qty", 23))).Err()
		}},
	}
	for _, tt := range wceTests {
		t.Run("wce "+tt.name, func(t *testing.T) {
			err := tt.run()
			var we *driver.WriteException
			var wce *driver.WriteConcernError
			if !errors.As(err, &we) || we.WriteConcernError == nil || we.WriteConcernError.Code != 64 || !errors.As(err, &wce) {
				t.Fatalf("err %v (%T), want a WriteException with the write concern error", err, err)
			}
		})
	}
	if got := contents(t, ctx, coll); got[1].Qty != 23 {
		t.Errorf("the writes with write concern errors were not applied: %+v", got)
	}
}

func TestFindOneAndModify(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")
	base := []any{item{ID: 1, Qty: 10, Tag: "a"}, item{ID: 2, Qty: 20, Tag: "a"}, item{ID: 3, Qty: 30, Tag: "b"}}
	tests := []struct {
		name    string
		run     func() *driver.SingleResult
		want    *item // nil: ErrNoDocuments
		after   []item
		wantErr error
	}{
		{"update before", func() *driver.SingleResult {
			return coll.FindOneAndUpdate(ctx, d("tag", "a"), d("$inc", d("qty", 1)), &driver.FindOneAndUpdateOptions{Sort: d("qty", -1)})
		}, &item{2, 20, "a"}, []item{{1, 10, "a"}, {2, 21, "a"}, {3, 30, "b"}}, nil},
		{"update after projection", func() *driver.SingleResult {
			return coll.FindOneAndUpdate(ctx, d("_id", 1), d("$inc", d("qty", 1)),
				&driver.FindOneAndUpdateOptions{ReturnDocument: driver.After, Projection: d("tag", 0)})
		}, &item{1, 11, ""}, []item{{1, 11, "a"}, {2, 20, "a"}, {3, 30, "b"}}, nil},
		{"update pipeline", func() *driver.SingleResult {
			return coll.FindOneAndUpdate(ctx, d("_id", 3), bson.A{d("$set", d("tag", "c"))}, &driver.FindOneAndUpdateOptions{ReturnDocument: driver.After})
		}, &item{3, 30, "c"}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "c"}}, nil},
		{"update nothing", func() *driver.SingleResult {
			return coll.FindOneAndUpdate(ctx, d("_id", 7), d("$inc", d("qty", 1)))
		}, nil, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}}, nil},
		{"update upsert before", func() *driver.SingleResult {
			return coll.FindOneAndUpdate(ctx, d("_id", 7), d("$inc", d("qty", 1)), &driver.FindOneAndUpdateOptions{Upsert: driver.Ptr(true)})
		}, nil, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}, {7, 1, ""}}, nil},
		{"update upsert after", func() *driver.SingleResult {
			return coll.FindOneAndUpdate(ctx, d("_id", 7), d("$inc", d("qty", 1)), &driver.FindOneAndUpdateOptions{Upsert: driver.Ptr(true), ReturnDocument: driver.After})
		}, &item{7, 1, ""}, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}, {7, 1, ""}}, nil},
		{"replace before", func() *driver.SingleResult {
			return coll.FindOneAndReplace(ctx, d("_id", 2), d("qty", 5))
		}, &item{2, 20, "a"}, []item{{1, 10, "a"}, {2, 5, ""}, {3, 30, "b"}}, nil},
		{"replace after", func() *driver.SingleResult {
			return coll.FindOneAndReplace(ctx, d("_id", 2), d("qty", 5), &driver.FindOneAndReplaceOptions{ReturnDocument: driver.After})
		}, &item{2, 5, ""}, []item{{1, 10, "a"}, {2, 5, ""}, {3, 30, "b"}}, nil},
		{"delete sorted", func() *driver.SingleResult {
			return coll.FindOneAndDelete(ctx, d("tag", "a"), &driver.FindOneAndDeleteOptions{Sort: d("_id", -1), Hint: "_id_"})
		}, &item{2, 20, "a"}, []item{{1, 10, "a"}, {3, 30, "b"}}, nil},
		{"delete nothing", func() *driver.SingleResult {
			return coll.FindOneAndDelete(ctx, d("tag", "q"))
		}, nil, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}}, nil},
		{"replace changes _id", func() *driver.SingleResult {
			return coll.FindOneAndReplace(ctx, d("_id", 2), d("_id", 8))
		}, nil, []item{{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}}, errors.New("ImmutableField")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reseed(t, ctx, coll, base...)
			r := tt.run()
			got, err := driver.Decode[item](r)
			switch {
			case tt.wantErr != nil:
				var ce *driver.CommandError
				if !errors.As(err, &ce) || !strings.Contains(ce.CodeName, tt.wantErr.Error()) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
			case tt.want == nil:
				if !errors.Is(err, driver.ErrNoDocuments) {
					t.Fatalf("got %+v, %v; want ErrNoDocuments", got, err)
				}
			case err != nil:
				t.Fatal(err)
			case got != *tt.want:
				t.Errorf("got %+v, want %+v", got, *tt.want)
			}
			if after := contents(t, ctx, coll); !reflect.DeepEqual(after, tt.after) {
				t.Errorf("collection %+v, want %+v", after, tt.after)
			}
		})
	}
}

func TestBulkWrite(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")
	base := []any{item{ID: 1, Qty: 10, Tag: "a"}, item{ID: 2, Qty: 20, Tag: "a"}, item{ID: 3, Qty: 30, Tag: "b"}}
	mixed := []driver.WriteModel{
		driver.InsertOneModel{Document: item{ID: 4, Qty: 40}},
		&driver.InsertOneModel{Document: item{ID: 5, Qty: 50}},
		driver.UpdateOneModel{Filter: d("_id", 1), Update: d("$inc", d("qty", 1))},
		driver.UpdateManyModel{Filter: d("tag", "a"), Update: d("$set", d("tag", "m"))},
		driver.ReplaceOneModel{Filter: d("_id", 6), Replacement: d("qty", 60), Upsert: driver.Ptr(true)},
		driver.DeleteOneModel{Filter: d("_id", 3)},
		driver.InsertOneModel{Document: item{ID: 7, Qty: 70}},
		driver.DeleteManyModel{Filter: d("qty", d("$gte", 50))},
	}
	wantMixed := &driver.BulkWriteResult{InsertedCount: 3, MatchedCount: 3, ModifiedCount: 3, DeletedCount: 4, UpsertedCount: 1,
		InsertedIDs: map[int]any{0: int32(4), 1: int32(5), 6: int32(7)}, UpsertedIDs: map[int]any{4: int32(6)}, Acknowledged: true}
	tests := []struct {
		name     string
		models   []driver.WriteModel
		opts     *driver.BulkWriteOptions
		want     *driver.BulkWriteResult
		commands []string
		// errIdx are the indexes of the write errors, when it fails.
		errIdx  []int
		partial *driver.BulkWriteResult
		after   []item
	}{
		{name: "ordered mixed", models: mixed, want: wantMixed,
			commands: []string{"insert", "update", "delete", "insert", "delete"},
			after:    []item{{1, 11, "m"}, {2, 20, "m"}, {4, 40, ""}}},
		{name: "unordered mixed groups by kind", models: mixed, opts: &driver.BulkWriteOptions{Ordered: driver.Ptr(false)}, want: wantMixed,
			commands: []string{"insert", "update", "delete"},
			after:    []item{{1, 11, "m"}, {2, 20, "m"}, {4, 40, ""}}},
		{name: "ordered stops at the first error",
			models: []driver.WriteModel{
				driver.UpdateOneModel{Filter: d("_id", 1), Update: d("$inc", d("qty", 1))},
				driver.InsertOneModel{Document: item{ID: 4}},
				driver.InsertOneModel{Document: item{ID: 2}},
				driver.InsertOneModel{Document: item{ID: 5}},
				driver.DeleteOneModel{Filter: d("_id", 1)},
			},
			commands: []string{"update", "insert"}, errIdx: []int{2},
			partial: &driver.BulkWriteResult{InsertedCount: 1, MatchedCount: 1, ModifiedCount: 1, InsertedIDs: map[int]any{1: int32(4)}, UpsertedIDs: map[int]any{}, Acknowledged: true},
			after:   []item{{1, 11, "a"}, {2, 20, "a"}, {3, 30, "b"}, {4, 0, ""}}},
		{name: "unordered reports every error with its index",
			models: []driver.WriteModel{
				driver.InsertOneModel{Document: item{ID: 1}},
				driver.DeleteOneModel{Filter: d("_id", 3)},
				driver.InsertOneModel{Document: item{ID: 4}},
				driver.UpdateOneModel{Filter: d("_id", 2), Update: d("$set", d("_id", 9))},
				driver.InsertOneModel{Document: item{ID: 2}},
				driver.UpdateOneModel{Filter: d("_id", 1), Update: d("$set", d("tag", "u"))},
			},
			opts:     &driver.BulkWriteOptions{Ordered: driver.Ptr(false)},
			commands: []string{"insert", "delete", "update"}, errIdx: []int{0, 4, 3},
			partial: &driver.BulkWriteResult{InsertedCount: 1, MatchedCount: 1, ModifiedCount: 1, DeletedCount: 1,
				InsertedIDs: map[int]any{2: int32(4)}, UpsertedIDs: map[int]any{}, Acknowledged: true},
			after: []item{{1, 10, "u"}, {2, 20, "a"}, {4, 0, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reseed(t, ctx, coll, base...)
			srv.ClearCommands()
			var opts []*driver.BulkWriteOptions
			if tt.opts != nil {
				opts = append(opts, tt.opts)
			}
			res, err := coll.BulkWrite(ctx, tt.models, opts...)
			if tt.errIdx == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(res, tt.want) {
					t.Errorf("result %+v, want %+v", res, tt.want)
				}
			} else {
				var bwe *driver.BulkWriteException
				if !errors.As(err, &bwe) {
					t.Fatalf("err %v, want a BulkWriteException", err)
				}
				var idx []int
				for _, we := range bwe.WriteErrors {
					idx = append(idx, we.Index)
				}
				if !reflect.DeepEqual(idx, tt.errIdx) {
					t.Errorf("write error indexes %v, want %v (%v)", idx, tt.errIdx, err)
				}
				if !reflect.DeepEqual(bwe.PartialResult, tt.partial) {
					t.Errorf("partial result %+v, want %+v", bwe.PartialResult, tt.partial)
				}
			}
			if got := writeNames(srv); !reflect.DeepEqual(got, tt.commands) {
				t.Errorf("commands %v, want %v", got, tt.commands)
			}
			if after := contents(t, ctx, coll); !reflect.DeepEqual(after, tt.after) {
				t.Errorf("collection %+v, want %+v", after, tt.after)
			}
		})
	}
}

// TestBulkWriteSplits checks that a bulk write over maxWriteBatchSize
// (100,000) or maxMessageSizeBytes (48 MB) goes in several commands, and
// that the write errors of later commands carry their index in models.
func TestBulkWriteSplits(t *testing.T) {
	if testing.Short() {
		t.Skip("sends over 100,000 statements and ~50 MB; skipped with -short")
	}
	srv := mongotest.NewServer(t, mongotest.Options{CommandLogSize: 64})
	c := dial(t, srv.URI(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	coll := c.Database("shop").Collection("many")

	const n = mongotest.MaxWriteBatchSize + 1
	models := make([]driver.WriteModel, 0, n+1)
	models = append(models, driver.DeleteManyModel{Filter: d()})
	for i := range n {
		models = append(models, driver.InsertOneModel{Document: d("_id", int32(i))})
	}
	// Duplicates of _id 3 at models[5] and of _id 0 at models[n].
	models[5] = driver.InsertOneModel{Document: d("_id", int32(3))}
	models[n] = driver.InsertOneModel{Document: d("_id", int32(0))}

	tests := []struct {
		name      string
		ordered   bool
		sizes     []int // statements per insert command
		errIdx    []int
		inserted  int64
		lastIDKey int // an index expected in InsertedIDs
	}{
		{"unordered", false, []int{mongotest.MaxWriteBatchSize, 1}, []int{5, n}, n - 2, n - 1},
		{"ordered", true, []int{mongotest.MaxWriteBatchSize}, []int{5}, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.ClearCommands()
			_, err := coll.BulkWrite(ctx, models, &driver.BulkWriteOptions{Ordered: &tt.ordered})
			var bwe *driver.BulkWriteException
			if !errors.As(err, &bwe) {
				t.Fatalf("err %v, want a BulkWriteException", err)
			}
			var idx []int
			for _, we := range bwe.WriteErrors {
				idx = append(idx, we.Index)
				if we.Code != 11000 {
					t.Errorf("write error %v, want a duplicate key", we)
				}
			}
			if !reflect.DeepEqual(idx, tt.errIdx) {
				t.Errorf("write error indexes %v, want %v", idx, tt.errIdx)
			}
			pr := bwe.PartialResult
			if pr.InsertedCount != tt.inserted || int64(len(pr.InsertedIDs)) != tt.inserted || pr.InsertedIDs[tt.lastIDKey] == nil {
				t.Errorf("partial result: %d inserted, %d ids, id of %d: %v; want %d", pr.InsertedCount, len(pr.InsertedIDs), tt.lastIDKey, pr.InsertedIDs[tt.lastIDKey], tt.inserted)
			}
			var sizes []int
			for _, c := range writeCommands(srv) {
				if c.Name == "insert" {
					sizes = append(sizes, len(mustValues(t, c.Body.Lookup("documents").Array())))
				}
			}
			if !reflect.DeepEqual(sizes, tt.sizes) {
				t.Errorf("insert commands of %v statements, want %v", sizes, tt.sizes)
			}
		})
	}

	// By size: five 10 MB documents fit four to a 48 MB message.
	big := strings.Repeat("x", 10_000_000)
	var bigModels []driver.WriteModel
	for i := range 5 {
		bigModels = append(bigModels, driver.InsertOneModel{Document: d("_id", i, "s", big)})
	}
	srv.ClearCommands()
	res, err := coll.Database().Collection("big").BulkWrite(ctx, bigModels)
	if err != nil || res.InsertedCount != 5 {
		t.Fatalf("five 10 MB inserts: %+v, %v", res, err)
	}
	var sizes []int
	for _, c := range writeCommands(srv) {
		if c.Name != "insert" {
			t.Errorf("sent %s", c.Name)
			continue
		}
		sizes = append(sizes, len(mustValues(t, c.Body.Lookup("documents").Array())))
	}
	if !reflect.DeepEqual(sizes, []int{4, 1}) {
		t.Errorf("insert commands of %v documents, want [4 1]", sizes)
	}
}

func mustValues(t *testing.T, r bson.Raw) []bson.RawValue {
	t.Helper()
	vs, err := r.Values()
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// wireProxy sits between the client and a server and records the flags
// and command name of every OP_MSG the client sends.
type wireProxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
	msgs   []proxiedMsg
	closed bool
}

type proxiedMsg struct {
	name       string
	moreToCome bool
}

func newWireProxy(t *testing.T, target string) *wireProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &wireProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *wireProxy) accept() {
	defer p.wg.Done()
	for {
		cc, err := p.ln.Accept()
		if err != nil {
			return
		}
		sc, err := net.Dial("tcp", p.target)
		if err != nil {
			cc.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			cc.Close()
			sc.Close()
			return
		}
		p.conns = append(p.conns, cc, sc)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(cc, sc)
			cc.Close()
		}()
		go func() {
			defer p.wg.Done()
			p.forward(cc, sc)
			sc.Close()
		}()
	}
}

// forward copies messages from the client to the server, noting each.
func (p *wireProxy) forward(from, to net.Conn) {
	var hdr [16]byte
	for {
		if _, err := io.ReadFull(from, hdr[:]); err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint32(hdr[:4]))
		if n < 16 || n > 64<<20 {
			return
		}
		msg := make([]byte, n)
		copy(msg, hdr[:])
		if _, err := io.ReadFull(from, msg[16:]); err != nil {
			return
		}
		if op := binary.LittleEndian.Uint32(hdr[12:]); op == 2013 && n > 21 && msg[20] == 0 {
			body := bson.Raw(msg[21:])
			if el, err := body.Index(0); err == nil {
				p.mu.Lock()
				p.msgs = append(p.msgs, proxiedMsg{name: el.Key(), moreToCome: binary.LittleEndian.Uint32(msg[16:])&2 != 0})
				p.mu.Unlock()
			}
		}
		if _, err := to.Write(msg); err != nil {
			return
		}
	}
}

func (p *wireProxy) messages() []proxiedMsg {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxiedMsg(nil), p.msgs...)
}

func (p *wireProxy) close() {
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// TestUnacknowledgedWrites checks that under w:0 every write goes with
// moreToCome (seen on the wire), returns Acknowledged false, and arrives.
func TestUnacknowledgedWrites(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	p := newWireProxy(t, srv.Addr())
	c := dial(t, "mongodb://"+p.ln.Addr().String()+"/?directConnection=true", nil)
	ctx := testCtx(t)
	acked := c.Database("shop").Collection("items")
	reseed(t, ctx, acked, item{ID: 1, Qty: 10}, item{ID: 2, Qty: 20}, item{ID: 3, Qty: 30})
	coll := c.Database("shop").Collection("items", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})

	tests := []struct {
		name string
		cmd  string
		run  func() (acknowledged bool, err error)
		// done tells whether the write has arrived.
		done func(items []item) bool
	}{
		{"InsertOne", "insert", func() (bool, error) {
			r, err := coll.InsertOne(ctx, item{ID: 4, Qty: 40})
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return len(it) == 4 && it[3].Qty == 40 }},
		{"InsertMany", "insert", func() (bool, error) {
			r, err := coll.InsertMany(ctx, []any{item{ID: 5, Qty: 50}, item{ID: 6, Qty: 60}})
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return len(it) == 6 }},
		{"UpdateOne", "update", func() (bool, error) {
			r, err := coll.UpdateOne(ctx, d("_id", 1), d("$set", d("qty", 11)), &driver.UpdateOptions{Hint: "_id_"})
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return it[0].Qty == 11 }},
		{"UpdateMany", "update", func() (bool, error) {
			r, err := coll.UpdateMany(ctx, d(), d("$inc", d("qty", 1)))
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return it[0].Qty == 12 && it[5].Qty == 61 }},
		{"ReplaceOne", "update", func() (bool, error) {
			r, err := coll.ReplaceOne(ctx, d("_id", 2), d("qty", 2))
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return it[1].Qty == 2 }},
		{"DeleteOne", "delete", func() (bool, error) {
			r, err := coll.DeleteOne(ctx, d("_id", 6))
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return len(it) == 5 }},
		{"FindOneAndUpdate", "findAndModify", func() (bool, error) {
			err := coll.FindOneAndUpdate(ctx, d("_id", 3), d("$set", d("tag", "f"))).Err()
			if errors.Is(err, driver.ErrUnacknowledgedWrite) {
				return false, nil
			}
			return true, err
		}, func(it []item) bool { return it[2].Tag == "f" }},
		{"BulkWrite", "delete", func() (bool, error) {
			r, err := coll.BulkWrite(ctx, []driver.WriteModel{
				driver.InsertOneModel{Document: item{ID: 7, Qty: 70}},
				driver.UpdateOneModel{Filter: d("_id", 7), Update: d("$set", d("tag", "b"))},
				driver.DeleteManyModel{Filter: d("_id", d("$in", bson.A{4, 5}))},
			})
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return len(it) == 4 && it[3] == item{7, 70, "b"} }},
		{"DeleteMany", "delete", func() (bool, error) {
			r, err := coll.DeleteMany(ctx, d())
			return r != nil && r.Acknowledged, err
		}, func(it []item) bool { return len(it) == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(p.messages())
			ack, err := tt.run()
			if err != nil || ack {
				t.Fatalf("acknowledged %v, err %v; want an unacknowledged result", ack, err)
			}
			// The write arrives; an acknowledged read on another connection
			// may run first, so poll.
			for !tt.done(contents(t, ctx, acked)) {
				if ctx.Err() != nil {
					t.Fatalf("the write never arrived: %+v", contents(t, context.Background(), acked))
				}
				time.Sleep(5 * time.Millisecond)
			}
			var sent []proxiedMsg
			for _, m := range p.messages()[before:] {
				switch m.name {
				case "insert", "update", "delete", "findAndModify":
					sent = append(sent, m)
				}
			}
			if len(sent) == 0 || sent[len(sent)-1].name != tt.cmd {
				t.Fatalf("sent %+v, want %s last", sent, tt.cmd)
			}
			for _, m := range sent {
				if !m.moreToCome {
					t.Errorf("%s went without moreToCome", m.name)
				}
			}
		})
	}
}

// TestWriteBadInput checks that every bad argument is an *ArgumentError
// naming it, and that nothing is sent.
func TestWriteBadInput(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	old := mongotest.NewServer(t, mongotest.Options{MaxWireVersion: 8, Version: "4.2.0"})
	c := dial(t, srv.URI(), nil)
	cOld := dial(t, old.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")
	unack := cOld.Database("shop").Collection("items", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
	huge := d("s", strings.Repeat("x", 17<<20))
	var nilInsert *driver.InsertOneModel

	tests := []struct {
		name string
		run  func() error
		arg  string
		on   *mongotest.Server
	}{
		{"UpdateOne nil filter", func() error { _, err := coll.UpdateOne(ctx, nil, d("$set", d("a", 1))); return err }, "filter", srv},
		{"UpdateOne nil update", func() error { _, err := coll.UpdateOne(ctx, d(), nil); return err }, "update", srv},
		{"UpdateOne without operators", func() error { _, err := coll.UpdateOne(ctx, d(), d("a", 1)); return err }, "update", srv},
		{"UpdateMany without operators", func() error { _, err := coll.UpdateMany(ctx, d(), d("a", 1, "$set", d("b", 1))); return err }, "update", srv},
		{"UpdateOne empty update", func() error { _, err := coll.UpdateOne(ctx, d(), d()); return err }, "update", srv},
		{"UpdateOne update not a document", func() error { _, err := coll.UpdateOne(ctx, d(), 5); return err }, "update", srv},
		{"UpdateOne pipeline stage not a document", func() error { _, err := coll.UpdateOne(ctx, d(), bson.A{d("$set", d("a", 1)), 3}); return err }, "update[1]", srv},
		{"UpdateOne bad arrayFilter", func() error {
			_, err := coll.UpdateOne(ctx, d(), d("$set", d("a", 1)), &driver.UpdateOptions{ArrayFilters: []any{d("x", 1), nil}})
			return err
		}, "UpdateOptions.ArrayFilters[1]", srv},
		{"UpdateOne hint not a string or document", func() error {
			_, err := coll.UpdateOne(ctx, d(), d("$set", d("a", 1)), &driver.UpdateOptions{Hint: 3})
			return err
		}, "UpdateOptions.Hint", srv},
		{"UpdateMany with sort", func() error {
			_, err := coll.UpdateMany(ctx, d(), d("$set", d("a", 1)), &driver.UpdateOptions{Sort: d("a", 1)})
			return err
		}, "UpdateOptions.Sort", srv},
		{"UpdateOne let not a document", func() error {
			_, err := coll.UpdateOne(ctx, d(), d("$set", d("a", 1)), &driver.UpdateOptions{Let: "x"})
			return err
		}, "UpdateOptions.Let", srv},
		{"ReplaceOne nil replacement", func() error { _, err := coll.ReplaceOne(ctx, d(), nil); return err }, "replacement", srv},
		{"ReplaceOne with operators", func() error { _, err := coll.ReplaceOne(ctx, d(), d("$set", d("a", 1))); return err }, "replacement", srv},
		{"ReplaceOne over maxBsonObjectSize", func() error { _, err := coll.ReplaceOne(ctx, d(), huge); return err }, "replacement", srv},
		{"DeleteOne nil filter", func() error { _, err := coll.DeleteOne(ctx, nil); return err }, "filter", srv},
		{"DeleteMany filter not a document", func() error { _, err := coll.DeleteMany(ctx, 7); return err }, "filter", srv},
		{"InsertOne nil", func() error { _, err := coll.InsertOne(ctx, nil); return err }, "document", srv},
		{"InsertOne over maxBsonObjectSize", func() error { _, err := coll.InsertOne(ctx, huge); return err }, "document", srv},
		{"InsertMany empty", func() error { _, err := coll.InsertMany(ctx, nil); return err }, "documents", srv},
		{"InsertMany nil document", func() error { _, err := coll.InsertMany(ctx, []any{d("a", 1), nil}); return err }, "documents[1]", srv},
		{"InsertMany over maxBsonObjectSize", func() error { _, err := coll.InsertMany(ctx, []any{huge, d("a", 1)}); return err }, "documents[0]", srv},
		{"FindOneAndUpdate nil filter", func() error { return coll.FindOneAndUpdate(ctx, nil, d("$set", d("a", 1))).Err() }, "filter", srv},
		{"FindOneAndUpdate without operators", func() error { return coll.FindOneAndUpdate(ctx, d(), d("a", 1)).Err() }, "update", srv},
		{"FindOneAndReplace with operators", func() error { return coll.FindOneAndReplace(ctx, d(), d("$inc", d("a", 1))).Err() }, "replacement", srv},
		{"FindOneAndReplace over maxBsonObjectSize", func() error { return coll.FindOneAndReplace(ctx, d(), huge).Err() }, "replacement", srv},
		{"FindOneAndUpdate over maxBsonObjectSize", func() error {
			return coll.FindOneAndUpdate(ctx, d(), d("$set", huge)).Err()
		}, "update", srv},
		{"FindOneAndDelete negative MaxTime", func() error {
			return coll.FindOneAndDelete(ctx, d(), &driver.FindOneAndDeleteOptions{MaxTime: driver.Ptr(-time.Second)}).Err()
		}, "FindOneAndDeleteOptions.MaxTime", srv},
		{"FindOneAndUpdate projection not a document", func() error {
			return coll.FindOneAndUpdate(ctx, d(), d("$set", d("a", 1)), &driver.FindOneAndUpdateOptions{Projection: 1}).Err()
		}, "FindOneAndUpdateOptions.Projection", srv},
		{"BulkWrite empty", func() error { _, err := coll.BulkWrite(ctx, nil); return err }, "models", srv},
		{"BulkWrite nil model", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.InsertOneModel{Document: d()}, nil})
			return err
		}, "models[1]", srv},
		{"BulkWrite nil pointer model", func() error { _, err := coll.BulkWrite(ctx, []driver.WriteModel{nilInsert}); return err }, "models[0]", srv},
		{"BulkWrite update without operators", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.InsertOneModel{Document: d()}, driver.DeleteOneModel{Filter: d()},
				driver.UpdateManyModel{Filter: d(), Update: d("a", 1)}})
			return err
		}, "models[2].Update", srv},
		{"BulkWrite replacement with operators", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{&driver.ReplaceOneModel{Filter: d(), Replacement: d("$set", d("a", 1))}})
			return err
		}, "models[0].Replacement", srv},
		{"BulkWrite nil filter", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.DeleteManyModel{}})
			return err
		}, "models[0].Filter", srv},
		{"BulkWrite insert over maxBsonObjectSize", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.InsertOneModel{Document: huge}})
			return err
		}, "models[0]", srv},
		{"BulkWrite bad hint", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.DeleteOneModel{Filter: d(), Hint: 1.5}})
			return err
		}, "models[0].Hint", srv},
		// A hint on an unacknowledged delete or findAndModify needs 4.4
		// (the CRUD spec); updates take one from 4.2
		// (TestUnacknowledgedUpdateHint).
		{"DeleteMany unacknowledged hint before 4.4", func() error {
			_, err := unack.DeleteMany(ctx, d(), &driver.DeleteOptions{Hint: "_id_"})
			return err
		}, "DeleteOptions.Hint", old},
		{"FindOneAndDelete unacknowledged hint before 4.4", func() error {
			return unack.FindOneAndDelete(ctx, d(), &driver.FindOneAndDeleteOptions{Hint: "_id_"}).Err()
		}, "FindOneAndDeleteOptions.Hint", old},
		{"BulkWrite unacknowledged hint before 4.4", func() error {
			_, err := unack.BulkWrite(ctx, []driver.WriteModel{driver.InsertOneModel{Document: d()}, driver.DeleteOneModel{Filter: d(), Hint: "_id_"}})
			return err
		}, "models[1].Hint", old},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.on.ClearCommands()
			err := tt.run()
			var ae *driver.ArgumentError
			if !errors.As(err, &ae) || ae.Argument != tt.arg {
				t.Fatalf("err %v (%T), want an ArgumentError naming %s", err, err, tt.arg)
			}
			if strings.Contains(tt.name, "maxBsonObjectSize") && !errors.Is(err, driver.ErrDocumentTooLarge) {
				t.Errorf("%v is not ErrDocumentTooLarge", err)
			}
			if sent := writeNames(tt.on); len(sent) > 0 {
				t.Errorf("sent %v", sent)
			}
		})
	}

	// A 4.4+ server takes the hint on an unacknowledged write.
	unackNew := coll.Database().Collection("items", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
	srv.ClearCommands()
	if _, err := unackNew.DeleteOne(ctx, d(), &driver.DeleteOptions{Hint: "_id_"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitForCommand(ctx, "delete"); err != nil {
		t.Fatal(err)
	}
}

// TestUnacknowledgedUpdateHint checks that an unacknowledged update,
// replacement or bulk update with a hint is sent to a 4.2 server: the CRUD
// specification raises a client error only for delete and findAndModify
// hints (crud/tests/unified/*update*-hint-unacknowledged.json, "on 4.2+
// server").
func TestUnacknowledgedUpdateHint(t *testing.T) {
	old := mongotest.NewServer(t, mongotest.Options{MaxWireVersion: 8, Version: "4.2.0"})
	c := dial(t, old.URI(), nil)
	ctx := testCtx(t)
	unack := c.Database("shop").Collection("items", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
	tests := []struct {
		name string
		run  func() error
		hint string
	}{
		{"UpdateOne", func() error {
			_, err := unack.UpdateOne(ctx, d(), d("$set", d("a", 1)), &driver.UpdateOptions{Hint: "_id_"})
			return err
		}, `"_id_"`},
		{"UpdateMany", func() error {
			_, err := unack.UpdateMany(ctx, d(), d("$set", d("a", 1)), &driver.UpdateOptions{Hint: d("_id", 1)})
			return err
		}, `{"_id":1}`},
		{"ReplaceOne", func() error {
			_, err := unack.ReplaceOne(ctx, d(), d("a", 1), &driver.ReplaceOptions{Hint: d("_id", 1)})
			return err
		}, `{"_id":1}`},
		{"BulkWrite", func() error {
			_, err := unack.BulkWrite(ctx, []driver.WriteModel{
				driver.UpdateOneModel{Filter: d(), Update: d("$set", d("a", 1)), Hint: "_id_"},
				driver.UpdateManyModel{Filter: d(), Update: d("$set", d("a", 1)), Hint: "_id_"},
				driver.ReplaceOneModel{Filter: d(), Replacement: d("a", 1), Hint: "_id_"},
			})
			return err
		}, `"_id_"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old.ClearCommands()
			if err := tt.run(); err != nil {
				t.Fatalf("err %v, want the unacknowledged update sent", err)
			}
			cmd, err := old.WaitForCommand(ctx, "update")
			if err != nil {
				t.Fatal(err)
			}
			if got := field(cmd.Body, "updates", "0", "hint"); got != tt.hint {
				t.Errorf("updates[0].hint %s, want %s", got, tt.hint)
			}
		})
	}
}

// TestBulkWriteWriteConcernErrors checks that a write concern error does
// not stop an ordered bulk write, and that each command's is reported.
func TestBulkWriteWriteConcernErrors(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")
	reseed(t, ctx, coll, item{ID: 1, Qty: 10})
	if err := srv.SetFailPoint(d("configureFailPoint", "failCommand", "mode", d("times", 2),
		"data", d("failCommands", bson.A{"insert", "delete"}, "writeConcernError", d("code", 64, "codeName", "WriteConcernFailed", "errmsg", "waiting for replication timed out")))); err != nil {
		t.Fatal(err)
	}
	_, err := coll.BulkWrite(ctx, []driver.WriteModel{
		driver.InsertOneModel{Document: item{ID: 2, Qty: 20}},
		driver.UpdateOneModel{Filter: d("_id", 1), Update: d("$set", d("qty", 11))},
		driver.DeleteOneModel{Filter: d("_id", 2)},
	})
	var bwe *driver.BulkWriteException
	if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 0 || len(bwe.WriteConcernErrors) != 2 || bwe.WriteConcernErrors[1].Code != 64 {
		t.Fatalf("err %v, want a BulkWriteException with two write concern errors", err)
	}
	want := &driver.BulkWriteResult{InsertedCount: 1, MatchedCount: 1, ModifiedCount: 1, DeletedCount: 1,
		InsertedIDs: map[int]any{0: int32(2)}, UpsertedIDs: map[int]any{}, Acknowledged: true}
	if !reflect.DeepEqual(bwe.PartialResult, want) {
		t.Errorf("partial result %+v, want %+v", bwe.PartialResult, want)
	}
	if got := contents(t, ctx, coll); !reflect.DeepEqual(got, []item{{1, 11, ""}}) {
		t.Errorf("collection %+v", got)
	}
}
