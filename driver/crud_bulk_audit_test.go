package driver_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestBulkWriteOptionsPerCommand checks how BulkWriteOptions map onto the
// commands a bulk write sends (CRUD spec, BulkWriteOptions): let goes to
// update and delete but not insert, bypassDocumentValidation to insert and
// update (delete has none), comment and ordered to each; InsertOne and
// InsertMany send their own options the same way.
func TestBulkWriteOptionsPerCommand(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("bulkopts")
	srv.ClearCommands()
	_, err := coll.BulkWrite(ctx, []driver.WriteModel{
		driver.InsertOneModel{Document: d("_id", 1)},
		driver.UpdateOneModel{Filter: d("_id", 1), Update: d("$set", d("a", "$$v"))},
		driver.DeleteOneModel{Filter: d("_id", 2)},
	}, &driver.BulkWriteOptions{Ordered: driver.Ptr(false), BypassDocumentValidation: driver.Ptr(true), Comment: "bw", Let: d("v", 1)})
	_ = err // only the commands' shapes are checked; the delete is also sent on its own
	_, _ = coll.BulkWrite(ctx, []driver.WriteModel{driver.DeleteOneModel{Filter: d("_id", 2)}},
		&driver.BulkWriteOptions{Ordered: driver.Ptr(false), BypassDocumentValidation: driver.Ptr(true), Comment: "bw", Let: d("v", 1)})
	want := map[string]map[string]string{
		"insert": {"let": "-", "bypassDocumentValidation": "true", "comment": `"bw"`, "ordered": "false"},
		"update": {"let": `{"v":1}`, "bypassDocumentValidation": "true", "comment": `"bw"`, "ordered": "false"},
		"delete": {"let": `{"v":1}`, "bypassDocumentValidation": "-", "comment": `"bw"`, "ordered": "false"},
	}
	check := func(cmds []mongotest.Command, want map[string]map[string]string) {
		t.Helper()
		seen := map[string]bool{}
		for _, cmd := range cmds {
			seen[cmd.Name] = true
			for k, v := range want[cmd.Name] {
				got := "-"
				if x, err := cmd.Body.LookupErr(k); err == nil {
					got = x.String()
				}
				if got != v {
					t.Errorf("%s %s = %s, want %s", cmd.Name, k, got, v)
				}
			}
		}
		for name := range want {
			if !seen[name] {
				t.Errorf("no %s sent (sent %v)", name, writeNames(srv))
			}
		}
	}
	check(writeCommands(srv), want)

	srv.ClearCommands()
	if _, err := coll.InsertOne(ctx, d("_id", 3), &driver.InsertOneOptions{BypassDocumentValidation: driver.Ptr(false), Comment: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	check(writeCommands(srv), map[string]map[string]string{"insert": {"bypassDocumentValidation": "false", "comment": `{"k":1}`, "ordered": "true"}})
	srv.ClearCommands()
	if _, err := coll.InsertMany(ctx, []any{d("_id", 4)}, &driver.InsertManyOptions{Ordered: driver.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	check(writeCommands(srv), map[string]map[string]string{"insert": {"bypassDocumentValidation": "-", "comment": "-", "ordered": "false"}})
}

// TestUnacknowledgedHintByVersion checks the CRUD spec's rule for hints on
// unacknowledged deletes and findAndModify (crud/tests/unified/
// *-hint-unacknowledged.json): a client error and nothing sent before 4.4
// (wire version 9), the command sent from 4.4 on.
func TestUnacknowledgedHintByVersion(t *testing.T) {
	ops := []struct {
		name, cmd, arg string
		run            func(coll *driver.Collection) error
	}{
		{"DeleteOne", "delete", "DeleteOptions.Hint", func(coll *driver.Collection) error {
			_, err := coll.DeleteOne(testCtx(t), d(), &driver.DeleteOptions{Hint: d("_id", 1)})
			return err
		}},
		{"BulkWrite DeleteManyModel", "delete", "models[1].Hint", func(coll *driver.Collection) error {
			_, err := coll.BulkWrite(testCtx(t), []driver.WriteModel{driver.UpdateOneModel{Filter: d(), Update: d("$set", d("a", 1)), Hint: "_id_"},
				driver.DeleteManyModel{Filter: d(), Hint: "_id_"}})
			return err
		}},
		{"FindOneAndUpdate", "findAndModify", "FindOneAndUpdateOptions.Hint", func(coll *driver.Collection) error {
			return coll.FindOneAndUpdate(testCtx(t), d(), d("$set", d("a", 1)), &driver.FindOneAndUpdateOptions{Hint: "_id_"}).Err()
		}},
		{"FindOneAndReplace", "findAndModify", "FindOneAndReplaceOptions.Hint", func(coll *driver.Collection) error {
			return coll.FindOneAndReplace(testCtx(t), d(), d("a", 1), &driver.FindOneAndReplaceOptions{Hint: d("_id", 1)}).Err()
		}},
	}
	for _, v := range []struct {
		wire    int32
		version string
		refused bool
	}{{8, "4.2.0", true}, {9, "4.4.0", false}} {
		srv := mongotest.NewServer(t, mongotest.Options{MaxWireVersion: v.wire, Version: v.version})
		c := dial(t, srv.URI(), nil)
		coll := c.Database("shop").Collection("items", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s/wire%d", op.name, v.wire), func(t *testing.T) {
				srv.ClearCommands()
				err := op.run(coll)
				var ae *driver.ArgumentError
				if !v.refused {
					if err != nil && !errors.Is(err, driver.ErrUnacknowledgedWrite) {
						t.Fatalf("err %v, want the write sent", err)
					}
					if _, err := srv.WaitForCommand(testCtx(t), op.cmd); err != nil {
						t.Fatal(err)
					}
					return
				}
				if !errors.As(err, &ae) || ae.Argument != op.arg {
					t.Fatalf("err %v (%T), want an ArgumentError naming %s", err, err, op.arg)
				}
				if sent := writeNames(srv); len(sent) > 0 {
					t.Errorf("sent %v", sent)
				}
			})
		}
	}
}
