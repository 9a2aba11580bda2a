package operation

import (
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// CountDocuments is countDocuments' aggregate command: the pipeline
// [{$match: filter}, {$skip}, {$limit}, {$group: {_id: 1, n: {$sum: 1}}}]
// the CRUD specification writes. Skip and Limit are sent when positive.
type CountDocuments struct {
	Collection string
	Filter     bson.Raw
	Skip       *int64
	Limit      *int64
	Collation  bson.RawValue
	MaxTime    *time.Duration
	Comment    bson.RawValue
	Hint       bson.RawValue
}

// countGroup is {_id: 1, n: {$sum: 1}}.
var countGroup = func() bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "_id", 1)
	sst, b := bson.AppendDocumentElementStart(b, "n")
	b = bson.AppendInt32Element(b, "$sum", 1)
	b, _ = bson.AppendDocumentEnd(b, sst)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}()

var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

// Command returns the command.
func (c *CountDocuments) Command() bson.Raw {
	f := c.Filter
	ast, p := bson.AppendDocumentStart(make([]byte, 0, len(f)+128))
	i := 0
	stage := func(appendStage func([]byte) []byte) {
		sst, b := bson.AppendDocumentElementStart(p, bson.ArrayKey(i))
		b = appendStage(b)
		p, _ = bson.AppendDocumentEnd(b, sst)
		i++
	}
	stage(func(b []byte) []byte { return bson.AppendDocumentElement(b, "$match", f) })
	if c.Skip != nil && *c.Skip > 0 {
		stage(func(b []byte) []byte { return bson.AppendInt64Element(b, "$skip", *c.Skip) })
	}
	if c.Limit != nil && *c.Limit > 0 {
		stage(func(b []byte) []byte { return bson.AppendInt64Element(b, "$limit", *c.Limit) })
	}
	stage(func(b []byte) []byte { return bson.AppendDocumentElement(b, "$group", countGroup) })
	p, _ = bson.AppendDocumentEnd(p, ast)

	cmd := NewCollectionCommand("aggregate", c.Collection, len(p)+64).
		Value("pipeline", bson.RawValue{Type: bson.TypeArray, Value: p}).Doc("cursor", emptyDoc).
		Value("collation", c.Collation)
	appendMaxTime(cmd, c.MaxTime)
	return cmd.Value("comment", c.Comment).Value("hint", c.Hint).Build()
}

// ReadCountDocuments reads the count from countDocuments' reply: the n of
// the first batch's document, or 0 when the batch is empty ($group
// returns no document when nothing matched). A malformed reply is a
// *ReplyError.
func ReadCountDocuments(body bson.Raw) (int64, error) {
	d, ok, err := FirstDocument(body)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, nil
	}
	return CountField(d, "cursor.firstBatch.0.n")
}

// Count is the count command of estimatedDocumentCount.
type Count struct {
	Collection string
	MaxTime    *time.Duration
	Comment    bson.RawValue
}

// Command returns the command.
func (c *Count) Command() bson.Raw {
	cmd := NewCollectionCommand("count", c.Collection, 32)
	appendMaxTime(cmd, c.MaxTime)
	return cmd.Value("comment", c.Comment).Build()
}

// CountField reads the n of d (a count reply, or countDocuments' $group
// document), a non-negative integer; path names it in a *ReplyError.
func CountField(d bson.Raw, path string) (int64, error) {
	v, err := d.LookupErr("n")
	if err != nil {
		return 0, &ReplyError{Field: path, Reason: "missing"}
	}
	n, ok := v.AsInt64OK()
	if !ok {
		return 0, &ReplyError{Field: path, Reason: fmt.Sprintf("a %s, not an integer", v.Type)}
	}
	if n < 0 {
		return 0, &ReplyError{Field: path, Reason: fmt.Sprintf("%d is negative", n)}
	}
	return n, nil
}
