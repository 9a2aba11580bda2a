package operation

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
)

// WriteReply is the part of an insert, update or delete reply that
// results are made from. Statement indexes have the batch's offset added.
type WriteReply struct {
	N     int64
	HaveN bool
	// NModified is an update's count of changed documents.
	NModified   int64
	Upserted    []Upserted
	WriteErrors []WriteError
	// WriteConcernError is set when HaveWriteConcernError.
	WriteConcernError     ServerError
	HaveWriteConcernError bool
	// Labels are the reply's errorLabels.
	Labels []string
}

// Upserted is a document an update statement inserted.
type Upserted struct {
	Index int
	ID    bson.RawValue
}

// ServerError is a write error's or a write concern error's code, name,
// message and errInfo.
type ServerError struct {
	Code     int32
	CodeName string
	Message  string
	Details  bson.Raw // errInfo, copied
}

// WriteError is a statement the server refused.
type WriteError struct {
	Index int
	ServerError
}

// ReadWriteReply reads a write command's reply; offset is added to the
// statement indexes (the batch's start among the caller's statements).
// What the results are made from must have its type: n and nModified are
// non-negative integers, each upserted entry has an index and an _id,
// each write error an index and a code, a write concern error a code,
// and errorLabels are strings. Anything else is a *ReplyError naming the
// field.
func ReadWriteReply(body bson.Raw, offset int) (WriteReply, error) {
	var r WriteReply
	it := body.Iter()
	for it.Next() {
		v := it.Value()
		switch key := it.Key(); key {
		case "n", "nModified":
			n, ok := v.AsInt64OK()
			if !ok {
				return r, &ReplyError{Field: key, Reason: fmt.Sprintf("a %s, not an integer", v.Type)}
			}
			if n < 0 {
				return r, &ReplyError{Field: key, Reason: fmt.Sprintf("%d is negative", n)}
			}
			if key == "n" {
				r.N, r.HaveN = n, true
			} else {
				r.NModified = n
			}
		case "upserted":
			err := eachEntry(v, "upserted", func(path string, d bson.Raw) error {
				idx, err := statementIndex(d, path, offset)
				if err != nil {
					return err
				}
				id, err := d.LookupErr("_id")
				if err != nil {
					return &ReplyError{Field: path + "._id", Reason: "missing"}
				}
				r.Upserted = append(r.Upserted, Upserted{Index: idx, ID: id})
				return nil
			})
			if err != nil {
				return r, err
			}
		case "writeErrors":
			err := eachEntry(v, "writeErrors", func(path string, d bson.Raw) error {
				idx, err := statementIndex(d, path, offset)
				if err != nil {
					return err
				}
				we := WriteError{Index: idx}
				if we.ServerError, err = errorFields(d, path); err != nil {
					return err
				}
				r.WriteErrors = append(r.WriteErrors, we)
				return nil
			})
			if err != nil {
				return r, err
			}
		case "writeConcernError":
			d, ok := v.DocumentOK()
			if !ok {
				return r, &ReplyError{Field: key, Reason: fmt.Sprintf("a %s, not a document", v.Type)}
			}
			var err error
			if r.WriteConcernError, err = errorFields(d, key); err != nil {
				return r, err
			}
			r.HaveWriteConcernError = true
		case "errorLabels":
			if err := eachEntry(v, key, nil); err != nil {
				return r, err
			}
			ai := v.Array().Iter()
			for ai.Next() {
				r.Labels = append(r.Labels, ai.Value().StringValue())
			}
		}
	}
	if err := it.Err(); err != nil {
		return r, &ReplyError{Field: "reply", Reason: err.Error()}
	}
	return r, nil
}

// eachEntry walks the array v of a write reply (path is its field):
// with fn nil its elements must be strings (errorLabels), otherwise
// documents, which fn gets with their path.
func eachEntry(v bson.RawValue, path string, fn func(path string, d bson.Raw) error) error {
	arr, ok := v.ArrayOK()
	if !ok {
		return &ReplyError{Field: path, Reason: fmt.Sprintf("a %s, not an array", v.Type)}
	}
	ai := arr.Iter()
	for i := 0; ai.Next(); i++ {
		p := path + "." + strconv.Itoa(i)
		ev := ai.Value()
		if fn == nil {
			if ev.Type != bson.TypeString {
				return &ReplyError{Field: p, Reason: fmt.Sprintf("a %s, not a string", ev.Type)}
			}
			continue
		}
		d, ok := ev.DocumentOK()
		if !ok {
			return &ReplyError{Field: p, Reason: fmt.Sprintf("a %s, not a document", ev.Type)}
		}
		if err := fn(p, d); err != nil {
			return err
		}
	}
	if err := ai.Err(); err != nil {
		return &ReplyError{Field: path, Reason: err.Error()}
	}
	return nil
}

