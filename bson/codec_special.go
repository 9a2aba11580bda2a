package bson

import (
	"reflect"
	"strconv"
	"time"
	"unsafe"
)

// Codecs for this package's BSON types and time.Time, matched by exact
// type. Each writes its own BSON type and reads that type (plus null, which
// leaves the zero value, and a few lossless alternatives noted below).

var (
	rtObjectID      = reflect.TypeFor[ObjectID]()
	rtDateTime      = reflect.TypeFor[DateTime]()
	rtDecimal128    = reflect.TypeFor[Decimal128]()
	rtBinary        = reflect.TypeFor[Binary]()
	rtRegex         = reflect.TypeFor[Regex]()
	rtDBPointer     = reflect.TypeFor[DBPointer]()
	rtJavaScript    = reflect.TypeFor[JavaScript]()
	rtSymbol        = reflect.TypeFor[Symbol]()
	rtCodeWithScope = reflect.TypeFor[CodeWithScope]()
	rtTimestamp     = reflect.TypeFor[Timestamp]()
	rtMinKey        = reflect.TypeFor[MinKey]()
	rtMaxKey        = reflect.TypeFor[MaxKey]()
	rtNull          = reflect.TypeFor[Null]()
	rtUndefined     = reflect.TypeFor[Undefined]()
	rtD             = reflect.TypeFor[D]()
	rtA             = reflect.TypeFor[A]()
	rtAnySlice      = reflect.TypeFor[[]any]()
	rtRaw           = reflect.TypeFor[Raw]()
	rtRawValue      = reflect.TypeFor[RawValue]()
	rtUUID          = reflect.TypeFor[UUID]()
	rtVector        = reflect.TypeFor[Vector]()
)

