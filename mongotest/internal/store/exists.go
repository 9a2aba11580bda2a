package store

import (
	"encoding/hex"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// CreateRequest is what a create command asked for, to be compared with
// a namespace that already exists: a collection's options, or a view
// when ViewOn is set.
type CreateRequest struct {
	Options CollectionOptions
	// ViewOn, Pipeline and Collation (the filled-in spec, nil for
	// simple) describe a view.
	ViewOn    string
	Pipeline  []bson.Raw
	Collation bson.Raw
	// CollationShown is the requested collation as mongod's create
	// parser keeps it, which its messages quote; nil when none was given.
	CollationShown bson.Raw
}

// CheckExisting answers a create of db.name that failed with exists
// (NamespaceExists) as mongod 7.0 and later do (SERVER-60064): nil when
// the collection or view there has the requested options, NamespaceExists
// (48) saying what differs otherwise. A time-series request gets the
// create's own NamespaceExists error when anything differs, as in mongod,
// which compares it with the buckets collection and its view. When the
// namespace is gone again, exists is returned.
func (s *Store) CheckExisting(db, name string, req CreateRequest, exists error) error {
	s.mu.RLock()
	c := s.dbs[db][name]
	v := s.views[db][name]
	s.mu.RUnlock()
	ns := db + "." + name
	if req.Options.Timeseries && req.ViewOn == "" {
		switch {
		case c != nil && c.Options().Timeseries:
			if SameCollectionOptions(c.Options().Raw(), req.Options.Raw()) {
				return nil
			}
			return mongoerr.New(mongoerr.NamespaceExists, "A timeseries collection already exists. NS: %s", ns)
		case c != nil:
			return mongoerr.New(mongoerr.NamespaceExists, "Collection %s already exists.", ns)
		case v != nil:
			return mongoerr.New(mongoerr.NamespaceExists, "A view already exists. NS: %s", ns)
		}
		return exists
	}
	switch {
	case c != nil && c.Options().Timeseries:
		// In mongod a time-series collection is a view on its buckets
		// collection, system.buckets.<name>.
		if req.ViewOn == "system.buckets."+name {
			return mongoerr.New(mongoerr.NotImplemented, "mongotest does not model the view of time-series collection %s", ns)
		}
		return errOtherViewOn(ns, db, "system.buckets."+name, req.ViewOn)
	case c != nil:
		opts := c.Options().Raw()
		if req.ViewOn == "" && SameCollectionOptions(opts, req.Options.Raw()) {
			return nil
		}
		return mongoerr.New(mongoerr.NamespaceExists, "namespace %s already exists, but with different options: %s", ns, formatOptions(c.UUID(), opts))
	case v != nil:
		if req.ViewOn != v.ViewOn {
			return errOtherViewOn(ns, db, v.ViewOn, req.ViewOn)
		}
		if !samePipeline(v.Pipeline, req.Pipeline) {
			return mongoerr.New(mongoerr.NamespaceExists, "namespace %s already exists, but with pipeline %s rather than %s", ns, formatPipeline(v.Pipeline), formatPipeline(req.Pipeline))
		}
		if string(v.Collation) != string(req.Collation) {
			return mongoerr.New(mongoerr.NamespaceExists, "namespace %s already exists, but with collation: %s rather than %s", ns, formatDoc(nil, v.Collation, 0), formatDoc(nil, req.CollationShown, 0))
		}
		return nil
	}
	return exists
}

// errOtherViewOn is mongod's error for a create of a view (or, with
// viewOn "", a collection) over a view on another namespace: mongod names
// a collection request's viewOn as the bare database.
func errOtherViewOn(ns, db, has, want string) error {
	wantNS := db
	if want != "" {
		wantNS = db + "." + want
	}
	return mongoerr.New(mongoerr.NamespaceExists, "namespace %s already exists, but is a view on %s.%s rather than %s", ns, db, has, wantNS)
}

// emptyIsAbsent are the options mongod neither stores nor compares when
// they are an empty document.
var emptyIsAbsent = map[string]bool{"storageEngine": true, "indexOptionDefaults": true, "validator": true}

// SameCollectionOptions reports whether two collections' options
// documents (as listCollections shows them) are the same to mongod's
// CollectionOptions::matchesStorageOptions: the same options, in any
// order, with equal values (numbers by value, documents field by field in
// order); an empty storageEngine, indexOptionDefaults or validator is
// the same as none.
func SameCollectionOptions(a, b bson.Raw) bool {
	ka, kb := optionKeys(a), optionKeys(b)
	if len(ka) != len(kb) {
		return false
	}
	for k, v := range ka {
		if w, ok := kb[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func optionKeys(opts bson.Raw) map[string]string {
	out := map[string]string{}
	it := opts.Iter()
	for it.Next() {
		v := it.Value()
		if emptyIsAbsent[it.Key()] && v.Type == bson.TypeEmbeddedDocument && len(v.Document()) <= 5 {
			continue
		}
		out[it.Key()] = Key(v)
	}
	return out
}

func samePipeline(a, b []bson.Raw) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if Key(docValue(a[i])) != Key(docValue(b[i])) {
			return false
		}
	}
	return true
}

func docValue(d bson.Raw) bson.RawValue {
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
}

// optionOrder is the order in which mongod's CollectionOptions::toBSON
// writes the options its messages quote.
var optionOrder = []string{"capped", "size", "max", "autoIndexId", "temp", "recordPreImages",
	"changeStreamPreAndPostImages", "storageEngine", "indexOptionDefaults", "validator",
	"validationLevel", "validationAction", "collation", "clusteredIndex", "expireAfterSeconds",
	"viewOn", "pipeline", "idIndex", "timeseries", "encryptedFields"}

// formatOptions prints a collection's options as mongod's "already
// exists, but with different options" message does:
// { uuid: UUID("..."), capped: true, size: 4096 }.
func formatOptions(uuid bson.Binary, opts bson.Raw) string {
	dst := []byte("{ uuid: ")
	dst = appendUUID(dst, uuid)
	seen := map[string]bool{}
	add := func(k string, v bson.RawValue) {
		dst = append(dst, ", "...)
		dst = append(dst, k...)
		dst = append(dst, ": "...)
		dst = formatValue(dst, v, 0)
	}
	for _, k := range optionOrder {
		if v, err := opts.LookupErr(k); err == nil {
			add(k, v)
			seen[k] = true
		}
	}
	it := opts.Iter()
	for it.Next() {
		if !seen[it.Key()] {
			add(it.Key(), it.Value())
		}
	}
	return string(append(dst, " }"...))
}

// appendUUID appends a UUID as mongod prints one: UUID("8-4-4-4-12 hex").
func appendUUID(dst []byte, u bson.Binary) []byte {
	if len(u.Data) != 16 {
		return formatValue(dst, bson.RawValue{Type: bson.TypeBinary, Value: bson.AppendBinary(nil, u.Subtype, u.Data)}, 0)
	}
	h := hex.EncodeToString(u.Data)
	return fmt.Appendf(dst, "UUID(%q)", h[0:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:32])
}

// formatPipeline prints a view's pipeline as mongod's messages do: as a
// document with the stages under "0", "1"...
func formatPipeline(stages []bson.Raw) string {
	start, b := bson.AppendDocumentStart(nil)
	for i, st := range stages {
		b = bson.AppendDocumentElement(b, bson.ArrayKey(i), st)
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return string(formatDoc(nil, b, 0))
}
