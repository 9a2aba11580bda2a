package fidelity

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongoscope/mongoscope/mongotest"
)

// Clustered and time-series collections created through the official
// driver's helpers, listed back through its ListCollectionSpecifications
// and ListIndexes.
func TestClusteredAndTimeseries(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	db := connect(t, s.URI()).Database("db")

	err := db.CreateCollection(ctx(t), "clustered", options.CreateCollection().
		SetClusteredIndex(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "name", Value: "by id"}}).
		SetExpireAfterSeconds(3600))
	if err != nil {
		t.Fatal(err)
	}
	err = db.CreateCollection(ctx(t), "ts", options.CreateCollection().
		SetTimeSeriesOptions(options.TimeSeries().SetTimeField("time").SetMetaField("meta").SetGranularity("minutes")))
	if err != nil {
		t.Fatal(err)
	}
	specs, err := db.ListCollectionSpecifications(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, sp := range specs {
		types[sp.Name] = sp.Type
		if sp.Name == "clustered" {
			ci, ok := sp.Options.Lookup("clusteredIndex").DocumentOK()
			if !ok || ci.Lookup("name").StringValue() != "by id" {
				t.Errorf("clustered options %s", sp.Options)
			}
			if sp.IDIndex.Name != "" {
				t.Errorf("a clustered collection lists an idIndex: %v", sp.IDIndex)
			}
		}
	}
	if types["clustered"] != "collection" || types["ts"] != "timeseries" {
		t.Errorf("types %v", types)
	}

	// Measurements with equal _ids are kept, and read back in time order.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := db.Collection("ts")
	if _, err := ts.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "time", Value: t0.Add(time.Second)}, {Key: "meta", Value: "a"}},
		bson.D{{Key: "_id", Value: 1}, {Key: "time", Value: t0}, {Key: "meta", Value: "a"}},
	}); err != nil {
		t.Fatal(err)
	}
	cur, err := ts.Find(ctx(t), bson.D{}, options.Find().SetSort(bson.D{{Key: "time", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID   int       `bson:"_id"`
		Time time.Time `bson:"time"`
	}
	if err := cur.All(ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || !docs[0].Time.Equal(t0) {
		t.Errorf("measurements %v", docs)
	}
	// A measurement without its time field is refused.
	if _, err := ts.InsertOne(ctx(t), bson.D{{Key: "meta", Value: "b"}}); err == nil {
		t.Error("a measurement without time was inserted")
	}
	idx, err := db.Collection("clustered").Indexes().ListSpecifications(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(idx) != 1 || idx[0].Name != "by id" || idx[0].Clustered == nil || !*idx[0].Clustered {
		t.Errorf("clustered indexes %+v", idx)
	}
}
