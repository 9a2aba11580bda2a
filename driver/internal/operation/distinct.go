package operation

import (
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// Distinct is a distinct command, its parts already encoded.
type Distinct struct {
	Collection string
	Key        string
	Query      bson.Raw
	Collation  bson.RawValue
	MaxTime    *time.Duration
	Comment    bson.RawValue
	Hint       bson.RawValue
}

// Command returns the command.
func (d *Distinct) Command() bson.Raw {
	cmd := NewCollectionCommand("distinct", d.Collection, len(d.Query)+len(d.Key)+64).
		Value("key", StringValue(d.Key)).Doc("query", d.Query).Value("collation", d.Collation)
	appendMaxTime(cmd, d.MaxTime)
	return cmd.Value("comment", d.Comment).Value("hint", d.Hint).Build()
}

// ReadDistinct reads the values array of a distinct reply; a malformed
// one is a *ReplyError.
func ReadDistinct(body bson.Raw) (bson.Raw, error) {
	v, err := body.LookupErr("values")
	if err != nil {
		return nil, &ReplyError{Field: "values", Reason: "missing"}
	}
	a, ok := v.ArrayOK()
	if !ok {
		return nil, &ReplyError{Field: "values", Reason: fmt.Sprintf("a %s, not an array", v.Type)}
	}
	return a, nil
}
