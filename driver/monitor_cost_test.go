package driver_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestSwitchedOffSinkCostsNothing checks, through the public API, that a
// logging sink whose components are all off makes the driver build no
// events: a findOne allocates as much as with no monitor at all
// (event.FamilyFilter). Before the filter, the same client cost 25 more
// allocations per findOne.
func TestSwitchedOffSinkCostsNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s, err := mongotest.Start(mongotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	off := map[logging.Component]logging.Level{
		logging.ComponentCommand: logging.LevelOff, logging.ComponentTopology: logging.LevelOff,
		logging.ComponentServerSelection: logging.LevelOff, logging.ComponentConnection: logging.LevelOff,
		logging.ComponentFailover: logging.LevelOff,
	}
	allocs := func(lo *logging.Options) float64 {
		opts := &driver.ClientOptions{Logging: lo}
		if err := opts.ApplyURI(s.URI()); err != nil {
			t.Fatal(err)
		}
		c, err := driver.Connect(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Disconnect(ctx)
		coll := c.Database("cost").Collection("c")
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil && !driver.IsDuplicateKeyError(err) {
			t.Fatal(err)
		}
		filter := bson.D{{Key: "_id", Value: 1}}
		var out bson.Raw
		return testing.AllocsPerRun(200, func() {
			if err := coll.FindOne(ctx, filter).Decode(&out); err != nil {
				t.Fatal(err)
			}
		})
	}
	none := allocs(nil)
	switchedOff := allocs(&logging.Options{Handler: slog.NewJSONHandler(io.Discard, nil), Levels: off})
	if switchedOff > none+0.5 {
		t.Errorf("findOne allocates %.1f times with a switched-off logging sink, %.1f with no monitor", switchedOff, none)
	}
	t.Logf("allocations per findOne: no monitor %.1f, switched-off logging sink %.1f", none, switchedOff)
}