// statementIndex reads the index of an upserted entry or a write error:
// a statement's position in the batch, plus offset.
func statementIndex(d bson.Raw, path string, offset int) (int, error) {
	v, err := d.LookupErr("index")
	if err != nil {
		return 0, &ReplyError{Field: path + ".index", Reason: "missing"}
	}
	i, ok := v.AsInt64OK()
	if !ok {
		return 0, &ReplyError{Field: path + ".index", Reason: fmt.Sprintf("a %s, not an integer", v.Type)}
	}
	if i < 0 || i > math.MaxInt32 {
		return 0, &ReplyError{Field: path + ".index", Reason: fmt.Sprintf("%d is not a statement index", i)}
	}
	return int(i) + offset, nil
}

// errorFields reads the code (required, an int32), codeName and errmsg
// (strings) and errInfo (a document) of a write error or a write concern
// error.
func errorFields(d bson.Raw, path string) (ServerError, error) {
	var e ServerError
	haveCode := false
	it := d.Iter()
	for it.Next() {
		v := it.Value()
		var ok bool
		switch key := it.Key(); key {
		case "code":
			c, ok := v.AsInt64OK()
			if !ok || c < math.MinInt32 || c > math.MaxInt32 {
				return ServerError{}, &ReplyError{Field: path + ".code", Reason: fmt.Sprintf("not a 32-bit integer (a %s)", v.Type)}
			}
			e.Code, haveCode = int32(c), true
		case "codeName", "errmsg":
			var str string
			if str, ok = v.StringValueOK(); !ok {
				return ServerError{}, &ReplyError{Field: path + "." + key, Reason: fmt.Sprintf("a %s, not a string", v.Type)}
			}
			if key == "codeName" {
				e.CodeName = str
			} else {
				e.Message = str
			}
		case "errInfo":
			doc, ok := v.DocumentOK()
			if !ok {
				return ServerError{}, &ReplyError{Field: path + ".errInfo", Reason: fmt.Sprintf("a %s, not a document", v.Type)}
			}
			e.Details = append(bson.Raw(nil), doc...)
		}
	}
	if err := it.Err(); err != nil {
		return ServerError{}, &ReplyError{Field: path, Reason: err.Error()}
	}
	if !haveCode {
		return ServerError{}, &ReplyError{Field: path + ".code", Reason: "missing"}
	}
	return e, nil
}

// Check checks a write reply against its batch: sent statements of the
// command name, starting at offset. The statement indexes must fall in
// the batch, once each; n is required; an insert cannot insert and refuse
// more documents than it sent; and an update cannot upsert more documents
// than it counts, or modify more than it matched.
func (r *WriteReply) Check(name string, offset, sent int) error {
	if !r.HaveN && len(r.WriteErrors) == 0 {
		// A reply with write errors and no n is taken as n: 0, as some
		// servers (FerretDB v1) answer a refused statement: the write
		// errors still reach the caller. Without write errors, the count
		// is the only result and its absence is an error.
		return &ReplyError{Field: "n", Reason: "missing"}
	}
	seen := make(map[int]bool, len(r.WriteErrors))
	for i, we := range r.WriteErrors {
		if we.Index < offset || we.Index >= offset+sent {
			return &ReplyError{Field: fmt.Sprintf("writeErrors.%d.index", i), Reason: fmt.Sprintf("%d is outside the batch of %d statements", we.Index-offset, sent)}
		}
		if seen[we.Index] {
			return &ReplyError{Field: fmt.Sprintf("writeErrors.%d.index", i), Reason: fmt.Sprintf("statement %d has a write error already", we.Index-offset)}
		}
		seen[we.Index] = true
	}
	for i, u := range r.Upserted {
		if u.Index < offset || u.Index >= offset+sent {
			return &ReplyError{Field: fmt.Sprintf("upserted.%d.index", i), Reason: fmt.Sprintf("%d is outside the batch of %d statements", u.Index-offset, sent)}
		}
	}
	switch {
	case name == "insert" && r.N+int64(len(r.WriteErrors)) > int64(sent):
		return &ReplyError{Field: "n", Reason: fmt.Sprintf("%d documents inserted and %d refused from a batch of %d", r.N, len(r.WriteErrors), sent)}
	case int64(len(r.Upserted)) > r.N:
		return &ReplyError{Field: "n", Reason: fmt.Sprintf("%d is less than the %d upserted documents", r.N, len(r.Upserted))}
	case r.NModified > r.N-int64(len(r.Upserted)):
		return &ReplyError{Field: "nModified", Reason: fmt.Sprintf("%d is more than the %d documents matched", r.NModified, r.N-int64(len(r.Upserted)))}
	}
	return nil
}
