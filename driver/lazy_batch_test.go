package driver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Cursor replies are checked for framing on arrival, and each batch
// document by whoever reads it: a document whose interior is malformed
// (here a string that is not UTF-8, and one whose inner length is wrong)
// reaches the caller as a typed decoding error, with no panic, and the
// cursor's other documents still decode.
func TestCursorBatchCheckedByReaders(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	// The command log and a command monitor see the reply as it came.
	var logs bytes.Buffer
	c := dial(t, srv.URI(), &driver.ClientOptions{Logging: &logging.Options{
		Handler: slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}),
		Levels:  map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug},
	}})
	ctx := testCtx(t)
	good, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: "fine"}})
	badUTF8, _ := bson.Marshal(bson.D{{Key: "_id", Value: 2}, {Key: "s", Value: "ab"}})
	badUTF8[len(badUTF8)-3] = 0xff // the string's second byte: not UTF-8
	badLen, _ := bson.Marshal(bson.D{{Key: "_id", Value: 3}, {Key: "d", Value: bson.D{{Key: "x", Value: 1}}}})
	// The inner document's length says 200, far past its end.
	inner := len(badLen) - 1 - 13
	binary.LittleEndian.PutUint32(badLen[inner:], 200)
	reply := func() bson.Raw {
		st, b := bson.AppendDocumentStart(nil)
		cst, b := bson.AppendDocumentElementStart(b, "cursor")
		b = bson.AppendInt64Element(b, "id", 0)
		b = bson.AppendStringElement(b, "ns", "db.c")
		ast, b := bson.AppendArrayElementStart(b, "firstBatch")
		for i, d := range [][]byte{good, badUTF8, badLen, good} {
			b = bson.AppendDocumentElement(b, bson.ArrayKey(i), d)
		}
		b, _ = bson.AppendDocumentEnd(b, ast)
		b, _ = bson.AppendDocumentEnd(b, cst)
		b = bson.AppendDoubleElement(b, "ok", 1)
		b, _ = bson.AppendDocumentEnd(b, st)
		return b
	}()
	if bson.Raw(reply).Validate() == nil {
		t.Fatal("the crafted reply is valid: the test would prove nothing")
	}
	srv.HandleUnchecked("find", func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) { return reply, nil })
	cur, err := c.Database("db").Collection("c").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var ok, bad int
	for cur.Next(ctx) {
		_ = cur.Current.String()
		_, _ = cur.Current.LookupErr("d", "x")
		var v struct {
			ID int            `bson:"_id"`
			S  string         `bson:"s"`
			D  map[string]any `bson:"d"`
		}
		if err := cur.Decode(&v); err != nil {
			var de *bson.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("decoding a malformed document: %T %v, want a *bson.DecodeError", err, err)
			}
			bad++
			continue
		}
		ok++
	}
	if !bytes.Contains(logs.Bytes(), []byte("Command succeeded")) {
		t.Fatalf("no command log for the find:\n%s", logs.String())
	}
	if cur.Err() != nil || ok != 2 || bad != 2 {
		t.Fatalf("decoded %d, refused %d, cursor error %v; want 2, 2, nil", ok, bad, cur.Err())
	}
	// All stops at the first malformed document with the same typed error.
	cur, err = c.Database("db").Collection("c").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = driver.All[bson.D](ctx, cur)
	var de *bson.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("All over a malformed batch: %v", err)
	}
}
