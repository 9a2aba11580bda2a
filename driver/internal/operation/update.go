package operation

import (
	"github.com/mongoscope/mongoscope/bson"
)

// UpdateStatement is one statement of an update command, its parts
// already encoded; an unset RawValue is left out.
type UpdateStatement struct {
	Filter bson.Raw
	// Update is an update document, a replacement or a pipeline (array).
	Update       bson.RawValue
	Upsert       *bool
	Multi        bool
	ArrayFilters bson.RawValue
	Collation    bson.RawValue
	Hint         bson.RawValue
	Sort         bson.RawValue
}

// Encode returns the statement {q, u, upsert, multi, arrayFilters,
// collation, hint, sort}.
func (s *UpdateStatement) Encode() bson.Raw {
	return NewCommand("q", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: s.Filter}, len(s.Filter)+len(s.Update.Value)+64).
		Value("u", s.Update).Bool("upsert", s.Upsert).True("multi", s.Multi).Value("arrayFilters", s.ArrayFilters).
		Value("collation", s.Collation).Value("hint", s.Hint).Value("sort", s.Sort).Build()
}

// Update is an update command with its encoded statements.
type Update struct {
	WriteCommand
	Statements []bson.Raw
}

// Command returns the command and the Batch of its statements.
func (u *Update) Command() (bson.Raw, *Batch) {
	return u.Build("update"), &Batch{Identifier: "updates", Docs: u.Statements, Slack: StatementSlack}
}
