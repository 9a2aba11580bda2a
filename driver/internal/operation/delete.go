package operation

import (
	"github.com/mongoscope/mongoscope/bson"
)

// DeleteStatement is one statement of a delete command; an unset
// RawValue is left out.
type DeleteStatement struct {
	Filter bson.Raw
	// Many deletes every matching document (limit 0) rather than the
	// first (limit 1).
	Many      bool
	Collation bson.RawValue
	Hint      bson.RawValue
}

// Encode returns the statement {q, limit, collation, hint}.
func (s *DeleteStatement) Encode() bson.Raw {
	limit := int32(1)
	if s.Many {
		limit = 0
	}
	return NewCommand("q", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: s.Filter}, len(s.Filter)+64).
		Int32("limit", &limit).Value("collation", s.Collation).Value("hint", s.Hint).Build()
}

// Delete is a delete command with its encoded statements.
type Delete struct {
	WriteCommand
	Statements []bson.Raw
}

// Command returns the command and the Batch of its statements.
func (d *Delete) Command() (bson.Raw, *Batch) {
	return d.Build("delete"), &Batch{Identifier: "deletes", Docs: d.Statements, Slack: StatementSlack}
}
