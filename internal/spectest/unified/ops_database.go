package unified

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The operations of database entities.

func init() {
	register("database", "runCommand", databaseRunCommand)
}

// databaseRunCommand is the generic command runner: Client.RunCommand on
// the database's name. It inherits no read preference (the server
// selection specification's rule for runCommand); one may be given.
func databaseRunCommand(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	if err := argKeys(args, "command", "commandName", "readPreference", "session"); err != nil {
		return result{}, err
	}
	cmd, err := reqDoc(args, "command")
	if err != nil {
		return result{}, err
	}
	name, err := reqString(args, "commandName")
	if err != nil {
		return result{}, err
	}
	if first := firstKey(cmd); first != name {
		return result{}, invalid("arguments.commandName", nil, "commandName %q is not the command's first key %q", name, first)
	}
	if _, ok := args.Lookup("session").StringValueOK(); ok {
		return result{}, skipf("runCommand with a session: the driver has no sessions yet")
	}
	var opts []*driver.RunCommandOptions
	if v := args.Lookup("readPreference"); !v.IsZero() {
		o, err := runCommandReadPref(v)
		if err != nil {
			return result{}, err
		}
		opts = append(opts, o)
	}
	reply, err := db.client.c.RunCommand(ctx, db.name, cmd, opts...)
	return result{v: docValue(reply)}, err
}

// runCommandReadPref reads a readPreference argument (Common Options).
func runCommandReadPref(v bson.RawValue) (*driver.RunCommandOptions, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, invalid("arguments.readPreference", nil, "readPreference must be a document")
	}
	if err := checkKeys(d, "mode", "tagSets", "maxStalenessSeconds", "hedge"); err != nil {
		return nil, invalid("arguments.readPreference", err, "malformed readPreference")
	}
	if !d.Lookup("hedge").IsZero() {
		return nil, skipf("readPreference.hedge: the driver does not support hedged reads (removed from the server in 8.0)")
	}
	mode, ok := d.Lookup("mode").StringValueOK()
	if !ok {
		return nil, invalid("arguments.readPreference.mode", nil, "mode is required")
	}
	o := &driver.RunCommandOptions{ReadPreference: mode}
	if arr, ok := d.Lookup("tagSets").ArrayOK(); ok {
		vals, err := arr.Values()
		if err != nil {
			return nil, err
		}
		for _, ts := range vals {
			tags := map[string]string{}
			elems, _ := ts.Document().Elements()
			for _, e := range elems {
				tags[e.Key()] = e.Value().StringValue()
			}
			o.ReadPreferenceTags = append(o.ReadPreferenceTags, tags)
		}
	}
	if n, ok := d.Lookup("maxStalenessSeconds").AsInt64OK(); ok {
		o.MaxStaleness = driver.Ptr(time.Duration(n) * time.Second)
	}
	return o, nil
}
