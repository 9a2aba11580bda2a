package bson

import (
	"reflect"
	"strconv"
)

// DBRef is a reference to a document in another collection, stored as an
// embedded document {"$ref": collection, "$id": id, "$db": database, ...}
// as the DBRef specification defines. It is unrelated to the deprecated
// DBPointer type.
type DBRef struct {
	// Ref is the referenced document's collection. Any string is allowed.
	Ref string
	// ID is the referenced document's _id; any value is allowed, including
	// nil for a null _id.
	ID any
	// DB is the referenced document's database; "" means the same database
	// as the document holding the reference, and is not encoded.
	DB string
	// Extra holds any further fields, encoded after $db in this order.
	Extra D
}

// MarshalBSON encodes r as a document with $ref, $id, $db (when DB is set)
// and then the Extra fields in order, as the specification requires. $id and
// the extra values may be of any type Marshal accepts.
func (r DBRef) MarshalBSON() ([]byte, error) {
	start, dst := AppendDocumentStart(make([]byte, 0, 64))
	dst = AppendStringElement(dst, "$ref", r.Ref)
	dst, err := appendElement(dst, "$id", r.ID, 1)
	if err != nil {
		return nil, err
	}
	if r.DB != "" {
		dst = AppendStringElement(dst, "$db", r.DB)
	}
	for _, e := range r.Extra {
		switch e.Key {
		case "$ref", "$id", "$db":
			return nil, &MarshalError{Path: e.Key, Reason: "Extra repeats the reserved DBRef field " + strconv.Quote(e.Key)}
		}
		if dst, err = appendElement(dst, e.Key, e.Value, 1); err != nil {
			return nil, err
		}
	}
	return AppendDocumentEnd(dst, start)
}

// ParseDBRef reads doc as a DBRef. It reports false when doc is not valid
// BSON or is not a DBRef: a DBRef needs a string $ref and an $id of any
// type, and may have a string $db; the fields may come in any order, and
// every other field is kept in Extra in document order. A document that
// repeats $ref, $id or $db is not a DBRef, since which value is meant is
// ambiguous.
//
// $id and the extra values are decoded to nil (for null), bool, string,
// int32, int64, float64, ObjectID, DateTime, Timestamp, Decimal128, Binary,
// MinKey, MaxKey or Undefined;
// every other type, including embedded documents and arrays, is kept as a
// RawValue. Nothing in the result refers to doc's bytes.
func ParseDBRef(doc Raw) (DBRef, bool) {
	if doc.Validate() != nil {
		return DBRef{}, false
	}
	r, reason := parseDBRef(doc)
	return r, reason == ""
}

// UnmarshalBSON decodes a DBRef document into r, as ParseDBRef does, and
// reports why when it cannot: a *DecodeError for malformed bytes, an
// *UnmarshalTypeError for a document that is not a DBRef.
func (r *DBRef) UnmarshalBSON(data []byte) error {
	if err := Raw(data).Validate(); err != nil {
		return err
	}
	v, reason := parseDBRef(data)
	if reason != "" {
		return &UnmarshalTypeError{BSONType: TypeEmbeddedDocument, GoType: reflect.TypeOf(DBRef{}), Reason: reason}
	}
	*r = v
	return nil
}

// parseDBRef returns the DBRef in doc, or a reason it is not one. doc has
// been validated.
func parseDBRef(doc Raw) (DBRef, string) {
	var r DBRef
	var haveRef, haveID, haveDB bool
	it := doc.Iter()
	for it.Next() {
		v := it.Value()
		switch string(it.KeyBytes()) {
		case "$ref":
			s, ok := v.StringValueOK()
			switch {
			case haveRef:
				return DBRef{}, "$ref appears more than once"
			case !ok:
				return DBRef{}, "$ref is " + v.Type.String() + ", not a string"
			}
			r.Ref, haveRef = s, true
		case "$id":
			if haveID {
				return DBRef{}, "$id appears more than once"
			}
			r.ID, haveID = dbrefValue(v), true
		case "$db":
			s, ok := v.StringValueOK()
			switch {
			case haveDB:
				return DBRef{}, "$db appears more than once"
			case !ok:
				return DBRef{}, "$db is " + v.Type.String() + ", not a string"
			}
			r.DB, haveDB = s, true
		default:
			r.Extra = append(r.Extra, E{Key: it.Key(), Value: dbrefValue(v)})
		}
	}
	if err := it.Err(); err != nil {
		return DBRef{}, err.Error()
	}
	switch {
	case !haveRef:
		return DBRef{}, "$ref is missing"
	case !haveID:
		return DBRef{}, "$id is missing"
	}
	return r, ""
}

// dbrefValue decodes the value types a DBRef commonly holds to Go values and
// keeps any other as a RawValue with its own copy of the bytes. The value
// has been validated, so the accessors cannot fail.
func dbrefValue(v RawValue) any {
	switch v.Type {
	case TypeNull:
		return nil
	case TypeBoolean:
		return v.Boolean()
	case TypeString:
		return v.StringValue()
	case TypeInt32:
		return v.Int32()
	case TypeInt64:
		return v.Int64()
	case TypeDouble:
		return v.Double()
	case TypeObjectID:
		return v.ObjectID()
	case TypeDateTime:
		return DateTime(v.DateTime())
	case TypeTimestamp:
		t, i := v.Timestamp()
		return Timestamp{T: t, I: i}
	case TypeDecimal128:
		return v.Decimal128()
	case TypeBinary:
		if b, ok := v.BinaryOK(); ok {
			b.Data = append([]byte{}, b.Data...)
			return b
		}
	case TypeMinKey:
		return MinKey{}
	case TypeMaxKey:
		return MaxKey{}
	case TypeUndefined:
		return Undefined{}
	}
	return RawValue{Type: v.Type, Value: append([]byte(nil), v.Value...)}
}
