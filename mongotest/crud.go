package mongotest

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// Shared by the CRUD and catalog handlers: argument checking, role checks
// and reply pieces.

// Codes the handlers use that mongoerr does not list.
const (
	codeUnknownField      = 40415 // IDL: "BSON field 'x.y' is an unknown field."
	codeNonNegative       = 51024 // IDL: "value must be >= 0"
	codeCappedPositionLow = 136   // CappedPositionLost
	codeInvalidLength     = 16
)

// genericArgs are the fields every command accepts, as mongod's generic
// arguments; handlers read the ones they use.
var genericArgs = fieldSet("$db", "lsid", "txnNumber", "$clusterTime", "$readPreference",
	"readConcern", "writeConcern", "apiVersion", "apiStrict", "apiDeprecationErrors", "comment",
	"maxTimeMS", "$audit", "$client", "mayBypassWriteBlocking", "$configTime", "$topologyTime",
	"clientOperationKey", "$queryOptions")

// notImplementedArgs are options mongod has and mongotest refuses rather
// than ignores; the value names the feature in the error.
var notImplementedArgs = map[string]string{
	"startTransaction":      "transactions (startTransaction)",
	"autocommit":            "transactions (autocommit)",
	"encryptionInformation": "queryable encryption",
	"runtimeConstants":      "runtimeConstants",
}

func fieldSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkArgs rejects fields of r's body that the command does not know
// (mongod's IDL error 40415) and options mongotest does not implement
// (NotImplemented naming them), and checks readConcern and writeConcern.
// The first field, the command name, is skipped.
func checkArgs(r *Request, known map[string]bool) error {
	return eachArg(r, known, nil)
}

// eachArg is checkArgs that also calls fn with each known field, in one
// pass over the body (find's hot path reads its options this way).
func eachArg(r *Request, known map[string]bool, fn func(key []byte, v bson.RawValue) error) error {
	it := r.Body.Iter()
	first := true
	for it.Next() {
		if first {
			first = false
			continue
		}
		k := it.KeyBytes()
		if known[string(k)] {
			if fn != nil {
				if err := fn(k, it.Value()); err != nil {
					return err
				}
			}
			continue
		}
		if genericArgs[string(k)] {
			var err error
			switch string(k) {
			case "readConcern":
				err = checkReadConcern(it.Value())
			case "writeConcern":
				err = checkWriteConcern(it.Value())
			}
			if err != nil {
				return err
			}
			continue
		}
		if what, ok := notImplementedArgs[string(k)]; ok {
			return newError(mongoerr.NotImplemented, "mongotest does not support %s: the %s option of %s", what, k, r.Name)
		}
		return newError(codeUnknownField, "BSON field '%s.%s' is an unknown field.", r.Name, k)
	}
	return nil
}

// checkSubArgs is checkArgs for a nested document (an update statement),
// named "cmd.field" in errors.
func checkSubArgs(doc bson.Raw, where string, known map[string]bool) error {
	it := doc.Iter()
	for it.Next() {
		k := it.Key()
		if known[k] {
			continue
		}
		if what, ok := notImplementedArgs[k]; ok {
			return newError(mongoerr.NotImplemented, "mongotest does not support %s: the %s option of %s", what, k, where)
		}
		return newError(codeUnknownField, "BSON field '%s.%s' is an unknown field.", where, k)
	}
	return nil
}

func checkReadConcern(v bson.RawValue) error {
	rc, ok := v.DocumentOK()
	if !ok {
		return newError(mongoerr.TypeMismatch, "BSON field 'readConcern' is the wrong type '%s', expected type 'object'", typeName(v.Type))
	}
	it := rc.Iter()
	for it.Next() {
		switch it.Key() {
		case "level":
			lvl, ok := it.Value().StringValueOK()
			if !ok {
				return newError(mongoerr.TypeMismatch, "BSON field 'readConcern.level' is the wrong type '%s', expected type 'string'", typeName(it.Value().Type))
			}
			switch lvl {
			case "local", "available", "majority", "linearizable", "snapshot":
			default:
				return newError(mongoerr.FailedToParse, "Enumeration value '%s' for field 'readConcern.level' is not a valid value.", lvl)
			}
		case "afterClusterTime", "afterOpTime", "provenance", "atClusterTime":
		default:
			return newError(codeUnknownField, "BSON field 'readConcern.%s' is an unknown field.", it.Key())
		}
	}
	return nil
}

