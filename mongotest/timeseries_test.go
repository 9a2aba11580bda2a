package mongotest

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// Clustered and time-series collections, and the create options that go
// with them, step by step on one server: each row runs a command and
// checks its error or some fields of its reply.
func TestClusteredAndTimeseriesCollections(t *testing.T) {
	_, c := crudServer(t)
	t0 := bson.DateTime(time.Date(2019, 3, 18, 22, 53, 50, 482e6, time.UTC).UnixMilli())
	t1 := t0 + 1
	for _, tc := range []struct {
		name string
		db   string // "" means "db"
		cmd  bson.D
		code int32
		msg  string
		want map[string]string // path -> relaxed JSON
	}{
		// Clustered collections.
		{name: "clustered", cmd: d("create", "cl", "clusteredIndex", d("key", d("_id", 1), "unique", true, "name", "test index"))},
		{name: "clustered is listed with its canonical spec", cmd: d("listCollections", 1, "filter", d("name", "cl")), want: map[string]string{
			"cursor.firstBatch.0.type":                   `"collection"`,
			"cursor.firstBatch.0.options.clusteredIndex": `{"v":2,"key":{"_id":1},"name":"test index","unique":true}`,
			"cursor.firstBatch.0.idIndex":                "<missing>",
			"cursor.firstBatch.0.info.readOnly":          "false",
		}},
		{name: "clustered index replaces _id_", cmd: d("listIndexes", "cl"), want: map[string]string{
			"cursor.firstBatch": `[{"v":2,"key":{"_id":1},"name":"test index","unique":true,"clustered":true}]`,
		}},
		{name: "clustered keeps _id unique", cmd: d("insert", "cl", "documents", bson.A{d("_id", 1), d("_id", 1)}), want: map[string]string{
			"n": "1", "writeErrors.0.code": "11000",
		}},
		{name: "the cluster key cannot be dropped by name", cmd: d("dropIndexes", "cl", "index", "test index"), code: 5979800, msg: "illegal to drop the clusteredIndex"},
		{name: "nor by key", cmd: d("dropIndexes", "cl", "index", d("_id", 1)), code: 5979800, msg: "illegal to drop the clusteredIndex"},
		{name: "clustered default name and TTL", cmd: d("create", "cl2", "clusteredIndex", d("key", d("_id", 1), "unique", true), "expireAfterSeconds", 60)},
		{name: "which are listed", cmd: d("listCollections", 1, "filter", d("name", "cl2")), want: map[string]string{
			"cursor.firstBatch.0.options": `{"clusteredIndex":{"v":2,"key":{"_id":1},"name":"_id_","unique":true},"expireAfterSeconds":60}`,
		}},
		{name: "clustered needs unique", cmd: d("create", "x", "clusteredIndex", d("key", d("_id", 1), "unique", false)), code: 5979700, msg: "unique: true"},
		{name: "clustered on _id only", cmd: d("create", "x", "clusteredIndex", d("key", d("a", 1), "unique", true)), code: 197, msg: "{_id: 1}"},
		{name: "clustered legacy bool", cmd: d("create", "x", "clusteredIndex", true), code: 5979703, msg: "legacy format"},
		{name: "clustered not a document", cmd: d("create", "x", "clusteredIndex", 1), code: 5979702, msg: "boolean or object"},
		{name: "clustered unknown field", cmd: d("create", "x", "clusteredIndex", d("key", d("_id", 1), "unique", true, "sparse", true)), code: 40415, msg: "sparse"},
		{name: "clustered without unique", cmd: d("create", "x", "clusteredIndex", d("key", d("_id", 1))), code: 40414, msg: "unique"},
		{name: "clustered v1", cmd: d("create", "x", "clusteredIndex", d("key", d("_id", 1), "unique", true, "v", 1)), code: 5979704, msg: "v=1"},
		{name: "expireAfterSeconds alone", cmd: d("create", "x", "expireAfterSeconds", 10), code: 72, msg: "clustered collections or timeseries"},
		{name: "expireAfterSeconds negative", cmd: d("create", "x", "clusteredIndex", d("key", d("_id", 1), "unique", true), "expireAfterSeconds", -1), code: 72, msg: "less than 0"},
		{name: "expireAfterSeconds a string", cmd: d("create", "x", "clusteredIndex", d("key", d("_id", 1), "unique", true), "expireAfterSeconds", "1"), code: 14, msg: "expireAfterSeconds"},

		// Time-series collections.
		{name: "timeseries", cmd: d("create", "ts", "timeseries", d("timeField", "time", "metaField", "meta", "granularity", "minutes"), "expireAfterSeconds", 604800)},
		{name: "timeseries is listed as such", cmd: d("listCollections", 1, "filter", d("name", "ts")), want: map[string]string{
			"cursor.firstBatch.0.type":    `"timeseries"`,
			"cursor.firstBatch.0.options": `{"timeseries":{"timeField":"time","metaField":"meta","granularity":"minutes","bucketRoundingSeconds":3600,"bucketMaxSpanSeconds":86400},"expireAfterSeconds":604800}`,
			"cursor.firstBatch.0.info":    `{"readOnly":false}`,
			"cursor.firstBatch.0.idIndex": "<missing>",
		}},
		{name: "timeseries _ids need not be unique", cmd: d("insert", "ts", "documents", bson.A{d("_id", 1, "time", t1), d("_id", 1, "time", t0)}), want: map[string]string{
			"n": "2", "writeErrors": "<missing>",
		}},
		{name: "timeseries reads like a collection", cmd: d("find", "ts", "sort", d("time", 1)), want: map[string]string{
			"cursor.firstBatch.0.time": relaxedDate(t0), "cursor.firstBatch.1.time": relaxedDate(t1),
		}},
		{name: "timeseries needs a date", cmd: d("insert", "ts", "documents", bson.A{d("_id", 2, "time", "now"), d("_id", 3)}, "ordered", false), want: map[string]string{
			"n": "0", "writeErrors.0.code": "2", "writeErrors.1.code": "2",
			"writeErrors.0.errmsg": `"'time' must be present and contain a valid BSON UTC datetime value"`,
		}},
		{name: "timeseries lists its meta index", cmd: d("listIndexes", "ts"), want: map[string]string{
			"cursor.firstBatch": `[{"v":2,"key":{"meta":1,"time":1},"name":"meta_1_time_1"}]`,
		}},
		{name: "timeseries update", cmd: d("update", "ts", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("a", 1)))}), code: 238, msg: "time-series"},
		{name: "timeseries delete", cmd: d("delete", "ts", "deletes", bson.A{d("q", bson.D{}, "limit", 0)}), code: 238, msg: "time-series"},
		{name: "timeseries createIndexes", cmd: d("createIndexes", "ts", "indexes", bson.A{d("key", d("a", 1), "name", "a")}), code: 238, msg: "time-series"},
		{name: "timeseries rename", db: "admin", cmd: d("renameCollection", "db.ts", "to", "db.ts9"), code: 238, msg: "time-series"},
		{name: "timeseries bucketing", cmd: d("create", "ts2", "timeseries", d("timeField", "t", "bucketMaxSpanSeconds", 3600, "bucketRoundingSeconds", 3600))},
		{name: "is listed without granularity", cmd: d("listCollections", 1, "filter", d("name", "ts2")), want: map[string]string{
			"cursor.firstBatch.0.options.timeseries": `{"timeField":"t","bucketRoundingSeconds":3600,"bucketMaxSpanSeconds":3600}`,
		}},
		{name: "timeseries default granularity", cmd: d("create", "ts3", "timeseries", d("timeField", "t"))},
		{name: "is seconds", cmd: d("listCollections", 1, "filter", d("name", "ts3")), want: map[string]string{
			"cursor.firstBatch.0.options.timeseries": `{"timeField":"t","granularity":"seconds","bucketRoundingSeconds":60,"bucketMaxSpanSeconds":3600}`,
		}},
		{name: "timeseries without timeField", cmd: d("create", "x", "timeseries", d("metaField", "m")), code: 40414, msg: "timeField"},
		{name: "timeseries bad granularity", cmd: d("create", "x", "timeseries", d("timeField", "t", "granularity", "days")), code: 2, msg: "days"},
		{name: "timeseries bucketing apart", cmd: d("create", "x", "timeseries", d("timeField", "t", "bucketMaxSpanSeconds", 10)), code: 72, msg: "alongside each other"},
		{name: "timeseries bucketing unequal", cmd: d("create", "x", "timeseries", d("timeField", "t", "bucketMaxSpanSeconds", 10, "bucketRoundingSeconds", 20)), code: 72, msg: "equal"},
		{name: "timeseries bucketing and granularity", cmd: d("create", "x", "timeseries", d("timeField", "t", "granularity", "hours", "bucketMaxSpanSeconds", 10)), code: 72, msg: "default of 2592000"},
		{name: "timeseries meta is time", cmd: d("create", "x", "timeseries", d("timeField", "t", "metaField", "t")), code: 72, msg: "same as 'timeField'"},
		{name: "timeseries unknown field", cmd: d("create", "x", "timeseries", d("timeField", "t", "bogus", 1)), code: 40415, msg: "bogus"},

		// changeStreamPreAndPostImages: kept and listed.
		{name: "pre and post images", cmd: d("create", "pp", "changeStreamPreAndPostImages", d("enabled", true))},
		{name: "are listed", cmd: d("listCollections", 1, "filter", d("name", "pp")), want: map[string]string{
			"cursor.firstBatch.0.options": `{"changeStreamPreAndPostImages":{"enabled":true}}`,
		}},
		{name: "collMod turns them off", cmd: d("collMod", "pp", "changeStreamPreAndPostImages", d("enabled", false))},
		{name: "and they are no longer listed", cmd: d("listCollections", 1, "filter", d("name", "pp")), want: map[string]string{
			"cursor.firstBatch.0.options": `{}`,
		}},
		{name: "pre and post images need enabled", cmd: d("create", "x", "changeStreamPreAndPostImages", bson.D{}), code: 40414, msg: "enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db
			if db == "" {
				db = "db"
			}
			r, err := c.run(db, tc.cmd)
			if tc.code != 0 {
				wantCode(t, err, tc.code, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tc.want {
				expectField(t, r, path, want)
			}
		})
	}
}

func relaxedDate(ms bson.DateTime) string {
	return `{"$date":"` + time.UnixMilli(int64(ms)).UTC().Format("2006-01-02T15:04:05.000Z") + `"}`
}
