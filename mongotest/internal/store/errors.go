package store

import (
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Codes this package returns that mongoerr does not name.
const (
	codeInvalidBSON                     = 22
	codeCannotCreateIndex               = 67
	codeCannotIndexParallelArrays       = 171
	codeInvalidIndexSpecificationOption = 197
	codeBSONObjectTooLarge              = 10334
)

var extraNames = map[int32]string{
	codeInvalidBSON:                     "InvalidBSON",
	codeCannotCreateIndex:               "CannotCreateIndex",
	codeCannotIndexParallelArrays:       "CannotIndexParallelArrays",
	codeInvalidIndexSpecificationOption: "InvalidIndexSpecificationOption",
	codeBSONObjectTooLarge:              "BSONObjectTooLarge",
}

// newError is mongoerr.New that also knows the code names above.
func newError(code int32, format string, args ...any) *mongoerr.Error {
	e := mongoerr.New(code, format, args...)
	if n, ok := extraNames[code]; ok {
		e.CodeName = n
	}
	return e
}

// DuplicateKeyError is a unique index violation. Err is the DuplicateKey
// (11000) error with mongod's message; KeyPattern and KeyValue are the
// index's key pattern and the offending key, as a writeErrors entry
// carries them ({_id: 1} and {_id: 5} for a duplicate _id of 5).
type DuplicateKeyError struct {
	Err        *mongoerr.Error
	Index      string
	KeyPattern bson.Raw
	KeyValue   bson.Raw
}

func (e *DuplicateKeyError) Error() string { return e.Err.Error() }

// Unwrap returns the *mongoerr.Error, so mongoerr.As finds it.
func (e *DuplicateKeyError) Unwrap() error { return e.Err }

// newDuplicateKey builds mongod's E11000 error for index name on
// collection ns; keyValue holds the offending key under the index's field
// names.
func newDuplicateKey(ns, name string, pattern, keyValue bson.Raw) *DuplicateKeyError {
	msg := fmt.Sprintf("E11000 duplicate key error collection: %s index: %s dup key: %s",
		ns, name, formatDoc(nil, keyValue, 0))
	return &DuplicateKeyError{
		Err:        &mongoerr.Error{Code: mongoerr.DuplicateKey, CodeName: mongoerr.CodeName(mongoerr.DuplicateKey), Message: msg},
		Index:      name,
		KeyPattern: pattern,
		KeyValue:   keyValue,
	}
}

// IsNotFound reports whether err says that no document has the _id given
// to Replace, Modify or DeleteIf (it was deleted in the meantime, for
// example). Command handlers treat that as "nothing matched".
func IsNotFound(err error) bool {
	var e *notFoundError
	return errors.As(err, &e)
}

type notFoundError struct{ err *mongoerr.Error }

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

func errNotFound(ns string, id bson.RawValue) error {
	return &notFoundError{err: mongoerr.New(mongoerr.NoSuchKey,
		"no document in %s with _id: %s", ns, formatValue(nil, id, 0))}
}

// errDropped is what writes to a collection that was dropped (or whose
// database was) return.
func errDropped(ns string) error {
	return mongoerr.New(mongoerr.NamespaceNotFound, "collection %s was dropped", ns)
}
