package operation

import (
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// FindAndModify is a findAndModify command, its parts already encoded;
// an unset RawValue or a nil pointer is left out.
type FindAndModify struct {
	Collection string
	Query      bson.Raw
	Sort       bson.RawValue
	// Remove deletes the document; otherwise Update (an update document,
	// a replacement or a pipeline) changes it, and New returns it as the
	// change left it.
	Remove                   bool
	Update                   bson.RawValue
	New                      bool
	Fields                   bson.RawValue
	Upsert                   *bool
	BypassDocumentValidation *bool
	MaxTime                  *time.Duration
	Collation                bson.RawValue
	ArrayFilters             bson.RawValue
	Hint                     bson.RawValue
	Let                      bson.RawValue
	Comment                  bson.RawValue
}

// Command returns the command.
func (f *FindAndModify) Command() bson.Raw {
	cmd := NewCollectionCommand("findAndModify", f.Collection, len(f.Query)+len(f.Update.Value)+64).
		Doc("query", f.Query).Value("sort", f.Sort)
	if f.Remove {
		cmd.True("remove", true)
	} else {
		cmd.Value("update", f.Update).True("new", f.New)
	}
	cmd.Value("fields", f.Fields).Bool("upsert", f.Upsert).Bool("bypassDocumentValidation", f.BypassDocumentValidation)
	appendMaxTime(cmd, f.MaxTime)
	return cmd.Value("collation", f.Collation).Value("arrayFilters", f.ArrayFilters).Value("hint", f.Hint).
		Value("let", f.Let).Value("comment", f.Comment).Build()
}

// CheckFindAndModifySize tells whether cmd, the command of an update or a
// replacement, is over the server's limit: the document goes in the
// command itself, which the server takes up to maxBsonObjectSize plus the
// StatementSlack allowance of an update statement. The error's text is
// the reason. (A remove carries no document and is not checked.)
func CheckFindAndModifySize(cmd bson.Raw, l ServerLimits) error {
	maxSize := int(l.MaxBSONObjectSize)
	if maxSize <= 0 {
		maxSize = 16 << 20
	}
	if len(cmd) > maxSize+StatementSlack {
		return fmt.Errorf("the command is %d bytes, over maxBsonObjectSize %d and the 16 KiB allowance", len(cmd), maxSize)
	}
	return nil
}

// ReadFindAndModifyReply reads a findAndModify reply: value, which the
// server always sends, is the document or null (no document); the
// lastErrorObject, when there, must be a document whose n is a
// non-negative integer and whose updatedExisting is a boolean. A reply
// that is not so is a *ReplyError.
func ReadFindAndModifyReply(body bson.Raw) (doc bson.Raw, found bool, err error) {
	if v, err := body.LookupErr("lastErrorObject"); err == nil {
		leo, ok := v.DocumentOK()
		if !ok {
			return nil, false, &ReplyError{Field: "lastErrorObject", Reason: fmt.Sprintf("a %s, not a document", v.Type)}
		}
		if n, err := leo.LookupErr("n"); err == nil {
			if i, ok := n.AsInt64OK(); !ok || i < 0 {
				return nil, false, &ReplyError{Field: "lastErrorObject.n", Reason: fmt.Sprintf("not a non-negative integer (a %s)", n.Type)}
			}
		}
		if u, err := leo.LookupErr("updatedExisting"); err == nil && u.Type != bson.TypeBoolean {
			return nil, false, &ReplyError{Field: "lastErrorObject.updatedExisting", Reason: fmt.Sprintf("a %s, not a boolean", u.Type)}
		}
	}
	v, err := body.LookupErr("value")
	if err != nil {
		return nil, false, &ReplyError{Field: "value", Reason: "missing"}
	}
	if v.Type == bson.TypeNull {
		return nil, false, nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		return nil, false, &ReplyError{Field: "value", Reason: fmt.Sprintf("a %s, not a document or null", v.Type)}
	}
	return d, true, nil
}