func checkWriteConcern(v bson.RawValue) error {
	wc, ok := v.DocumentOK()
	if !ok {
		return newError(mongoerr.TypeMismatch, "BSON field 'writeConcern' is the wrong type '%s', expected type 'object'", typeName(v.Type))
	}
	it := wc.Iter()
	for it.Next() {
		val := it.Value()
		switch it.Key() {
		case "w":
			if val.Type == bson.TypeString {
				continue
			}
			n, ok := val.AsInt64OK()
			if !ok || !val.IsNumber() {
				return newError(mongoerr.FailedToParse, "w has to be a number or string; found: %s", typeName(val.Type))
			}
			if n < 0 || n > 50 {
				return newError(mongoerr.FailedToParse, "w has to be a non-negative number and not greater than 50; found: %d", n)
			}
		case "j", "fsync":
			if _, ok := val.BooleanOK(); !ok && !val.IsNumber() {
				return newError(mongoerr.TypeMismatch, "writeConcern.%s must be a boolean", it.Key())
			}
		case "wtimeout", "wtimeoutMS":
			if !val.IsNumber() {
				return newError(mongoerr.TypeMismatch, "writeConcern.%s must be a number", it.Key())
			}
		case "provenance", "getLastError":
		default:
			return newError(codeUnknownField, "BSON field 'writeConcern.%s' is an unknown field.", it.Key())
		}
	}
	return nil
}

// typeName is the BSON type's name as mongod's messages spell it.
func typeName(t bson.Type) string { return mongoerr.TypeName(t) }

// collectionArg reads the collection name from the command's first field
// and checks the namespace.
func collectionArg(r *Request) (string, error) {
	v := r.Body.Lookup(r.Name)
	name, ok := v.StringValueOK()
	if !ok {
		return "", newError(mongoerr.InvalidNamespace, "collection name has invalid type %s", typeName(v.Type))
	}
	if err := store.ValidateCollectionName(r.DB, name); err != nil {
		return "", err
	}
	return name, nil
}

// docArg reads an optional document field; absent gives nil.
func docArg(body bson.Raw, key, cmd string) (bson.Raw, error) {
	v, err := body.LookupErr(key)
	if err != nil {
		return nil, nil
	}
	return docValue(v, key, cmd)
}

func docValue(v bson.RawValue, key, cmd string) (bson.Raw, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'object'", cmd, key, typeName(v.Type))
	}
	return d, nil
}

// boolArg reads an optional boolean; mongod's IDL also takes numbers.
func boolArg(body bson.Raw, key, cmd string) (bool, error) {
	v, err := body.LookupErr(key)
	if err != nil {
		return false, nil
	}
	return boolValue(v, key, cmd)
}

func boolValue(v bson.RawValue, key, cmd string) (bool, error) {
	if b, ok := v.BooleanOK(); ok {
		return b, nil
	}
	if f, ok := v.AsFloat64OK(); ok && v.IsNumber() {
		return f != 0, nil
	}
	if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
		return false, nil
	}
	return false, newError(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected types '[bool, long, int, decimal, double]'", cmd, key, typeName(v.Type))
}

// intArg reads an optional integral number that must not be negative.
func intArg(body bson.Raw, key, cmd string) (int64, bool, error) {
	v, err := body.LookupErr(key)
	if err != nil {
		return 0, false, nil
	}
	n, err := intValue(v, key, cmd)
	return n, true, err
}

// intValue reads an integral number that must not be negative.
func intValue(v bson.RawValue, key, cmd string) (int64, error) {
	var n int64
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, _ = v.AsInt64OK()
	case bson.TypeDouble:
		f := v.Double()
		if f != f || f > 9.2e18 || f < -9.2e18 {
			return 0, newError(mongoerr.BadValue, "BSON field '%s.%s' value %v is out of range", cmd, key, f)
		}
		n = int64(f)
	case bson.TypeDecimal128:
		f, ok := v.AsFloat64OK()
		if !ok || f != f || f > 9.2e18 || f < -9.2e18 {
			return 0, newError(mongoerr.BadValue, "BSON field '%s.%s' value is out of range", cmd, key)
		}
		n = int64(f)
	default:
		return 0, newError(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected types '[long, int, decimal, double]'", cmd, key, typeName(v.Type))
	}
	if n < 0 {
		return 0, newError(codeNonNegative, "BSON field '%s' value must be >= 0, actual value '%d'", key, n)
	}
	return n, nil
}

