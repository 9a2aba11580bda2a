package unified

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The operations of client entities.

func init() {
	register("client", "close", clientClose)
	register("client", "listDatabases", clientListDatabases)
	register("client", "listDatabaseNames", clientListDatabaseNames)
	// The driver's ListDatabases already returns objects (a result with
	// one struct per database), so listDatabaseObjects is the same call.
	register("client", "listDatabaseObjects", clientListDatabases)
	register("client", "appendMetadata", clientAppendMetadata)
	register("client", "dropDatabase", clientDropDatabase)
}

// clientDropDatabase drops the database named by the database argument
// (causal-consistency's write-command tests run it on a client).
func clientDropDatabase(ctx context.Context, _ *testRun, obj any, args bson.Raw) (result, error) {
	a := newArgs(args)
	name := a.str("database", true)
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, obj.(*clientEntity).c.Database(name).Drop(ctx)
}

// clientAppendMetadata runs Client.AppendMetadata with driverInfoOptions.
func clientAppendMetadata(_ context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	a := newArgs(args)
	d := a.doc("driverInfoOptions", true)
	if err := a.done(); err != nil {
		return result{}, err
	}
	var info driver.DriverInfo
	it := d.Iter()
	for it.Next() {
		v, ok := it.Value().StringValueOK()
		if !ok {
			return result{}, invalid("driverInfoOptions."+it.Key(), nil, "appendMetadata: a %s, not a string", it.Value().Type)
		}
		switch it.Key() {
		case "name":
			info.Name = v
		case "version":
			info.Version = v
		case "platform":
			info.Platform = v
		default:
			return result{}, invalid("driverInfoOptions."+it.Key(), nil, "appendMetadata: unknown field")
		}
	}
	return result{}, obj.(*clientEntity).c.AppendMetadata(info)
}

// clientListDatabases runs Client.ListDatabases; the result is the
// databases as documents, the enumerate-databases specification's
// iterable.
func clientListDatabases(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*clientEntity)
	a := newArgs(args)
	filter := a.doc("filter", false)
	o := &driver.ListDatabasesOptions{NameOnly: a.boolPtr("nameOnly"), AuthorizedDatabases: a.boolPtr("authorizedDatabases"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	if filter == nil {
		filter = bson.Raw{5, 0, 0, 0, 0}
	}
	res, err := c.c.ListDatabases(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	arr := bson.A{}
	for _, d := range res.Databases {
		arr = append(arr, bson.D{{Key: "name", Value: d.Name}, {Key: "sizeOnDisk", Value: d.SizeOnDisk}, {Key: "empty", Value: d.Empty}})
	}
	return arrayResult(arr, TopRootElements)
}

func clientListDatabaseNames(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*clientEntity)
	a := newArgs(args)
	filter := a.doc("filter", false)
	o := &driver.ListDatabasesOptions{AuthorizedDatabases: a.boolPtr("authorizedDatabases"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	if filter == nil {
		filter = bson.Raw{5, 0, 0, 0, 0}
	}
	names, err := c.c.ListDatabaseNames(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	arr := bson.A{}
	for _, n := range names {
		arr = append(arr, n)
	}
	return arrayResult(arr, TopNested)
}

// arrayResult marshals an array result.
func arrayResult(arr bson.A, top Top) (result, error) {
	b, err := bson.Marshal(bson.D{{Key: "v", Value: arr}})
	if err != nil {
		return result{}, err
	}
	return result{v: bson.Raw(b).Lookup("v"), top: top}, nil
}

// clientClose disconnects the client; its events so far stay observable.
func clientClose(_ context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	if err := argKeys(args); err != nil {
		return result{}, err
	}
	return result{}, obj.(*clientEntity).close()
}
