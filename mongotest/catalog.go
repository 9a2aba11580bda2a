package mongotest

import (
	"context"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

var listDatabasesArgs = fieldSet("filter", "nameOnly", "authorizedDatabases")

func listDatabasesCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, listDatabasesArgs); err != nil {
		return nil, err
	}
	filter, err := docArg(r.Body, "filter", r.Name)
	if err != nil {
		return nil, err
	}
	nameOnly, err := boolArg(r.Body, "nameOnly", r.Name)
	if err != nil {
		return nil, err
	}
	if _, err := boolArg(r.Body, "authorizedDatabases", r.Name); err != nil {
		return nil, err
	}
	if err := s.checkRead(r); err != nil {
		return nil, err
	}
	m, err := query.NewMatcher(filter)
	if err != nil {
		return nil, err
	}
	var total int64
	start, dst := bson.AppendDocumentStart(nil)
	as, dst := bson.AppendArrayElementStart(dst, "databases")
	n := 0
	for _, db := range s.store.ListDatabases() {
		ds, e := bson.AppendDocumentStart(nil)
		e = bson.AppendStringElement(e, "name", db.Name)
		if !nameOnly {
			e = bson.AppendInt64Element(e, "sizeOnDisk", db.SizeOnDisk)
			e = bson.AppendBooleanElement(e, "empty", db.Empty)
		}
		entry, _ := bson.AppendDocumentEnd(e, ds)
		if !m.Match(entry) {
			continue
		}
		total += db.SizeOnDisk
		dst = bson.AppendDocumentElement(dst, bson.ArrayKey(n), entry)
		n++
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	if !nameOnly {
		dst = bson.AppendInt64Element(dst, "totalSize", total)
		dst = bson.AppendInt64Element(dst, "totalSizeMb", total/(1<<20))
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// cursorOptions reads the cursor: {batchSize} option of listCollections,
// listIndexes and aggregate.
func cursorOptions(body bson.Raw, cmd string) (batchSize int64, err error) {
	cur, err := docArg(body, "cursor", cmd)
	if err != nil || cur == nil {
		return defaultFirstBatch, err
	}
	if err := checkSubArgs(cur, cmd+".cursor", fieldSet("batchSize")); err != nil {
		return 0, err
	}
	n, ok, err := intArg(cur, "batchSize", "cursor")
	if err != nil {
		return 0, err
	}
	if !ok {
		return defaultFirstBatch, nil
	}
	return n, nil
}

var listCollectionsArgs = fieldSet("filter", "nameOnly", "authorizedCollections", "cursor", "includePendingDrops")

func listCollectionsCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, listCollectionsArgs); err != nil {
		return nil, err
	}
	filter, err := docArg(r.Body, "filter", r.Name)
	if err != nil {
		return nil, err
	}
	nameOnly, err := boolArg(r.Body, "nameOnly", r.Name)
	if err != nil {
		return nil, err
	}
	if _, err := boolArg(r.Body, "authorizedCollections", r.Name); err != nil {
		return nil, err
	}
	batchSize, err := cursorOptions(r.Body, r.Name)
	if err != nil {
		return nil, err
	}
	if err := s.checkRead(r); err != nil {
		return nil, err
	}
	m, err := query.NewMatcher(filter)
	if err != nil {
		return nil, err
	}
	var docs []bson.Raw
	for _, ci := range s.store.ListCollections(r.DB) {
		entry := ci.Raw()
		if nameOnly {
			start, b := bson.AppendDocumentStart(nil)
			b = bson.AppendStringElement(b, "name", ci.Name)
			b = bson.AppendStringElement(b, "type", ci.Type)
			entry, _ = bson.AppendDocumentEnd(b, start)
		}
		if m.Match(entry) {
			docs = append(docs, entry)
		}
	}
	return s.firstBatch(&cursor{ns: r.DB + ".$cmd.listCollections", docs: docs}, batchSize, false)
}

var listIndexesArgs = fieldSet("cursor", "includeBuildUUIDs", "includeIndexBuildInfo")

func listIndexesCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, listIndexesArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	batchSize, err := cursorOptions(r.Body, r.Name)
	if err != nil {
		return nil, err
	}
	if err := s.checkRead(r); err != nil {
		return nil, err
	}
	if s.store.View(r.DB, collName) != nil {
		return nil, errViewWrite(r.DB, collName)
	}
	c := s.store.Collection(r.DB, collName)
	if c == nil {
		return nil, newError(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns(r.DB, collName))
	}
	docs := timeseriesIndexes(c)
	for _, ix := range c.ListIndexes() {
		docs = append(docs, ix.Raw())
	}
	// mongod's listIndexes cursor is on the collection's own namespace
	// (listCollections' is on db.$cmd.listCollections).
	return s.firstBatch(&cursor{ns: ns(r.DB, collName), docs: docs}, batchSize, false)
}