// role returns the server's role without copying the topology.
func (s *Server) role() Role {
	s.topo.mu.Lock()
	defer s.topo.mu.Unlock()
	return s.topo.t.Role
}

// checkWrite refuses writes on a member that is not primary, as mongod:
// NotWritablePrimary (10107). The core labels it RetryableWriteError when
// the request is a retryable write.
func (s *Server) checkWrite(r *Request) error {
	switch s.role() {
	case RoleSecondary, RoleArbiter, RoleHidden:
		return newError(mongoerr.NotWritablePrimary, "not primary")
	}
	return nil
}

// checkRead refuses reads on a secondary unless the request allows them
// (an OP_MSG $readPreference other than primary, or the legacy
// secondaryOk bit): NotPrimaryNoSecondaryOk (13435). An arbiter holds no
// data: NotPrimaryOrSecondary (13436).
func (s *Server) checkRead(r *Request) error {
	switch s.role() {
	case RoleArbiter:
		return newError(mongoerr.NotPrimaryOrSecondary, "node is not in primary or recovering state")
	case RoleSecondary, RoleHidden:
		if !secondaryOk(r) {
			return newError(mongoerr.NotPrimaryNoSecondaryOk, "not primary and secondaryOk=false")
		}
	}
	return nil
}

// secondaryOk tells whether r may read from a secondary: mongod takes any
// $readPreference whose mode is not primary.
func secondaryOk(r *Request) bool {
	v, err := r.Body.LookupErr("$readPreference")
	if err != nil {
		return false
	}
	rp, ok := v.DocumentOK()
	if !ok {
		return false
	}
	mode, _ := rp.Lookup("mode").StringValueOK()
	return mode != "" && mode != "primary"
}

// writeErr is one writeErrors entry.
type writeErr struct {
	index int
	err   error
}

// appendWriteErrors appends writeErrors: [{index, code, errmsg,
// keyPattern?, keyValue?}], as mongod reports them (no codeName).
func appendWriteErrors(dst []byte, errs []writeErr) []byte {
	if len(errs) == 0 {
		return dst
	}
	as, dst := bson.AppendArrayElementStart(dst, "writeErrors")
	for i, we := range errs {
		ds, d := bson.AppendDocumentElementStart(dst, bson.ArrayKey(i))
		e := mongoerr.As(we.err)
		d = bson.AppendInt32Element(d, "index", int32(we.index))
		d = bson.AppendInt32Element(d, "code", e.Code)
		d = bson.AppendStringElement(d, "errmsg", e.Message)
		d = appendDupKeyInfo(d, we.err)
		d = appendErrInfo(d, we.err)
		dst, _ = bson.AppendDocumentEnd(d, ds)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	return dst
}

// appendDupKeyInfo adds keyPattern and keyValue when err is a duplicate
// key error, as mongod's replies carry them.
func appendDupKeyInfo(dst []byte, err error) []byte {
	var dk *store.DuplicateKeyError
	if !asDupKey(err, &dk) {
		return dst
	}
	if dk.KeyPattern != nil {
		dst = bson.AppendDocumentElement(dst, "keyPattern", dk.KeyPattern)
	}
	if dk.KeyValue != nil {
		dst = bson.AppendDocumentElement(dst, "keyValue", dk.KeyValue)
	}
	return dst
}

func asDupKey(err error, out **store.DuplicateKeyError) bool {
	for err != nil {
		if dk, ok := err.(*store.DuplicateKeyError); ok {
			*out = dk
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// dupKeyReply is the extra reply fields of a command (findAndModify) that
// failed with a duplicate key: keyPattern and keyValue.
func dupKeyReply(err error) bson.Raw {
	start, dst := bson.AppendDocumentStart(nil)
	dst = appendDupKeyInfo(dst, err)
	dst = appendErrInfo(dst, err)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	if len(dst) == 5 {
		return nil
	}
	return dst
}

func ns(db, coll string) string { return db + "." + coll }

// valueCopy copies v so it outlives the request or document it points into.
func valueCopy(v bson.RawValue) bson.RawValue {
	return bson.RawValue{Type: v.Type, Value: append([]byte(nil), v.Value...)}
}
