package driver_test

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// ModifyCollection sends collMod with the settings given, and the
// validator it sets is then enforced; without a setting, or with a bad
// one, nothing is sent.
func TestModifyCollection(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	db := c.Database("mod")
	if err := db.CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	srv.ClearCommands()
	for _, tc := range []struct {
		name string
		opts *driver.ModifyCollectionOptions
		arg  string
	}{
		{"nil", nil, "opts"},
		{"empty", &driver.ModifyCollectionOptions{}, "opts"},
		{"validator not a document", &driver.ModifyCollectionOptions{Validator: 3}, "ModifyCollectionOptions.Validator"},
		{"negative expiry", &driver.ModifyCollectionOptions{ExpireAfterSeconds: driver.Ptr[int64](-1)}, "ModifyCollectionOptions.ExpireAfterSeconds"},
	} {
		var ae *driver.ArgumentError
		if err := db.ModifyCollection(ctx, "c", tc.opts); !errors.As(err, &ae) || ae.Argument != tc.arg {
			t.Errorf("%s: %v, want an ArgumentError naming %s", tc.name, err, tc.arg)
		}
	}
	for _, cmd := range srv.Commands() {
		if cmd.Name == "collMod" {
			t.Fatal("a collMod was sent for bad arguments")
		}
	}
	err := db.ModifyCollection(ctx, "c", &driver.ModifyCollectionOptions{
		Validator:       bson.D{{Key: "x", Value: bson.D{{Key: "$type", Value: "string"}}}},
		ValidationLevel: driver.Ptr("strict"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var sent bson.Raw
	for _, cmd := range srv.Commands() {
		if cmd.Name == "collMod" {
			sent = cmd.Body
		}
	}
	if sent.Lookup("collMod").StringValue() != "c" || sent.Lookup("validationLevel").StringValue() != "strict" {
		t.Fatalf("collMod sent: %s", sent)
	}
	_, err = db.Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
	var we *driver.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 121 {
		t.Fatalf("insert against the new validator: %v, want DocumentValidationFailure (121)", err)
	}
}