var createIndexesArgs = fieldSet("indexes", "commitQuorum", "ignoreUnknownIndexOptions", "isTimeseriesNamespace")

func createIndexesCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, createIndexesArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	v, err := r.Body.LookupErr("indexes")
	if err != nil {
		return nil, newError(40414, "BSON field 'createIndexes.indexes' is missing but a required field")
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'createIndexes.indexes' is the wrong type '%s', expected type 'array'", typeName(v.Type))
	}
	var specs []store.IndexSpec
	it := arr.Iter()
	for it.Next() {
		d, ok := it.Value().DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "The elements of the 'indexes' array must be objects, but got %s", typeName(it.Value().Type))
		}
		spec, err := store.ParseIndexSpec(d)
		if err != nil {
			return nil, err
		}
		if _, given := d.LookupErr("collation"); given != nil {
			// An index without a collation takes the collection's default.
			if c := s.store.Collection(r.DB, collName); c != nil {
				if dc := defaultCollation(c); dc != nil {
					spec.Collation = dc.Spec()
				}
			}
		}
		if spec.PartialFilterExpression != nil {
			// The index keeps the matcher: compile it from a copy, not
			// from the request's bytes.
			pm, err := query.NewMatcher(append(bson.Raw(nil), spec.PartialFilterExpression...))
			if err != nil {
				return nil, err
			}
			spec.PartialFilter = pm.Match
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, newError(mongoerr.BadValue, "Must specify at least one index to create")
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	existed := s.store.Collection(r.DB, collName) != nil
	c, err := s.store.CollectionOrCreate(r.DB, collName)
	if err != nil {
		return nil, err
	}
	if err := errTimeseriesUnsupported(c, "createIndexes"); err != nil {
		return nil, err
	}
	before := c.NumIndexes()
	created, err := c.CreateIndexes(specs)
	if err != nil {
		return dupKeyReply(err), err
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "numIndexesBefore", int32(before))
	dst = bson.AppendInt32Element(dst, "numIndexesAfter", int32(before+created))
	if created == 0 {
		dst = bson.AppendStringElement(dst, "note", "all indexes already exist")
	}
	dst = bson.AppendBooleanElement(dst, "createdCollectionAutomatically", !existed)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

var dropIndexesArgs = fieldSet("index")

func dropIndexesCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, dropIndexesArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	v, err := r.Body.LookupErr("index")
	if err != nil {
		return nil, newError(40414, "BSON field 'dropIndexes.index' is missing but a required field")
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	if s.store.View(r.DB, collName) != nil {
		return nil, errViewWrite(r.DB, collName)
	}
	c := s.store.Collection(r.DB, collName)
	if c == nil {
		return nil, newError(mongoerr.NamespaceNotFound, "ns not found %s", ns(r.DB, collName))
	}
	was := c.NumIndexes()
	switch v.Type {
	case bson.TypeString:
		err = c.DropIndex(v.StringValue())
	case bson.TypeEmbeddedDocument:
		err = c.DropIndexByKey(v.Document())
	case bson.TypeArray:
		var names []string
		it := v.Array().Iter()
		for it.Next() {
			n, ok := it.Value().StringValueOK()
			if !ok {
				return nil, newError(mongoerr.TypeMismatch, "dropIndexes index names must be strings, not %s", typeName(it.Value().Type))
			}
			names = append(names, n)
		}
		err = c.DropIndexes(names...)
	default:
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'dropIndexes.index' is the wrong type '%s', expected types '[string, object, array]'", typeName(v.Type))
	}
	if err != nil {
		return nil, err
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "nIndexesWas", int32(was))
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// createArgs are create's options; the ones only listed (validator and
// friends) are kept in the collection's options as given.
var createArgs = fieldSet("capped", "size", "max", "validator", "validationLevel", "validationAction",
	"storageEngine", "indexOptionDefaults", "autoIndexId", "idIndex", "flags",
	"viewOn", "pipeline", "timeseries", "clusteredIndex", "expireAfterSeconds",
	"changeStreamPreAndPostImages", "recordPreImages", "encryptedFields", "collation")

// listedOptions are create and collMod options kept in the collection's
// options as given; the validation ones take effect in validation.go.
var listedOptions = fieldSet("validator", "validationLevel", "validationAction", "storageEngine", "indexOptionDefaults", "changeStreamPreAndPostImages")

func createCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, createArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	if _, err := r.Body.LookupErr("viewOn"); err == nil {
		return s.createView(r, collName)
	}
	if _, err := r.Body.LookupErr("pipeline"); err == nil {
		return nil, newError(mongoerr.InvalidOptions, "'pipeline' requires 'viewOn' to also be specified")
	}
	var coll *collation.Collation
	if cv, err := r.Body.LookupErr("collation"); err == nil {
		if coll, err = collation.Parse(cv); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"recordPreImages", "encryptedFields"} {
		if _, err := r.Body.LookupErr(k); err == nil {
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support the %s option of create", k)
		}
	}
	var opts store.CollectionOptions
	if opts.Capped, err = boolArg(r.Body, "capped", r.Name); err != nil {
		return nil, err
	}
	if opts.Capped {
		if opts.Size, _, err = intArg(r.Body, "size", r.Name); err != nil {
			return nil, err
		}
		if opts.Max, _, err = intArg(r.Body, "max", r.Name); err != nil {
			return nil, err
		}
	}
	special, err := createSpecialOptions(r.Body, &opts)
	if err != nil {
		return nil, err
	}
	if opts.Extra, err = extraOptions(r.Body); err != nil {
		return nil, err
	}
	var autoIndexID []byte
	if v, err := r.Body.LookupErr("autoIndexId"); err == nil {
		// Deprecated and without effect here, but kept and listed: mongod
		// lists it and compares it when the collection is created again.
		on, err := boolValue(v, "autoIndexId", r.Name)
		if err != nil {
			return nil, err
		}
		autoIndexID = bson.AppendBooleanElement(nil, "autoIndexId", on)
	}
	if coll != nil || special != nil || autoIndexID != nil {
		// Listed after the validation options, as mongod orders them: the
		// collation with mongod's defaults filled in (reads and writes
		// without a collation of their own use it), then the special ones.
		start, b := bson.AppendDocumentStart(nil)
		b = append(b, autoIndexID...)
		if opts.Extra != nil {
			b = append(b, opts.Extra[4:len(opts.Extra)-1]...)
		}
		if coll != nil {
			b = bson.AppendDocumentElement(b, "collation", coll.Spec())
		}
		b = append(b, special...)
		opts.Extra, _ = bson.AppendDocumentEnd(b, start)
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	if err := s.store.CreateCollection(r.DB, collName, opts); err != nil {
		if mongoerr.As(err).Code == mongoerr.NamespaceExists {
			// mongod 7.0+: creating what exists with the same options
			// succeeds.
			return nil, s.store.CheckExisting(r.DB, collName, store.CreateRequest{Options: opts}, err)
		}
		return nil, err
	}
	return nil, nil
}

// extraOptions collects the listed-only options of body (validator, ...)
// in order; nil when there are none.
func extraOptions(body bson.Raw) (bson.Raw, error) {
	start, b := bson.AppendDocumentStart(nil)
	it := body.Iter()
	for it.Next() {
		if !listedOptions[it.Key()] {
			continue
		}
		switch it.Key() {
		case "validator", "storageEngine", "indexOptionDefaults":
			if it.Value().Type != bson.TypeEmbeddedDocument {
				return nil, newError(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'object'", it.Key(), typeName(it.Value().Type))
			}
			if it.Key() == "validator" {
				// A validator must be a filter mongotest can run.
				if _, err := compileValidator(it.Value().Document()); err != nil {
					return nil, err
				}
			}
		case "changeStreamPreAndPostImages":
			// Kept and listed: mongotest has no change streams, so the
			// option has nothing to change. {enabled: false} is how
			// collMod turns it off; mongod then lists nothing.
			on, err := preAndPostImagesOption(it.Value())
			if err != nil {
				return nil, err
			}
			if !on {
				continue
			}
		case "validationLevel":
			switch it.Value().StringValue() {
			case "off", "strict", "moderate":
			default:
				return nil, newError(mongoerr.BadValue, "Enumeration value '%s' for field 'validationLevel' is not a valid value.", it.Value())
			}
		case "validationAction":
			switch it.Value().StringValue() {
			case "error", "warn", "errorAndLog":
			default:
				return nil, newError(mongoerr.BadValue, "Enumeration value '%s' for field 'validationAction' is not a valid value.", it.Value())
			}
		}
		b = append(b, it.Element()...)
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	if len(b) == 5 {
		return nil, nil
	}
	return b, nil
}

func dropCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, nil); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	c := s.store.Collection(r.DB, collName)
	if c == nil {
		if s.store.DropView(r.DB, collName) {
			start, dst := bson.AppendDocumentStart(nil)
			dst = bson.AppendStringElement(dst, "ns", ns(r.DB, collName))
			dst, _ = bson.AppendDocumentEnd(dst, start)
			return dst, nil
		}
		// mongod 7.0 and later drop a missing collection without error.
		return nil, nil
	}
	was := c.NumIndexes()
	s.store.DropCollection(r.DB, collName)
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "nIndexesWas", int32(was))
	dst = bson.AppendStringElement(dst, "ns", ns(r.DB, collName))
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

func dropDatabaseCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, nil); err != nil {
		return nil, err
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	if !s.store.DropDatabase(r.DB) {
		return nil, nil
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "dropped", r.DB)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

var renameArgs = fieldSet("to", "dropTarget", "stayTemp")

func renameCollectionCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, renameArgs); err != nil {
		return nil, err
	}
	from, ok := r.Body.Lookup("renameCollection").StringValueOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'renameCollection.renameCollection' is the wrong type '%s', expected type 'string'", typeName(r.Body.Lookup("renameCollection").Type))
	}
	tv, err := r.Body.LookupErr("to")
	if err != nil {
		return nil, newError(40414, "BSON field 'renameCollection.to' is missing but a required field")
	}
	to, ok := tv.StringValueOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'renameCollection.to' is the wrong type '%s', expected type 'string'", typeName(tv.Type))
	}
	dropTarget, err := boolArg(r.Body, "dropTarget", r.Name)
	if err != nil {
		return nil, err
	}
	fromDB, fromColl, ok1 := strings.Cut(from, ".")
	toDB, toColl, ok2 := strings.Cut(to, ".")
	if !ok1 || fromColl == "" {
		return nil, newError(mongoerr.InvalidNamespace, "Invalid source namespace: %s", from)
	}
	if !ok2 || toColl == "" {
		return nil, newError(mongoerr.InvalidNamespace, "Invalid target namespace: %s", to)
	}
	if err := store.ValidateCollectionName(fromDB, fromColl); err != nil {
		return nil, err
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	for _, c := range []*store.Collection{s.store.Collection(fromDB, fromColl), s.store.Collection(toDB, toColl)} {
		if err := errTimeseriesUnsupported(c, "renameCollection"); err != nil {
			return nil, err
		}
	}
	return nil, s.store.RenameCollection(fromDB, fromColl, toDB, toColl, dropTarget)
}

