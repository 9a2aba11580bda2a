package driver

import (
	"context"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// SearchIndexView manages a collection's Atlas Search and Vector Search
// indexes (the index-management specification's search index API):
// createSearchIndexes, updateSearchIndex, dropSearchIndex and the
// $listSearchIndexes stage. The server builds and drops them
// asynchronously: poll List to see a change applied. Read and write
// concerns are never sent with these commands, as the specification
// requires. A server without search answers SearchNotEnabled (31082).
//
// The methods take no options struct: the specification defines none yet,
// and one can be added later as a variadic parameter without breaking
// callers.
type SearchIndexView struct {
	coll *Collection
}

// SearchIndexes returns the view of the collection's search indexes.
func (coll *Collection) SearchIndexes() SearchIndexView { return SearchIndexView{coll: coll} }

// SearchIndexModel is one search index to create.
type SearchIndexModel struct {
	// Definition is the index definition, a document (its syntax depends
	// on the index type).
	Definition any
	// Options may be nil.
	Options *SearchIndexOptions
}

// SearchIndexOptions are a search index's name ("default" when unset)
// and type ("search" when unset, or "vectorSearch").
type SearchIndexOptions struct {
	Name *string
	Type *string
}

// ListSearchIndexesOptions pick the search indexes List returns: the
// one called Name, or all when Name is nil.
type ListSearchIndexesOptions struct {
	Name *string
}

// searchOp returns an Op for a search index command: the primary, no
// read or write concern.
func (v SearchIndexView) searchOp(name string, cmd bson.Raw) *operation.Op {
	return &operation.Op{Name: name, DB: v.coll.db.name, Collection: v.coll.name, Command: cmd, Selector: selection.Write()}
}

// CreateOne creates one search index and returns its name.
func (v SearchIndexView) CreateOne(ctx context.Context, model SearchIndexModel) (string, error) {
	names, err := v.create(ctx, []SearchIndexModel{model}, "model")
	if err != nil {
		return "", err
	}
	if len(names) != 1 {
		return "", malformed("createSearchIndexes", "", &ReplyError{Field: "indexesCreated", Reason: fmt.Sprintf("names %d indexes, not 1", len(names))})
	}
	return names[0], nil
}

// CreateMany creates search indexes in one command and returns their
// names, in order. (An empty list is sent as it is; the server decides.)
func (v SearchIndexView) CreateMany(ctx context.Context, models []SearchIndexModel) ([]string, error) {
	return v.create(ctx, models, "models")
}

func (v SearchIndexView) create(ctx context.Context, models []SearchIndexModel, arg string) ([]string, error) {
	coll := v.coll
	if err := coll.ready(); err != nil {
		return nil, err
	}
	specs := make([]bson.Raw, len(models))
	for i, m := range models {
		a := arg
		if arg == "models" {
			a = indexArg(arg, i)
		}
		def, err := marshalDocValue(a+".Definition", m.Definition)
		if err != nil {
			return nil, err
		}
		if def.Type == 0 {
			return nil, &ArgumentError{Argument: a + ".Definition", Reason: "the index definition is nil"}
		}
		spec := operation.SearchIndexSpec{Definition: def}
		if o := m.Options; o != nil {
			spec.Name, spec.Type = o.Name, o.Type
		}
		specs[i] = spec.Encode()
	}
	cmd := operation.CreateSearchIndexesCommand(coll.name, specs)
	res, err := coll.run(ctx, v.searchOp("createSearchIndexes", cmd))
	if err != nil {
		return nil, err
	}
	names, err := createdSearchIndexes(res.Body)
	if err != nil {
		return nil, malformed("createSearchIndexes", res.Address, err)
	}
	return names, nil
}

// createdSearchIndexes reads the names of a createSearchIndexes reply
// (operation.ReadCreatedSearchIndexes); a malformed one is a *ReplyError.
func createdSearchIndexes(body bson.Raw) ([]string, error) {
	names, err := operation.ReadCreatedSearchIndexes(body)
	return names, publicError(err)
}

// UpdateOne replaces the definition of the search index called name.
func (v SearchIndexView) UpdateOne(ctx context.Context, name string, definition any) error {
	coll := v.coll
	if err := coll.ready(); err != nil {
		return err
	}
	if name == "" {
		return &ArgumentError{Argument: "name", Reason: "the index name is empty"}
	}
	def, err := marshalDoc("definition", definition)
	if err != nil {
		return err
	}
	cmd := operation.UpdateSearchIndexCommand(coll.name, name, def)
	_, err = coll.run(ctx, v.searchOp("updateSearchIndex", cmd))
	return err
}

// DropOne drops the search index called name. A missing collection is
// not an error (the specification makes the drop idempotent).
func (v SearchIndexView) DropOne(ctx context.Context, name string) error {
	coll := v.coll
	if err := coll.ready(); err != nil {
		return err
	}
	if name == "" {
		return &ArgumentError{Argument: "name", Reason: "the index name is empty"}
	}
	cmd := operation.DropSearchIndexCommand(coll.name, name)
	if _, err := coll.run(ctx, v.searchOp("dropSearchIndex", cmd)); err != nil && !isNamespaceNotFound(err) {
		return err
	}
	return nil
}

// List returns a cursor over the collection's search indexes (the one
// called searchOpts.Name when set), from an aggregate whose pipeline is a
// $listSearchIndexes stage; opts are the aggregate's options, as the
// specification requires. It runs under the collection's read preference,
// without its read concern.
func (v SearchIndexView) List(ctx context.Context, searchOpts *ListSearchIndexesOptions, opts ...*AggregateOptions) (*Cursor, error) {
	coll := v.coll
	if err := coll.ready(); err != nil {
		return nil, err
	}
	var name *string
	if searchOpts != nil {
		name = searchOpts.Name
	}
	stage := operation.ListSearchIndexesStage(name)
	o := mergeAggregate(opts)
	a, err := aggregateCommand(operation.StringValue(coll.name), []bson.Raw{stage}, &o)
	if err != nil {
		return nil, err
	}
	// An enumeration, and an aggregate without a write stage: a
	// retryable read (retryable-reads, "Supported Read Operations").
	op := &operation.Op{Name: "aggregate", DB: coll.db.name, Collection: coll.name, Command: a.Command(),
		Selector: selection.Read(coll.c.readPref), Cursor: true, Retry: operation.RetryRead}
	res, err := coll.run(ctx, op)
	if err != nil {
		return nil, err
	}
	return coll.cursor(res, a.CursorOptions(o.MaxAwaitTime))
}