// fillSpecial sets c's codec if c.typ is one of the special types.
func (pl *planner) fillSpecial(c *codec) bool {
	t := c.typ
	var enc encFunc
	var dec decFunc
	switch t {
	case rtTime:
		c.ekind, c.dkind = kTime, kTime
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendDateTimeElement(dst, key, int64(NewDateTimeFromTime(*(*time.Time)(p)))), nil
		}
		dec = decExact(t, TypeDateTime, func(v []byte) (time.Time, string) {
			return time.UnixMilli(le64(v)).UTC(), ""
		})
	case rtObjectID:
		c.ekind, c.dkind = kObjectID, kObjectID
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendObjectIDElement(dst, key, *(*ObjectID)(p)), nil
		}
		dec = decExact(t, TypeObjectID, func(v []byte) (ObjectID, string) {
			return ObjectID(v), ""
		})
	case rtDateTime:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendDateTimeElement(dst, key, int64(*(*DateTime)(p))), nil
		}
		dec = decExact(t, TypeDateTime, func(v []byte) (DateTime, string) {
			return DateTime(le64(v)), ""
		})
	case rtDecimal128:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendDecimal128Element(dst, key, *(*Decimal128)(p)), nil
		}
		dec = decExact(t, TypeDecimal128, func(v []byte) (Decimal128, string) {
			return NewDecimal128(uint64(le64(v[8:])), uint64(le64(v))), ""
		})
	case rtBinary:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			b := (*Binary)(p)
			return AppendBinaryElement(dst, key, b.Subtype, b.Data), nil
		}
		dec = decExact(t, TypeBinary, func(v []byte) (Binary, string) {
			st, data := binaryData(v)
			return Binary{Subtype: st, Data: append([]byte{}, data...)}, ""
		})
	case rtUUID:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendBinaryElement(dst, key, SubtypeUUID, (*UUID)(p)[:]), nil
		}
		dec = decExact(t, TypeBinary, func(v []byte) (UUID, string) {
			st, data := binaryData(v)
			if st != SubtypeUUID {
				return UUID{}, "binary subtype 0x" + strconv.FormatUint(uint64(st), 16) + " is not a UUID (subtype 0x04); decode a legacy UUID as Binary and convert it with Binary.UUID"
			}
			if len(data) != 16 {
				return UUID{}, "UUID binary has " + strconv.Itoa(len(data)) + " bytes, not 16"
			}
			return UUID(data), ""
		})
	case rtVector:
		// Binary subtype 9; the zero Vector, which has no dtype and is not
		// valid vector data, is null.
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			v := (*Vector)(p)
			if v.DType() == 0 {
				return AppendHeader(dst, TypeNull, key), nil
			}
			b := v.Binary()
			return AppendBinaryElement(dst, key, b.Subtype, b.Data), nil
		}
		dec = decExact(t, TypeBinary, func(v []byte) (Vector, string) {
			st, data := binaryData(v)
			vec, err := NewVectorFromBinary(Binary{Subtype: st, Data: data})
			if err != nil {
				return Vector{}, err.Error()
			}
			return vec, ""
		})
		c.enc, c.dec = enc, dec
		c.empty = func(p unsafe.Pointer) bool { return (*Vector)(p).DType() == 0 }
		c.zero = c.empty
		return true
	case rtRegex:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			r := (*Regex)(p)
			if !ValidKey(r.Pattern) || !ValidKey(r.Options) {
				return dst, &MarshalError{Path: key, GoType: t, Reason: "regex pattern or options contain a NUL byte"}
			}
			return AppendRegexElement(dst, key, r.Pattern, r.Options), nil
		}
		dec = decExact(t, TypeRegex, func(v []byte) (Regex, string) {
			i := 0
			for v[i] != 0 {
				i++
			}
			return Regex{Pattern: string(v[:i]), Options: string(v[i+1 : len(v)-1])}, ""
		})
	case rtDBPointer:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			d := (*DBPointer)(p)
			return AppendDBPointerElement(dst, key, d.DB, d.Pointer), nil
		}
		dec = decExact(t, TypeDBPointer, func(v []byte) (DBPointer, string) {
			n := int(le32(v))
			return DBPointer{DB: string(v[4 : 4+n-1]), Pointer: ObjectID(v[4+n:])}, ""
		})
	case rtJavaScript:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendJavaScriptElement(dst, key, string(*(*JavaScript)(p))), nil
		}
		dec = decStringAs(t, TypeJavaScript)
	case rtSymbol:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendSymbolElement(dst, key, string(*(*Symbol)(p))), nil
		}
		dec = decStringAs(t, TypeSymbol)
	case rtCodeWithScope:
		enc = encCodeWithScope
		dec = func(bt Type, v []byte, p unsafe.Pointer) error {
			switch bt {
			case TypeCodeWithScope:
				n := int(le32(v[4:]))
				code := JavaScript(v[8 : 8+n-1])
				scope, err := decodeValueAny(TypeEmbeddedDocument, v[8+n:], false)
				if err != nil {
					return err
				}
				*(*CodeWithScope)(p) = CodeWithScope{Code: code, Scope: scope}
			case TypeJavaScript:
				*(*CodeWithScope)(p) = CodeWithScope{Code: JavaScript(bsonString(v))}
			case TypeNull, TypeUndefined:
				*(*CodeWithScope)(p) = CodeWithScope{}
			default:
				return typeError(bt, t, "")
			}
			return nil
		}
	case rtTimestamp:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			ts := (*Timestamp)(p)
			return AppendTimestampElement(dst, key, ts.T, ts.I), nil
		}
		dec = decExact(t, TypeTimestamp, func(v []byte) (Timestamp, string) {
			return Timestamp{I: uint32(le32(v)), T: uint32(le32(v[4:]))}, ""
		})
	case rtMinKey:
		enc, dec = encMarker(TypeMinKey), decMarker(t, TypeMinKey)
	case rtMaxKey:
		enc, dec = encMarker(TypeMaxKey), decMarker(t, TypeMaxKey)
	case rtNull:
		enc, dec = encMarker(TypeNull), decMarker(t, TypeNull)
	case rtUndefined:
		enc, dec = encMarker(TypeUndefined), decMarker(t, TypeUndefined)
	case rtD:
		doc := func(dst []byte, p unsafe.Pointer, depth int) ([]byte, error) {
			return appendD(dst, *(*D)(p), depth)
		}
		enc = func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
			if *(*D)(p) == nil {
				return AppendHeader(dst, TypeNull, key), nil
			}
			return appendEmbedded(dst, TypeEmbeddedDocument, key, doc, p, depth)
		}
		c.doc = doc
		dec = func(bt Type, v []byte, p unsafe.Pointer) error {
			switch bt {
			case TypeEmbeddedDocument:
				x, err := decodeValueAny(bt, v, false)
				if err != nil {
					return err
				}
				*(*D)(p), _ = x.(D)
			case TypeNull, TypeUndefined:
				*(*D)(p) = nil
			default:
				return typeError(bt, t, "")
			}
			return nil
		}
	case rtA, rtAnySlice:
		enc = func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
			if *(*[]any)(p) == nil {
				return AppendHeader(dst, TypeNull, key), nil
			}
			return appendEmbedded(dst, TypeArray, key, func(dst []byte, p unsafe.Pointer, depth int) ([]byte, error) {
				return appendA(dst, *(*[]any)(p), depth)
			}, p, depth)
		}
		dec = func(bt Type, v []byte, p unsafe.Pointer) error {
			switch bt {
			case TypeArray:
				x, err := decodeValueAny(bt, v, false)
				if err != nil {
					return err
				}
				a, _ := x.(A)
				*(*[]any)(p) = a
			case TypeNull, TypeUndefined:
				*(*[]any)(p) = nil
			default:
				return typeError(bt, t, "")
			}
			return nil
		}
	case rtRaw:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			r := *(*Raw)(p)
			if r == nil {
				return AppendHeader(dst, TypeNull, key), nil
			}
			if err := r.Validate(); err != nil {
				return dst, inField(err, key)
			}
			return append(AppendHeader(dst, TypeEmbeddedDocument, key), r...), nil
		}
		c.doc = func(dst []byte, p unsafe.Pointer, _ int) ([]byte, error) {
			r := *(*Raw)(p)
			if err := r.Validate(); err != nil {
				return dst, err
			}
			return append(dst, r...), nil
		}
		dec = decExact(t, TypeEmbeddedDocument, func(v []byte) (Raw, string) {
			return append(Raw{}, v...), ""
		})
	case rtRawValue:
		enc = func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			rv := *(*RawValue)(p)
			if err := rv.Validate(); err != nil {
				return dst, &MarshalError{Path: key, GoType: t, Reason: "invalid RawValue: " + err.Error()}
			}
			return AppendValueElement(dst, key, rv), nil
		}
		dec = func(bt Type, v []byte, p unsafe.Pointer) error {
			*(*RawValue)(p) = RawValue{Type: bt, Value: append([]byte(nil), v...)}
			return nil
		}
	default:
		return false
	}
	c.enc, c.dec = enc, dec
	c.empty = emptyByKind(t)
	c.zero = func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().IsZero() }
	return true
}