var collModArgs = fieldSet("index", "validator", "validationLevel", "validationAction",
	"expireAfterSeconds", "viewOn", "pipeline", "changeStreamPreAndPostImages", "cappedSize", "cappedMax",
	"timeseries", "recordPreImages", "dryRun")

func collModCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, collModArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	if s.store.View(r.DB, collName) != nil {
		return s.collModView(r, collName)
	}
	for _, k := range []string{"viewOn", "pipeline"} {
		if _, err := r.Body.LookupErr(k); err == nil {
			return nil, newError(mongoerr.InvalidOptions, "option only supported on a view: %s", k)
		}
	}
	for _, k := range []string{"expireAfterSeconds",
		"cappedSize", "cappedMax", "timeseries", "recordPreImages", "dryRun"} {
		if _, err := r.Body.LookupErr(k); err == nil {
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support the %s option of collMod", k)
		}
	}
	extra, err := extraOptions(r.Body)
	if err != nil {
		return nil, err
	}
	ixOpt, err := docArg(r.Body, "index", r.Name)
	if err != nil {
		return nil, err
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	c := s.store.Collection(r.DB, collName)
	if c == nil {
		return nil, newError(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns(r.DB, collName))
	}
	start, dst := bson.AppendDocumentStart(nil)
	if ixOpt != nil {
		if dst, err = collModIndex(dst, c, ixOpt); err != nil {
			return nil, err
		}
	}
	if v, err := r.Body.LookupErr("changeStreamPreAndPostImages"); err == nil {
		if on, _ := preAndPostImagesOption(v); !on {
			// Turned off: dropped from the listed options.
			if err := c.SetExtraOptions(withoutOption(c.Options().Extra, "changeStreamPreAndPostImages")); err != nil {
				return nil, err
			}
		}
	}
	if extra != nil {
		if err := c.SetExtraOptions(mergeOptions(c.Options().Extra, extra)); err != nil {
			return nil, err
		}
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// collModIndex applies collMod's index option and appends the old and new
// values mongod reports (hidden_old, hidden_new, expireAfterSeconds_old,
// expireAfterSeconds_new).
func collModIndex(dst []byte, c *store.Collection, opt bson.Raw) ([]byte, error) {
	if err := checkSubArgs(opt, "collMod.index", fieldSet("name", "keyPattern", "hidden", "expireAfterSeconds", "prepareUnique", "unique")); err != nil {
		return nil, err
	}
	for _, k := range []string{"prepareUnique", "unique"} {
		if _, err := opt.LookupErr(k); err == nil {
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support the index.%s option of collMod", k)
		}
	}
	name, hasName := opt.Lookup("name").StringValueOK()
	kp, hasKey := opt.Lookup("keyPattern").DocumentOK()
	if hasName == hasKey {
		return nil, newError(mongoerr.InvalidOptions, "must specify either index name or key pattern")
	}
	if hasKey {
		found := false
		for _, ix := range c.ListIndexes() {
			if bytesEqual(ix.Key, kp) {
				name, found = ix.Name, true
				break
			}
		}
		if !found {
			return nil, newError(mongoerr.IndexNotFound, "cannot find index %s for ns %s", kp, c.Namespace())
		}
	}
	var hidden *bool
	if _, err := opt.LookupErr("hidden"); err == nil {
		h, err := boolArg(opt, "hidden", "collMod.index")
		if err != nil {
			return nil, err
		}
		hidden = &h
	}
	var ttl *int64
	if _, err := opt.LookupErr("expireAfterSeconds"); err == nil {
		n, _, err := intArg(opt, "expireAfterSeconds", "collMod.index")
		if err != nil {
			return nil, err
		}
		ttl = &n
	}
	if hidden == nil && ttl == nil {
		return nil, newError(mongoerr.InvalidOptions, "no expireAfterSeconds or hidden field")
	}
	old, err := c.ModifyIndex(name, hidden, ttl)
	if err != nil {
		return nil, err
	}
	if ttl != nil && old.ExpireAfterSeconds != nil && *old.ExpireAfterSeconds != *ttl {
		dst = bson.AppendInt64Element(dst, "expireAfterSeconds_old", *old.ExpireAfterSeconds)
		dst = bson.AppendInt64Element(dst, "expireAfterSeconds_new", *ttl)
	}
	if hidden != nil && old.Hidden != *hidden {
		dst = bson.AppendBooleanElement(dst, "hidden_old", old.Hidden)
		dst = bson.AppendBooleanElement(dst, "hidden_new", *hidden)
	}
	return dst, nil
}

// mergeOptions returns old with the fields of upd replaced or added.
func mergeOptions(old, upd bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	it := old.Iter()
	for it.Next() {
		if _, err := upd.LookupErr(it.Key()); err == nil {
			continue
		}
		b = append(b, it.Element()...)
	}
	it = upd.Iter()
	for it.Next() {
		b = append(b, it.Element()...)
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// preAndPostImagesOption checks {changeStreamPreAndPostImages: {enabled:
// <bool>}} and returns enabled.
func preAndPostImagesOption(v bson.RawValue) (bool, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return false, newError(mongoerr.TypeMismatch, "BSON field 'changeStreamPreAndPostImages' is the wrong type '%s', expected type 'object'", typeName(v.Type))
	}
	enabled, has := false, false
	it := d.Iter()
	for it.Next() {
		if it.Key() != "enabled" {
			return false, newError(40415, "BSON field 'changeStreamPreAndPostImages.%s' is an unknown field.", it.Key())
		}
		b, ok := it.Value().BooleanOK()
		if !ok {
			return false, newError(mongoerr.TypeMismatch, "BSON field 'changeStreamPreAndPostImages.enabled' is the wrong type '%s', expected type 'bool'", typeName(it.Value().Type))
		}
		enabled, has = b, true
	}
	if !has {
		return false, newError(40414, "BSON field 'changeStreamPreAndPostImages.enabled' is missing but a required field")
	}
	return enabled, nil
}

// withoutOption returns opts without the field key; nil when nothing is
// left.
func withoutOption(opts bson.Raw, key string) bson.Raw {
	if opts == nil {
		return nil
	}
	start, b := bson.AppendDocumentStart(nil)
	it := opts.Iter()
	for it.Next() {
		if it.Key() != key {
			b = append(b, it.Element()...)
		}
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	if len(b) == 5 {
		return nil
	}
	return b
}
