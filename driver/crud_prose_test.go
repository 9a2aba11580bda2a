package driver_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The CRUD specification's prose tests (crud/tests/README.md) that need
// nothing of a later issue. 3-12 and 15 are MongoClient.bulkWrite's
// (not implemented yet), 14 needs an explain helper (none yet).

// Prose 1: WriteConcernError.details exposes writeConcernError.errInfo.
func TestProseWriteConcernErrorDetails(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	errInfo := d("writeConcern", d("w", 2, "wtimeout", 0, "provenance", "clientSupplied"))
	if err := srv.SetFailPoint(d("configureFailPoint", "failCommand", "mode", d("times", 1),
		"data", d("failCommands", bson.A{"insert"}, "writeConcernError", d("code", 100, "codeName", "UnsatisfiableWriteConcern",
			"errmsg", "Not enough data-bearing nodes", "errInfo", errInfo)))); err != nil {
		t.Fatal(err)
	}
	_, err := c.Database("db").Collection("test").InsertOne(testCtx(t), d("x", 1))
	var we *driver.WriteException
	if !errors.As(err, &we) || we.WriteConcernError == nil {
		t.Fatalf("err %v (%T), want a WriteException with a write concern error", err, err)
	}
	want, _ := bson.Marshal(errInfo)
	if !bytes.Equal(we.WriteConcernError.Details, want) || we.WriteConcernError.Code != 100 || we.WriteConcernError.Message != "Not enough data-bearing nodes" {
		t.Errorf("write concern error %+v (details %v), want code 100 and details %v", we.WriteConcernError, we.WriteConcernError.Details, bson.Raw(want))
	}
}

// Prose 2: WriteError.details exposes writeErrors[].errInfo, as the
// command's reply (seen by command monitoring) has it.
func TestProseWriteErrorDetails(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{Keep: eventtest.Only[*event.CommandSucceeded]}
	c := dial(t, srv.URI(), &driver.ClientOptions{Monitors: []any{rec}})
	ctx := testCtx(t)
	db := c.Database("db")
	if err := db.RunCommand(ctx, d("create", "test", "validator", d("x", d("$type", "string")))).Err(); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	_, err := db.Collection("test").InsertOne(ctx, d("x", 1))
	var we *driver.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 121 {
		t.Fatalf("err %v (%T), want a WriteException with DocumentValidationFailure (121)", err, err)
	}
	var reply bson.Raw
	for _, e := range eventtest.Of[*event.CommandSucceeded](rec) {
		if e.CommandName == "insert" {
			reply = e.Reply
		}
	}
	if reply == nil {
		t.Fatal("no CommandSucceededEvent for the insert")
	}
	info, err := reply.LookupErr("writeErrors", "0", "errInfo")
	if err != nil {
		t.Fatalf("the reply %v has no writeErrors[0].errInfo", reply)
	}
	if we.WriteErrors[0].Details == nil || !bytes.Equal(we.WriteErrors[0].Details, info.Value) {
		t.Errorf("details %v, want the reply's errInfo %v", we.WriteErrors[0].Details, info)
	}
}

// Prose 16: generated _ids are the first field of the document sent, for
// InsertOne, InsertMany and a collection BulkWrite (MongoClient.bulkWrite
// is not implemented yet).
func TestProseGeneratedIDFirst(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("db").Collection("ids")
	tests := []struct {
		name string
		run  func() error
	}{
		{"InsertOne", func() error { _, err := coll.InsertOne(ctx, d("x", 1, "y", 2)); return err }},
		{"InsertMany", func() error { _, err := coll.InsertMany(ctx, []any{d("x", 1), struct{ X int }{2}}); return err }},
		{"BulkWrite", func() error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.InsertOneModel{Document: map[string]int{"x": 1}}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.Reset()
			if err := tt.run(); err != nil {
				t.Fatal(err)
			}
			docs, err := lastSent(t, rec, "insert").LookupErr("documents")
			if err != nil {
				t.Fatal("the insert has no documents")
			}
			it := bson.Raw(docs.Value).Iter()
			n := 0
			for i := 0; it.Next(); i++ {
				n++
				first := it.Value().Document().Iter()
				if !first.Next() || first.Key() != "_id" || first.Value().Type != bson.TypeObjectID {
					t.Errorf("documents[%d] %v: the generated _id is not the first field", i, it.Value())
				}
			}
			if n == 0 {
				t.Error("the insert sent no documents")
			}
		})
	}
}
