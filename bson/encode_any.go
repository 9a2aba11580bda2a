package bson

import (
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"
)

// The encoder's fast path: documents and values of the types this package
// defines, plus Go's basic types, are written with a type switch and no
// reflection. Anything else goes to appendOther (marshal.go).

// hasNUL reports whether s contains a zero byte. Keys are short, so eight
// bytes at a time beats strings.IndexByte's setup cost.
func hasNUL(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if (x-0x0101010101010101)&^x&0x8080808080808080 != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// scratch buffers let Marshal encode into a warm buffer and then make one
// exact-size copy, instead of growing a fresh slice a dozen times.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// maxScratch keeps one huge document from pinning memory in the pool.
const maxScratch = 1 << 20

func getScratch() *[]byte { return scratchPool.Get().(*[]byte) }

func putScratch(b *[]byte, used []byte) {
	if cap(used) > maxScratch {
		return
	}
	*b = used[:0]
	scratchPool.Put(b)
}

// encodeDocument encodes a document-like value into a new exact-size slice.
func encodeDocument(v any) ([]byte, error) {
	s := getScratch()
	out, err := appendDocumentValue((*s)[:0], v, 1)
	if err != nil {
		putScratch(s, out)
		return nil, err
	}
	res := make([]byte, len(out))
	copy(res, out)
	putScratch(s, out)
	return res, nil
}

func keyError(key string) error {
	return &MarshalError{Path: key, Reason: "key contains a NUL byte"}
}

func depthError() error {
	return &MarshalError{Reason: "nesting exceeds the maximum depth of " + strconv.Itoa(MaxDepth)}
}

// inField prefixes a nested error's path with key. Error path only.
func inField(err error, key string) error {
	switch e := err.(type) {
	case *MarshalError:
		e.Path = joinKey(key, e.Path)
	case *UnmarshalTypeError:
		e.Path = joinKey(key, e.Path)
	case *DecodeError:
		e.Path = joinKey(key, e.Path)
	}
	return err
}

func joinKey(key, path string) string {
	if path == "" {
		return key
	}
	if key == "" {
		return path
	}
	return key + "." + path
}

// appendD writes d as a document. depth is d's nesting depth.
func appendD(dst []byte, d D, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, depthError()
	}
	start, dst := AppendDocumentStart(dst)
	var err error
	for i := range d {
		if dst, err = appendElement(dst, d[i].Key, d[i].Value, depth); err != nil {
			return dst[:start], err
		}
	}
	return AppendDocumentEnd(dst, start)
}

// appendM writes m as a document, in Go's map iteration order.
func appendM(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, depthError()
	}
	start, dst := AppendDocumentStart(dst)
	var err error
	for k, v := range m {
		if dst, err = appendElement(dst, k, v, depth); err != nil {
			return dst[:start], err
		}
	}
	return AppendDocumentEnd(dst, start)
}

// appendA writes a as an array.
func appendA(dst []byte, a []any, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, depthError()
	}
	start, dst := AppendDocumentStart(dst)
	var err error
	for i, v := range a {
		if dst, err = appendElement(dst, ArrayKey(i), v, depth); err != nil {
			return dst[:start], err
		}
	}
	return AppendDocumentEnd(dst, start)
}

// appendRawDocument appends an already-encoded document after validating it.
func appendRawDocument(dst []byte, r Raw) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return dst, &MarshalError{GoType: reflect.TypeOf(r), Reason: "invalid Raw document: " + err.Error(), Err: err}
	}
	return append(dst, r...), nil
}

