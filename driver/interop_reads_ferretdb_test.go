package driver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The aggregate, count and distinct flows of the interop suite
// (interop_ferretdb_test.go), against mongotest and FerretDB v1.

// interopAggregate runs pipeline (Extended JSON, an array) and returns
// the results as Extended JSON, one document per line.
func interopAggregate(t *testing.T, ctx context.Context, coll *driver.Collection, pipeline string, opts ...*driver.AggregateOptions) string {
	t.Helper()
	p, err := bson.ParseExtJSON([]byte(`{"p": ` + pipeline + `}`))
	if err != nil {
		t.Fatal(err)
	}
	var stages bson.A
	if err := bson.UnmarshalValue(bson.TypeArray, p.Lookup("p").Value, &stages); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Aggregate(ctx, stages, opts...)
	if err != nil {
		t.Fatalf("Aggregate(%s): %v", pipeline, err)
	}
	docs, err := driver.All[bson.Raw](ctx, cur)
	if err != nil {
		t.Fatalf("Aggregate(%s): %v", pipeline, err)
	}
	var lines []string
	for _, d := range docs {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}

// interopPipelineCases run over interopPeople.
var interopPipelineCases = []struct {
	name, pipeline, want string
	ferretSkip           string
}{
	{"$match $sort $project", `[{"$match": {"tags": "math"}}, {"$sort": {"age": -1}}, {"$project": {"_id": 0, "name": 1}}]`,
		`{"name":"dee"}` + "\n" + `{"name":"ada"}`, ""},
	{"$group $sum of a field", `[{"$group": {"_id": null, "ages": {"$sum": "$age"}}}]`, `{"_id":null,"ages":121.5}`, ""},
	{"$group $sum counting", `[{"$group": {"_id": null, "n": {"$sum": 1}}}]`, `{"_id":null,"n":5}`, ""},
	{"$unwind $group by a field", `[{"$unwind": "$tags"}, {"$group": {"_id": "$tags", "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]`,
		`{"_id":"code","n":2}` + "\n" + `{"_id":"math","n":2}`, ""},
	{"$group by a field summing another", `[{"$group": {"_id": "$addr.city", "n": {"$sum": 1}, "ages": {"$sum": "$age"}}}, {"$sort": {"_id": 1}}]`,
		`{"_id":null,"n":2,"ages":19}` + "\n" + `{"_id":"london","n":2,"ages":77.5}` + "\n" + `{"_id":"paris","n":1,"ages":25}`,
		`FerretDB v1's {$sum: "$age"} gives 0 unless it is the only accumulator of a $group on _id null: here every group gets "ages":0 ` +
			`(as it does with _id null after another accumulator, or with _id "$tags" alone)`},
	{"$group by an expression", `[{"$group": {"_id": {"$gt": ["$age", 30]}, "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]`,
		`{"_id":false,"n":3}` + "\n" + `{"_id":true,"n":2}`,
		"FerretDB v1 has no $gt expression: server error 238 (NotImplemented): Invalid $group :: caused by :: The operator $gt is not implemented yet"},
	{"$group $avg", `[{"$unwind": "$tags"}, {"$group": {"_id": "$tags", "avgAge": {"$avg": "$age"}}}, {"$sort": {"_id": 1}}]`,
		`{"_id":"code","avgAge":30.5}` + "\n" + `{"_id":"math","avgAge":38.75}`,
		`FerretDB v1 has no $avg accumulator: server error 238 (NotImplemented): $group accumulator "$avg" is not implemented yet`},
	{"$count", `[{"$match": {"age": {"$gte": 20}}}, {"$count": "adults"}]`, `{"adults":3}`, ""},
	{"$skip $limit", `[{"$sort": {"_id": 1}}, {"$skip": 1}, {"$limit": 2}, {"$project": {"name": 1}}]`,
		`{"_id":2,"name":"bob"}` + "\n" + `{"_id":3,"name":"Cy"}`, ""},
	{"$addFields with a field path", `[{"$match": {"_id": 1}}, {"$addFields": {"city": "$addr.city"}}, {"$project": {"city": 1}}]`,
		`{"_id":1,"city":"london"}`,
		`FerretDB v1 takes a "$field" path in $addFields, $set and $project as a string literal: {city: "$addr.city"} gives {"_id":1,"city":"$addr.city"}`},
	{"$addFields with operator expressions", `[{"$match": {"_id": 1}}, {"$addFields": {"older": {"$add": ["$age", 1]}, "city": {"$toUpper": "$addr.city"}}}, {"$project": {"older": 1, "city": 1}}]`,
		`{"_id":1,"older":37,"city":"LONDON"}`,
		`FerretDB v1 has no $add expression: server error 238 (NotImplemented): Invalid $addFields :: caused by :: The operator $add is not implemented yet`},
	{"$unwind with an index", `[{"$match": {"_id": 1}}, {"$unwind": {"path": "$scores", "includeArrayIndex": "i"}}, {"$project": {"_id": 0, "k": "$scores.k", "i": 1}}]`,
		`{"i":0,"k":"a"}` + "\n" + `{"i":1,"k":"b"}`,
		`FerretDB v1's $unwind takes only a path: server error 238 (NotImplemented): $unwind: support for field "$unwind" with value {path, includeArrayIndex} is not implemented yet`},
	{"$lookup", `[{"$match": {"_id": 2}}, {"$lookup": {"from": "items", "localField": "_id", "foreignField": "_id", "as": "same"}}, {"$project": {"n": {"$size": "$same"}}}]`,
		`{"_id":2,"n":1}`, "FerretDB v1 has no $lookup: server error 238 (NotImplemented): `aggregate` stage \"$lookup\" is not implemented yet"},
}

func interopReadFlows() []interopFlow {
	var flows []interopFlow
	for _, pc := range interopPipelineCases {
		flows = append(flows, interopFlow{name: "Aggregate " + pc.name, ferretSkip: pc.ferretSkip, run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			got := interopAggregate(t, ctx, env.coll, pc.pipeline)
			if got != pc.want {
				t.Fatalf("Aggregate(%s):\n got %s\nwant %s", pc.pipeline, got, pc.want)
			}
			return got
		}})
	}
	return append(flows,
		interopFlow{name: "Aggregate over several batches", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 30)
			cur, err := env.coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "tag", Value: "even"}}}}, bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: -1}}}}},
				&driver.AggregateOptions{BatchSize: driver.Ptr[int32](4)})
			if err != nil {
				t.Fatal(err)
			}
			if cur.RemainingBatchLength() != 4 || cur.ID() == 0 {
				t.Fatalf("first batch %d, cursor %d", cur.RemainingBatchLength(), cur.ID())
			}
			got, err := driver.All[item](ctx, cur)
			if err != nil || len(got) != 15 || got[0].ID != 30 || got[14].ID != 2 {
				t.Fatalf("All: %v, %v", interopIDs(got), err)
			}
			return fmt.Sprint(interopIDs(got))
		}},
		interopFlow{name: "Database Aggregate with $currentOp", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			cur, err := env.client.Database("admin").Aggregate(ctx, bson.A{
				bson.D{{Key: "$currentOp", Value: bson.D{}}},
				bson.D{{Key: "$match", Value: bson.D{{Key: "command.aggregate", Value: 1}}}},
				bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "op", Value: 1}}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			docs, err := driver.All[bson.Raw](ctx, cur)
			if err != nil || len(docs) == 0 || docs[0].String() != `{"op":"command"}` {
				t.Fatalf("$currentOp: want this aggregate among the operations, got %v, %v", docs, err)
			}
			return docs[0].String()
		}, ferretSkip: "FerretDB v1 has no database aggregate ({aggregate: 1}): server error 9 (FailedToParse): Invalid command format: the 'aggregate' field must specify a collection name or 1"},
		interopFlow{name: "Aggregate with $out", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 6)
			cur, err := env.coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "tag", Value: "odd"}}}}, bson.D{{Key: "$out", Value: "odds"}}})
			if err != nil {
				t.Fatal(err)
			}
			if cur.Next(ctx) || cur.Err() != nil {
				t.Fatalf("a $out pipeline's cursor: %v, %v", cur.Current, cur.Err())
			}
			got := interopIDs(interopFindAll(t, ctx, env.db.Collection("odds"), bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}}))
			if fmt.Sprint(got) != "[1 3 5]" {
				t.Fatalf("odds: %v", got)
			}
			return fmt.Sprint(got)
		}, ferretSkip: "FerretDB v1 has no $out: server error 238 (NotImplemented): `aggregate` stage \"$out\" is not implemented yet"},
		interopFlow{name: "Aggregate with an unknown stage", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 1)
			_, err := env.coll.Aggregate(ctx, bson.A{bson.D{{Key: "$bogus", Value: bson.D{}}}})
			var ce *driver.CommandError
			if !errors.As(err, &ce) || ce.Code != 40324 || !strings.Contains(ce.Message, "Unrecognized pipeline stage name") {
				t.Fatalf("an unknown stage: %v; want 40324 (Unrecognized pipeline stage name)", err)
			}
			return fmt.Sprintf("%d %s", ce.Code, ce.CodeName)
		}, ferretSkip: `FerretDB v1 answers an unknown stage with code 40234 where mongod's code is 40324: server error 40234 (Location40234): Unrecognized pipeline stage name: "$bogus"`},
		interopFlow{name: "Aggregate errors", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 1)
			var ce *driver.CommandError
			_, err := env.coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: 1}}})
			if !errors.As(err, &ce) || ce.Code != 15959 {
				t.Fatalf("$match of a number: %v; want 15959", err)
			}
			var ae *driver.ArgumentError
			if _, err := env.coll.Aggregate(ctx, bson.A{bson.D{}, 5}); !errors.As(err, &ae) || ae.Argument != "pipeline[1]" {
				t.Fatalf("a stage that is not a document: %v", err)
			}
			return fmt.Sprint(ce.Code) + "; " + ae.Argument
		}},
		interopFlow{name: "CountDocuments and EstimatedDocumentCount", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 12)
			var got []int64
			for _, c := range []struct {
				filter bson.D
				opts   *driver.CountOptions
				want   int64
			}{
				{bson.D{}, nil, 12},
				{bson.D{{Key: "tag", Value: "even"}}, nil, 6},
				{bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 50}}}}, &driver.CountOptions{Skip: driver.Ptr[int64](2)}, 5},
				{bson.D{}, &driver.CountOptions{Limit: driver.Ptr[int64](4)}, 4},
				{bson.D{{Key: "tag", Value: "none"}}, nil, 0},
			} {
				n, err := env.coll.CountDocuments(ctx, c.filter, c.opts)
				if err != nil || n != c.want {
					t.Fatalf("CountDocuments(%v, %+v): %d, %v; want %d", c.filter, c.opts, n, err, c.want)
				}
				got = append(got, n)
			}
			est, err := env.coll.EstimatedDocumentCount(ctx)
			if err != nil || est != 12 {
				t.Fatalf("EstimatedDocumentCount: %d, %v", est, err)
			}
			missing := env.db.Collection("missing")
			n, err := missing.CountDocuments(ctx, bson.D{})
			if err != nil || n != 0 {
				t.Fatalf("CountDocuments on a missing collection: %d, %v", n, err)
			}
			n, err = missing.EstimatedDocumentCount(ctx)
			if err != nil || n != 0 {
				t.Fatalf("EstimatedDocumentCount on a missing collection: %d, %v", n, err)
			}
			return fmt.Sprint(got, est)
		}},
		interopFlow{name: "Database RunCommand and RunCursorCommand", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 7)
			var count struct {
				N  int     `bson:"n"`
				OK float64 `bson:"ok"`
			}
			if err := env.db.RunCommand(ctx, bson.D{{Key: "count", Value: env.coll.Name()}, {Key: "query", Value: bson.D{{Key: "tag", Value: "odd"}}}}).Decode(&count); err != nil {
				t.Fatal(err)
			}
			if count.N != 4 || count.OK != 1 {
				t.Fatalf("count: %+v", count)
			}
			err := env.db.RunCommand(ctx, bson.D{{Key: "noSuchCommand", Value: 1}}).Err()
			var ce *driver.CommandError
			if !errors.As(err, &ce) || ce.Code != 59 {
				t.Fatalf("an unknown command: %v; want CommandNotFound (59)", err)
			}
			cur, err := env.db.RunCursorCommand(ctx, bson.D{{Key: "find", Value: env.coll.Name()}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "batchSize", Value: 2}},
				&driver.RunCursorCommandOptions{BatchSize: driver.Ptr[int32](3)})
			if err != nil {
				t.Fatal(err)
			}
			if cur.RemainingBatchLength() != 2 {
				t.Fatalf("first batch %d, want 2", cur.RemainingBatchLength())
			}
			got, err := driver.All[item](ctx, cur)
			if err != nil || fmt.Sprint(interopIDs(got)) != "[1 2 3 4 5 6 7]" {
				t.Fatalf("RunCursorCommand: %v, %v", interopIDs(got), err)
			}
			return fmt.Sprintf("count %d; unknown command %d %s; cursor %v", count.N, ce.Code, ce.CodeName, interopIDs(got))
		}},
		interopFlow{name: "Distinct", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			tags, err := driver.Values[string](env.coll.Distinct(ctx, "tags", bson.D{}))
			if err != nil || fmt.Sprint(tags) != "[code math]" {
				t.Fatalf("Distinct(tags): %v, %v", tags, err)
			}
			cities, err := driver.Values[string](env.coll.Distinct(ctx, "addr.city", bson.D{{Key: "age", Value: bson.D{{Key: "$gt", Value: 30}}}}))
			if err != nil || fmt.Sprint(cities) != "[london]" {
				t.Fatalf("Distinct(addr.city, age > 30): %v, %v", cities, err)
			}
			raw, err := env.coll.Distinct(ctx, "age", bson.D{}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			var none []string
			if err := env.coll.Distinct(ctx, "nothing", bson.D{}).Decode(&none); err != nil || len(none) != 0 {
				t.Fatalf("Distinct of a missing field: %v, %v", none, err)
			}
			return fmt.Sprint(tags, cities, raw)
		}},
	)
}

func TestInteropReads(t *testing.T) { runInteropFlows(t, interopReadFlows()) }
