package operation

import (
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
)

// StatementSlack is how much an update or delete statement (and a
// findAndModify command) may exceed maxBsonObjectSize: the CRUD
// specification's allowance for the statement's own fields around a
// document of the maximum size.
const StatementSlack = 16 * 1024

// WriteCommand is what an insert, update or delete command holds besides
// its statements, which go in the Op's Batch.
type WriteCommand struct {
	Collection               string
	Ordered                  bool
	BypassDocumentValidation *bool
	// Let is a document; unset (the zero value) leaves it out.
	Let     bson.RawValue
	Comment bson.RawValue
}

// Build returns the command {name: collection, ordered,
// bypassDocumentValidation, let, comment}.
func (w *WriteCommand) Build(name string) bson.Raw {
	return NewCollectionCommand(name, w.Collection, 64).Bool("ordered", &w.Ordered).
		Bool("bypassDocumentValidation", w.BypassDocumentValidation).Value("let", w.Let).Value("comment", w.Comment).Build()
}

// CheckUnacknowledgedHint refuses a hint on an unacknowledged delete or
// findAndModify to a server before 4.4 (wire version 9), which would
// ignore the error it causes: the CRUD specification has the driver raise
// it. (An update takes a hint from 4.2, the oldest server supported, and
// is not checked.) The error's text is the reason.
func CheckUnacknowledgedHint(l ServerLimits) error {
	if l.MaxWireVersion >= 9 {
		return nil
	}
	return fmt.Errorf("an unacknowledged write (w: 0) can carry a hint only to MongoDB 4.4 or later (wire version 9); the server's is %d", l.MaxWireVersion)
}