// decExact decodes the BSON type want into a T through read, which
// returns a reason when the value does not fit T (a type error). null and
// undefined store T's zero value; any other type is a type error.
func decExact[T any](gt reflect.Type, want Type, read func(v []byte) (T, string)) decFunc {
	return func(bt Type, v []byte, p unsafe.Pointer) error {
		switch bt {
		case want:
			x, reason := read(v)
			if reason != "" {
				return typeError(bt, gt, reason)
			}
			*(*T)(p) = x
		case TypeNull, TypeUndefined:
			var zero T
			*(*T)(p) = zero
		default:
			return typeError(bt, gt, "")
		}
		return nil
	}
}

// decStringAs decodes a JavaScript or Symbol value (or a plain string) into
// a string-kinded BSON type.
func decStringAs(gt reflect.Type, want Type) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		switch t {
		case want, TypeString:
			*(*string)(p) = bsonString(v)
		case TypeNull, TypeUndefined:
			*(*string)(p) = ""
		default:
			return typeError(t, gt, "")
		}
		return nil
	}
}

// encMarker writes a value-less element (min key, max key, null,
// undefined).
func encMarker(t Type) encFunc {
	return func(dst []byte, key string, _ unsafe.Pointer, _ int) ([]byte, error) {
		return AppendHeader(dst, t, key), nil
	}
}

// decMarker accepts only its own type (and null) for a value-less type.
func decMarker(gt reflect.Type, want Type) decFunc {
	return func(t Type, _ []byte, _ unsafe.Pointer) error {
		if t != want && t != TypeNull {
			return typeError(t, gt, "")
		}
		return nil
	}
}

// encCodeWithScope writes a CodeWithScope; a nil Scope is an empty
// document.
func encCodeWithScope(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
	cws := (*CodeWithScope)(p)
	mark := len(dst)
	dst = AppendHeader(dst, TypeCodeWithScope, key)
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = AppendString(dst, string(cws.Code))
	var err error
	if cws.Scope == nil {
		dst = append(dst, 5, 0, 0, 0, 0)
	} else if dst, err = appendDocumentValue(dst, cws.Scope, depth+1); err != nil {
		return dst[:mark], inField(err, key)
	}
	putInt32(dst[at:], int32(len(dst)-at))
	return dst, nil
}
