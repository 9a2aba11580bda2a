package operation

import (
	"fmt"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
)

// This file holds the enumerate-databases, enumerate-collections and
// collection management commands: listDatabases, listCollections, create,
// drop, dropDatabase and renameCollection.

// one is the int32 1 of {listDatabases: 1}, {listCollections: 1}...
var one = bson.RawValue{Type: bson.TypeInt32, Value: []byte{1, 0, 0, 0}}

// ListDatabases is a listDatabases command (run on admin).
type ListDatabases struct {
	Filter              bson.Raw
	NameOnly            *bool
	AuthorizedDatabases *bool
	Comment             bson.RawValue
}

// Command returns the command.
func (l *ListDatabases) Command() bson.Raw {
	return NewCommand("listDatabases", one, len(l.Filter)+32).Doc("filter", l.Filter).Bool("nameOnly", l.NameOnly).
		Bool("authorizedDatabases", l.AuthorizedDatabases).Value("comment", l.Comment).Build()
}

// DatabaseInfo is one database of a listDatabases reply.
type DatabaseInfo struct {
	Name       string
	SizeOnDisk int64
	Empty      bool
}

// ReadListDatabases reads a listDatabases reply: every database needs a
// name; sizeOnDisk, empty and totalSize, when there, must be a
// non-negative integer, a boolean and a non-negative integer. A reply
// that is not so is a *ReplyError.
func ReadListDatabases(body bson.Raw) (dbs []DatabaseInfo, totalSize int64, err error) {
	err = EachOf(body, "databases", func(path string, d bson.Raw) error {
		name, ok := d.Lookup("name").StringValueOK()
		if !ok {
			return &ReplyError{Field: path + ".name", Reason: "missing or not a string"}
		}
		s := DatabaseInfo{Name: name}
		if v, err := d.LookupErr("sizeOnDisk"); err == nil {
			if s.SizeOnDisk, ok = v.AsInt64OK(); !ok || s.SizeOnDisk < 0 {
				return &ReplyError{Field: path + ".sizeOnDisk", Reason: "not a non-negative integer"}
			}
		}
		if v, err := d.LookupErr("empty"); err == nil {
			if s.Empty, ok = v.BooleanOK(); !ok {
				return &ReplyError{Field: path + ".empty", Reason: fmt.Sprintf("a %s, not a boolean", v.Type)}
			}
		}
		dbs = append(dbs, s)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if v, err := body.LookupErr("totalSize"); err == nil {
		var ok bool
		if totalSize, ok = v.AsInt64OK(); !ok || totalSize < 0 {
			return nil, 0, &ReplyError{Field: "totalSize", Reason: "not a non-negative integer"}
		}
	}
	return dbs, totalSize, nil
}

// ReadDatabaseNames reads the names of a listDatabases reply (never
// nil); every database needs a name.
func ReadDatabaseNames(body bson.Raw) ([]string, error) {
	names := []string{}
	err := EachOf(body, "databases", func(path string, d bson.Raw) error {
		name, ok := d.Lookup("name").StringValueOK()
		if !ok {
			return &ReplyError{Field: path + ".name", Reason: "missing or not a string"}
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// EachOf calls fn with each document of body's array key and its path in
// the reply ("databases.3"); a reply without the array, or with an
// element that is not a document, is a *ReplyError.
func EachOf(body bson.Raw, key string, fn func(path string, d bson.Raw) error) error {
	v, err := body.LookupErr(key)
	if err != nil {
		return &ReplyError{Field: key, Reason: "missing"}
	}
	a, ok := v.ArrayOK()
	if !ok {
		return &ReplyError{Field: key, Reason: fmt.Sprintf("a %s, not an array", v.Type)}
	}
	it := a.Iter()
	for i := 0; it.Next(); i++ {
		path := key + "." + strconv.Itoa(i)
		d, ok := it.Value().DocumentOK()
		if !ok {
			return &ReplyError{Field: path, Reason: fmt.Sprintf("a %s, not a document", it.Value().Type)}
		}
		if err := fn(path, d); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return &ReplyError{Field: key, Reason: err.Error()}
	}
	return nil
}

// ListCollections is a listCollections command.
type ListCollections struct {
	Filter                bson.Raw
	NameOnly              *bool
	AuthorizedCollections *bool
	BatchSize             *int32
	Comment               bson.RawValue
}

// Command returns the command.
func (l *ListCollections) Command() bson.Raw {
	cmd := NewCommand("listCollections", one, len(l.Filter)+48).Doc("filter", l.Filter).Bool("nameOnly", l.NameOnly).
		Bool("authorizedCollections", l.AuthorizedCollections)
	if l.BatchSize != nil {
		cmd.Doc("cursor", BatchSizeDoc(*l.BatchSize))
	}
	return cmd.Value("comment", l.Comment).Build()
}

// CursorOptions are the getMore options of the command's cursor. No
// comment: the enumerate-collections specification forbids sending it
// with listCollections' getMores.
func (l *ListCollections) CursorOptions() CursorOptions {
	var co CursorOptions
	if l.BatchSize != nil {
		co.BatchSize = *l.BatchSize
	}
	return co
}

// NameOnlyFilter tells whether a listCollectionNames filter is on the
// name alone, when the enumerate-collections specification has the
// driver ask for names only (nameOnly), which the server applies before
// the filter.
func NameOnlyFilter(filter bson.Raw) bool {
	it := filter.Iter()
	for it.Next() {
		if it.Key() != "name" {
			return false
		}
	}
	return it.Err() == nil
}

// BatchSizeDoc returns {batchSize: n}.
func BatchSizeDoc(n int32) bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "batchSize", n)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

// TimeSeries is the timeseries document of a create command.
type TimeSeries struct {
	TimeField             string
	MetaField             *string
	Granularity           *string
	BucketMaxSpanSeconds  *int32
	BucketRoundingSeconds *int32
}

// Encode returns the document.
func (ts *TimeSeries) Encode() bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "timeField", ts.TimeField)
	if ts.MetaField != nil {
		b = bson.AppendStringElement(b, "metaField", *ts.MetaField)
	}
	if ts.Granularity != nil {
		b = bson.AppendStringElement(b, "granularity", *ts.Granularity)
	}
	if ts.BucketMaxSpanSeconds != nil {
		b = bson.AppendInt32Element(b, "bucketMaxSpanSeconds", *ts.BucketMaxSpanSeconds)
	}
	if ts.BucketRoundingSeconds != nil {
		b = bson.AppendInt32Element(b, "bucketRoundingSeconds", *ts.BucketRoundingSeconds)
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

// Create is a create command: a collection, or a view when ViewOn is
// set. Unset values are left out.
type Create struct {
	Name                         string
	Capped                       *bool
	Size                         *int64
	Max                          *int64
	ViewOn                       *string
	Pipeline                     bson.Raw // an array; nil leaves it out
	Validator                    bson.RawValue
	ValidationLevel              *string
	ValidationAction             *string
	Collation                    bson.RawValue
	ClusteredIndex               bson.RawValue
	TimeSeries                   bson.Raw
	ExpireAfterSeconds           *int64
	ChangeStreamPreAndPostImages bson.RawValue
	StorageEngine                bson.RawValue
	IndexOptionDefaults          bson.RawValue
	Comment                      bson.RawValue
}

// Command returns the command.
func (c *Create) Command() bson.Raw {
	hint := 64
	if c.ViewOn != nil {
		hint = len(c.Pipeline) + len(*c.ViewOn) + 32
	}
	cmd := NewCollectionCommand("create", c.Name, hint).Bool("capped", c.Capped).Int64("size", c.Size).
		Int64("max", c.Max)
	if c.ViewOn != nil {
		cmd.Value("viewOn", StringValue(*c.ViewOn))
	}
	if c.Pipeline != nil {
		cmd.Value("pipeline", bson.RawValue{Type: bson.TypeArray, Value: c.Pipeline})
	}
	cmd.Value("validator", c.Validator)
	if c.ValidationLevel != nil {
		cmd.Value("validationLevel", StringValue(*c.ValidationLevel))
	}
	if c.ValidationAction != nil {
		cmd.Value("validationAction", StringValue(*c.ValidationAction))
	}
	return cmd.Value("collation", c.Collation).Value("clusteredIndex", c.ClusteredIndex).Doc("timeseries", c.TimeSeries).
		Int64("expireAfterSeconds", c.ExpireAfterSeconds).Value("changeStreamPreAndPostImages", c.ChangeStreamPreAndPostImages).
		Value("storageEngine", c.StorageEngine).Value("indexOptionDefaults", c.IndexOptionDefaults).Value("comment", c.Comment).Build()
}

// DropDatabaseCommand returns {dropDatabase: 1}.
func DropDatabaseCommand() bson.Raw {
	return NewCommand("dropDatabase", one, 0).Build()
}

// DropCommand returns {drop: collection}.
func DropCommand(collection string) bson.Raw {
	return NewCollectionCommand("drop", collection, 0).Build()
}

// Rename is a renameCollection command (run on admin).
type Rename struct {
	// From and To are namespaces, "db.collection".
	From, To   string
	DropTarget *bool
	Comment    bson.RawValue
}

// Command returns the command.
func (r *Rename) Command() bson.Raw {
	return NewCommand("renameCollection", StringValue(r.From), 64).Value("to", StringValue(r.To)).
		Bool("dropTarget", r.DropTarget).Value("comment", r.Comment).Build()
}

// CollMod is a collMod command; unset values are left out.
type CollMod struct {
	Name                         string
	Validator                    bson.RawValue
	ValidationLevel              *string
	ValidationAction             *string
	ChangeStreamPreAndPostImages bson.RawValue
	ExpireAfterSeconds           *int64
	Comment                      bson.RawValue
}

// Command returns the command.
func (c *CollMod) Command() bson.Raw {
	cmd := NewCollectionCommand("collMod", c.Name, 64).Value("validator", c.Validator)
	if c.ValidationLevel != nil {
		cmd.Value("validationLevel", StringValue(*c.ValidationLevel))
	}
	if c.ValidationAction != nil {
		cmd.Value("validationAction", StringValue(*c.ValidationAction))
	}
	return cmd.Value("changeStreamPreAndPostImages", c.ChangeStreamPreAndPostImages).
		Int64("expireAfterSeconds", c.ExpireAfterSeconds).Value("comment", c.Comment).Build()
}
