package unified

import (
	"context"
	"errors"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The operations of database entities.

func init() {
	register("database", "runCommand", databaseRunCommand)
	register("database", "aggregate", databaseAggregate)
	register("database", "runCursorCommand", databaseCursorCommand(false))
	register("database", "createCommandCursor", databaseCursorCommand(true))
}

// databaseRunCommand is the generic command runner, Database.RunCommand.
// It inherits no read preference (the server selection specification's
// rule for runCommand); one may be given.
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
	reply, err := db.db.RunCommand(ctx, cmd, opts...).Raw()
	var ce *driver.CommandError
	if err != nil && errors.As(err, &ce) {
		return result{v: docValue(ce.Raw)}, err
	}
	return result{v: docValue(reply)}, err
}

func databaseAggregate(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	a := newArgs(args)
	p := a.pipeline()
	o := aggregateOptions(a)
	if err := a.done(); err != nil {
		return result{}, err
	}
	cur, err := db.db.Aggregate(ctx, p, o)
	if err != nil {
		return result{}, err
	}
	return drain(ctx, cur)
}

// databaseCursorCommand is runCursorCommand (iterated to the end) or
// createCommandCursor (saved as a cursor entity).
func databaseCursorCommand(keep bool) opFunc {
	return func(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
		db := obj.(*databaseEntity)
		a := newArgs(args)
		cmd := a.doc("command", true)
		name := a.str("commandName", true)
		if cmd != nil && name != "" && firstKey(cmd) != name {
			a.fail("commandName", "commandName %q is not the command's first key %q", name, firstKey(cmd))
		}
		o := &driver.RunCursorCommandOptions{BatchSize: a.int32Ptr("batchSize"), MaxAwaitTime: a.msPtr("maxTimeMS"), Comment: a.any("comment")}
		if v := a.value("readPreference"); !v.IsZero() {
			rp, err := runCommandReadPref(v)
			if err != nil {
				return result{}, err
			}
			o.ReadPreference, o.ReadPreferenceTags, o.MaxStaleness = rp.ReadPreference, rp.ReadPreferenceTags, rp.MaxStaleness
		}
		switch ct := a.str("cursorType", false); ct {
		case "", "nonTailable":
		case "tailable":
			o.CursorType = driver.Tailable
		case "tailableAwait":
			o.CursorType = driver.TailableAwait
		default:
			a.fail("cursorType", "unknown cursorType %q", ct)
		}
		a.skipArgs("the driver has no timeoutMS, so no timeoutMode", "timeoutMode")
		if err := a.done(); err != nil {
			return result{}, err
		}
		cur, err := db.db.RunCursorCommand(ctx, cmd, o)
		if err != nil {
			return result{}, err
		}
		if keep {
			return result{entity: newCursorEntity(cur)}, nil
		}
		return drain(ctx, cur)
	}
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
