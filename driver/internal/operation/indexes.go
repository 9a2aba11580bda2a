package operation

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// IndexSpec is one index of a createIndexes command, its parts already
// encoded; unset values are left out.
type IndexSpec struct {
	Keys                    bson.Raw
	Name                    string
	Unique                  *bool
	Sparse                  *bool
	ExpireAfterSeconds      *int32
	PartialFilterExpression bson.RawValue
	Collation               bson.RawValue
	Hidden                  *bool
	WildcardProjection      bson.RawValue
	Weights                 bson.RawValue
	DefaultLanguage         *string
	LanguageOverride        *string
	TextIndexVersion        *int32
	SphereVersion           *int32
	Bits                    *int32
	Min                     *float64
	Max                     *float64
	StorageEngine           bson.RawValue
	Version                 *int32
}

// Encode returns the index specification.
func (s *IndexSpec) Encode() bson.Raw {
	c := NewCommand("key", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: s.Keys}, len(s.Name)+64).
		Value("name", StringValue(s.Name)).
		Bool("unique", s.Unique).Bool("sparse", s.Sparse).Int32("expireAfterSeconds", s.ExpireAfterSeconds).
		Value("partialFilterExpression", s.PartialFilterExpression).Value("collation", s.Collation).Bool("hidden", s.Hidden).
		Value("wildcardProjection", s.WildcardProjection).Value("weights", s.Weights)
	if s.DefaultLanguage != nil {
		c.Value("default_language", StringValue(*s.DefaultLanguage))
	}
	if s.LanguageOverride != nil {
		c.Value("language_override", StringValue(*s.LanguageOverride))
	}
	c.Int32("textIndexVersion", s.TextIndexVersion).Int32("2dsphereIndexVersion", s.SphereVersion).Int32("bits", s.Bits)
	if s.Min != nil {
		c.Value("min", doubleValue(*s.Min))
	}
	if s.Max != nil {
		c.Value("max", doubleValue(*s.Max))
	}
	return c.Value("storageEngine", s.StorageEngine).Int32("v", s.Version).Build()
}

func doubleValue(f float64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDouble, Value: bson.AppendDoubleElement(nil, "", f)[2:]}
}

// IndexKeyError is a key of an index whose value no name can be made of.
type IndexKeyError struct {
	Key  string
	Type bson.Type
}

func (e *IndexKeyError) Error() string {
	return fmt.Sprintf("an index key's value is a %s: give a number or a string, or set IndexOptions.Name", e.Type)
}

// IndexName returns the name the server would give an index on keys:
// each key and its value, joined by "_" ({a: 1, b: -1} is "a_1_b_-1"). A
// value that is not a number or a string is an *IndexKeyError; a
// malformed document, the iterator's error.
func IndexName(keys bson.Raw) (string, error) {
	var b strings.Builder
	it := keys.Iter()
	for it.Next() {
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(it.Key())
		b.WriteByte('_')
		v := it.Value()
		switch v.Type {
		case bson.TypeInt32:
			b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
		case bson.TypeInt64:
			b.WriteString(strconv.FormatInt(v.Int64(), 10))
		case bson.TypeDouble:
			b.WriteString(strconv.FormatFloat(v.Double(), 'f', -1, 64))
		case bson.TypeString:
			b.WriteString(v.StringValue())
		default:
			return "", &IndexKeyError{Key: it.Key(), Type: v.Type}
		}
	}
	if err := it.Err(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// CreateIndexes is a createIndexes command.
type CreateIndexes struct {
	Collection   string
	Indexes      []bson.Raw
	CommitQuorum bson.RawValue
	MaxTimeMS    *int64
	Comment      bson.RawValue
}

// Command returns the command.
func (c *CreateIndexes) Command() bson.Raw {
	return NewCollectionCommand("createIndexes", c.Collection, 64).Array("indexes", c.Indexes).
		Value("commitQuorum", c.CommitQuorum).Int64("maxTimeMS", c.MaxTimeMS).Value("comment", c.Comment).Build()
}

// CheckCommitQuorum refuses a commitQuorum to a server before 4.4 (wire
// version 9): servers 4.2.0-4.2.5 take it without a word and misuse it,
// so the index management specification has drivers refuse it. The
// error's text is the reason.
func CheckCommitQuorum(l ServerLimits) error {
	if l.MaxWireVersion < 9 {
		return fmt.Errorf("commitQuorum needs MongoDB 4.4 or later (wire version 9); the server's wire version is %d", l.MaxWireVersion)
	}
	return nil
}

// CheckCreateIndexesReply checks the fields of a createIndexes reply that
// say what was done: numIndexesBefore and numIndexesAfter are
// non-negative integers, createdCollectionAutomatically a boolean, note a
// string, and a mongos's per-shard raw a document. The driver returns the
// names it sent, so it reads nothing else; the check keeps a garbled
// reply from passing for a success. A reply that is not so is a
// *ReplyError.
func CheckCreateIndexesReply(body bson.Raw) error {
	it := body.Iter()
	for it.Next() {
		v := it.Value()
		var want string
		switch key := it.Key(); key {
		case "numIndexesBefore", "numIndexesAfter":
			if n, ok := v.AsInt64OK(); !ok || n < 0 {
				return &ReplyError{Field: key, Reason: fmt.Sprintf("not a non-negative integer (a %s)", v.Type)}
			}
		case "createdCollectionAutomatically":
			want = "a boolean"
			if v.Type == bson.TypeBoolean {
				continue
			}
		case "note":
			want = "a string"
			if v.Type == bson.TypeString {
				continue
			}
		case "raw":
			want = "a document"
			if v.Type == bson.TypeEmbeddedDocument {
				continue
			}
		}
		if want != "" {
			return &ReplyError{Field: it.Key(), Reason: fmt.Sprintf("a %s, not %s", v.Type, want)}
		}
	}
	if err := it.Err(); err != nil {
		return &ReplyError{Field: "reply", Reason: err.Error()}
	}
	return nil
}

// DropIndexes is a dropIndexes command; Index is a name, a key document
// or "*".
type DropIndexes struct {
	Collection string
	Index      bson.RawValue
	MaxTimeMS  *int64
	Comment    bson.RawValue
}

// Command returns the command.
func (d *DropIndexes) Command() bson.Raw {
	return NewCollectionCommand("dropIndexes", d.Collection, 32).Value("index", d.Index).
		Int64("maxTimeMS", d.MaxTimeMS).Value("comment", d.Comment).Build()
}

// ListIndexes is a listIndexes command.
type ListIndexes struct {
	Collection string
	BatchSize  *int32
	Comment    bson.RawValue
}

// Command returns the command.
func (l *ListIndexes) Command() bson.Raw {
	cmd := NewCollectionCommand("listIndexes", l.Collection, 32)
	if l.BatchSize != nil {
		cmd.Doc("cursor", BatchSizeDoc(*l.BatchSize))
	}
	return cmd.Value("comment", l.Comment).Build()
}

// CursorOptions are the getMore options of the command's cursor (the
// comment goes with them).
func (l *ListIndexes) CursorOptions() CursorOptions {
	co := CursorOptions{Comment: l.Comment}
	if l.BatchSize != nil {
		co.BatchSize = *l.BatchSize
	}
	return co
}