// appendElement writes one element. depth is the depth of the document that
// holds it; nested documents are one deeper. Nil slices and maps are written
// as null, as struct fields and the official driver write them.
func appendElement(dst []byte, key string, v any, depth int) ([]byte, error) {
	if hasNUL(key) {
		return dst, keyError(key)
	}
	mark := len(dst)
	var err error
	switch x := v.(type) {
	case nil:
		return AppendHeader(dst, TypeNull, key), nil
	case string:
		return AppendStringElement(dst, key, x), nil
	case int32:
		return AppendInt32Element(dst, key, x), nil
	case int64:
		return AppendInt64Element(dst, key, x), nil
	case int:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return AppendInt32Element(dst, key, int32(x)), nil
		}
		return AppendInt64Element(dst, key, int64(x)), nil
	case float64:
		return AppendDoubleElement(dst, key, x), nil
	case bool:
		return AppendBooleanElement(dst, key, x), nil
	case D:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeEmbeddedDocument, key)
		dst, err = appendD(dst, x, depth+1)
	case M:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeEmbeddedDocument, key)
		dst, err = appendM(dst, x, depth+1)
	case map[string]any:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeEmbeddedDocument, key)
		dst, err = appendM(dst, x, depth+1)
	case A:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeArray, key)
		dst, err = appendA(dst, x, depth+1)
	case []any:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeArray, key)
		dst, err = appendA(dst, x, depth+1)
	case Raw:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeEmbeddedDocument, key)
		dst, err = appendRawDocument(dst, x)
	case RawValue:
		if verr := x.Validate(); verr != nil {
			err = &MarshalError{GoType: reflect.TypeOf(x), Reason: "invalid RawValue: " + verr.Error(), Err: verr}
		} else {
			dst = AppendValueElement(dst, key, x)
		}
	case ObjectID:
		return AppendObjectIDElement(dst, key, x), nil
	case DateTime:
		return AppendDateTimeElement(dst, key, int64(x)), nil
	case time.Time:
		return AppendDateTimeElement(dst, key, int64(NewDateTimeFromTime(x))), nil
	case Binary:
		return AppendBinaryElement(dst, key, x.Subtype, x.Data), nil
	case []byte:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		return AppendBinaryElement(dst, key, SubtypeGeneric, x), nil
	case Decimal128:
		return AppendDecimal128Element(dst, key, x), nil
	case Timestamp:
		return AppendTimestampElement(dst, key, x.T, x.I), nil
	case Regex:
		if hasNUL(x.Pattern) || hasNUL(x.Options) {
			return dst, &MarshalError{Path: key, Reason: "regex pattern or options contain a NUL byte"}
		}
		return AppendRegexElement(dst, key, x.Pattern, x.Options), nil
	case Null:
		return AppendHeader(dst, TypeNull, key), nil
	case Undefined:
		return AppendHeader(dst, TypeUndefined, key), nil
	case MinKey:
		return AppendHeader(dst, TypeMinKey, key), nil
	case MaxKey:
		return AppendHeader(dst, TypeMaxKey, key), nil
	case JavaScript:
		return AppendJavaScriptElement(dst, key, string(x)), nil
	case Symbol:
		return AppendSymbolElement(dst, key, string(x)), nil
	case DBPointer:
		return AppendDBPointerElement(dst, key, x.DB, x.Pointer), nil
	case CodeWithScope:
		dst = AppendHeader(dst, TypeCodeWithScope, key)
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst = AppendString(dst, string(x.Code))
		if dst, err = appendDocumentValue(dst, x.Scope, depth+1); err == nil {
			putInt32(dst[at:], int32(len(dst)-at))
		}
	case int8:
		return AppendInt32Element(dst, key, int32(x)), nil
	case int16:
		return AppendInt32Element(dst, key, int32(x)), nil
	case uint8:
		return AppendInt32Element(dst, key, int32(x)), nil
	case uint16:
		return AppendInt32Element(dst, key, int32(x)), nil
	case uint32:
		return AppendInt64Element(dst, key, int64(x)), nil
	case float32:
		return AppendDoubleElement(dst, key, float64(x)), nil
	case []string:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeArray, key)
		start := 0
		if start, dst, err = appendArrayStart(dst, depth+1); err == nil {
			for i, s := range x {
				dst = AppendStringElement(dst, ArrayKey(i), s)
			}
			dst, err = AppendDocumentEnd(dst, start)
		}
	case []D:
		if x == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		dst = AppendHeader(dst, TypeArray, key)
		start := 0
		if start, dst, err = appendArrayStart(dst, depth+1); err == nil {
			for i := 0; i < len(x) && err == nil; i++ {
				dst = AppendHeader(dst, TypeEmbeddedDocument, ArrayKey(i))
				dst, err = appendD(dst, x[i], depth+2)
				err = inIndex(err, i)
			}
			if err == nil {
				dst, err = AppendDocumentEnd(dst, start)
			}
		}
	default:
		dst, err = appendOther(dst, key, v, depth)
		if err != nil {
			return dst[:mark], err
		}
		return dst, nil
	}
	if err != nil {
		return dst[:mark], inField(err, key)
	}
	return dst, nil
}

func inIndex(err error, i int) error {
	if err == nil {
		return nil
	}
	return inField(err, ArrayKey(i))
}

func appendArrayStart(dst []byte, depth int) (int, []byte, error) {
	if depth > MaxDepth {
		return 0, dst, depthError()
	}
	start, dst := AppendDocumentStart(dst)
	return start, dst, nil
}

func putInt32(b []byte, v int32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// appendDocumentValue writes any document-like value (D, M, Raw, map,
// struct, Marshaler) as a document at depth.
func appendDocumentValue(dst []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case D:
		return appendD(dst, x, depth)
	case M:
		return appendM(dst, x, depth)
	case map[string]any:
		return appendM(dst, x, depth)
	case Raw:
		return appendRawDocument(dst, x)
	case nil:
		return dst, &MarshalError{Reason: "a nil value cannot be encoded as a document"}
	}
	return appendOtherDocument(dst, v, depth)
}
