package driver

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// DeleteOptions are the options of DeleteOne and DeleteMany. A nil field
// is left out of the command.
type DeleteOptions struct {
	// Collation is a document such as bson.D{{"locale", "en"}}.
	Collation any
	// Hint is an index name or key document (servers 4.4+).
	Hint any
	// Let defines variables the filter can use as $$name (servers 5.0+).
	Let     any
	Comment any
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// DeleteOne deletes the first document that matches filter.
func (coll *Collection) DeleteOne(ctx context.Context, filter any, opts ...*DeleteOptions) (*DeleteResult, error) {
	return coll.delete(ctx, filter, false, opts)
}

// DeleteMany deletes every document that matches filter (bson.D{}
// matches all; nil is refused).
func (coll *Collection) DeleteMany(ctx context.Context, filter any, opts ...*DeleteOptions) (*DeleteResult, error) {
	return coll.delete(ctx, filter, true, opts)
}

func (coll *Collection) delete(ctx context.Context, filter any, many bool, opts []*DeleteOptions) (*DeleteResult, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	var o DeleteOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setIf(&o.Collation, x.Collation)
		setIf(&o.Hint, x.Hint)
		setIf(&o.Let, x.Let)
		setIf(&o.Comment, x.Comment)
		setPtr(&o.WriteConcern, x.WriteConcern)
	}
	coll, err := coll.override("DeleteOptions", nil, o.WriteConcern, nil)
	if err != nil {
		return nil, err
	}
	st := deleteStmt{filterArg: "filter", optArg: "DeleteOptions.", filter: filter, many: many, collation: o.Collation, hint: o.Hint}
	raw, err := st.encode()
	if err != nil {
		return nil, err
	}
	wc, err := writeCommandFields(coll.name, true, nil, o.Let, o.Comment, "DeleteOptions.")
	if err != nil {
		return nil, err
	}
	d := operation.Delete{WriteCommand: wc, Statements: []bson.Raw{raw}}
	cmd, bt := d.Command()
	wr, ack, err := coll.runOne(ctx, "delete", cmd, bt, "filter", st.hintArg())
	if err != nil {
		return nil, err
	}
	if !ack {
		return &DeleteResult{}, nil
	}
	return &DeleteResult{DeletedCount: wr.n, Acknowledged: true}, nil
}

// deleteStmt is one delete, from DeleteOne, DeleteMany or a bulk write's
// model.
type deleteStmt struct {
	filterArg, optArg string
	filter            any
	many              bool
	collation, hint   any
}

func (st *deleteStmt) hintArg() string {
	if st.hint == nil {
		return ""
	}
	return st.optArg + "Hint"
}

// encode checks and encodes the statement's parts;
// operation.DeleteStatement lays it out.
func (st *deleteStmt) encode() (bson.Raw, error) {
	q, err := marshalDoc(st.filterArg, st.filter)
	if err != nil {
		return nil, err
	}
	collation, err := marshalDocValue(st.optArg+"Collation", st.collation)
	if err != nil {
		return nil, err
	}
	hint, err := marshalHint(st.optArg+"Hint", st.hint)
	if err != nil {
		return nil, err
	}
	s := operation.DeleteStatement{Filter: q, Many: st.many, Collation: collation, Hint: hint}
	return s.Encode(), nil
}
