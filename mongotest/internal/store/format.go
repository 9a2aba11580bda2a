package store

import (
	"encoding/hex"
	"math"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
)

// maxFormatLen bounds a formatted value in an error message; mongod also
// truncates long keys in its duplicate key messages.
const maxFormatLen = 1024

// formatValue appends v as mongod prints values in error messages, such as
// the "dup key: { _id: 1 }" part of a duplicate key error.
func formatValue(dst []byte, v bson.RawValue, depth int) []byte {
	if len(dst) > maxFormatLen {
		return dst
	}
	switch v.Type {
	case bson.TypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return append(dst, "nan.0"...)
		case math.IsInf(f, 1):
			return append(dst, "inf.0"...)
		case math.IsInf(f, -1):
			return append(dst, "-inf.0"...)
		}
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
		for _, c := range dst[start:] {
			if c == '.' || c == 'e' {
				return dst
			}
		}
		return append(dst, ".0"...)
	case bson.TypeInt32:
		return strconv.AppendInt(dst, int64(v.Int32()), 10)
	case bson.TypeInt64:
		return strconv.AppendInt(dst, v.Int64(), 10)
	case bson.TypeDecimal128:
		dst = append(dst, `NumberDecimal("`...)
		dst = v.Decimal128().AppendString(dst)
		return append(dst, `")`...)
	case bson.TypeString:
		return appendClipped(dst, v.StringValue())
	case bson.TypeSymbol:
		return appendClipped(dst, v.Symbol())
	case bson.TypeObjectID:
		id := v.ObjectID()
		dst = append(dst, "ObjectId('"...)
		dst = hex.AppendEncode(dst, id[:])
		return append(dst, "')"...)
	case bson.TypeBoolean:
		return strconv.AppendBool(dst, v.Boolean())
	case bson.TypeDateTime:
		dst = append(dst, "new Date("...)
		dst = strconv.AppendInt(dst, v.DateTime(), 10)
		return append(dst, ')')
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		dst = append(dst, "Timestamp("...)
		dst = strconv.AppendUint(dst, uint64(t), 10)
		dst = append(dst, ", "...)
		dst = strconv.AppendUint(dst, uint64(i), 10)
		return append(dst, ')')
	case bson.TypeNull:
		return append(dst, "null"...)
	case bson.TypeUndefined:
		return append(dst, "undefined"...)
	case bson.TypeMinKey:
		return append(dst, "MinKey"...)
	case bson.TypeMaxKey:
		return append(dst, "MaxKey"...)
	case bson.TypeRegex:
		p, o := v.Regex()
		dst = append(dst, '/')
		dst = append(dst, p...)
		dst = append(dst, '/')
		return append(dst, o...)
	case bson.TypeBinary:
		b := v.Binary()
		dst = append(dst, "BinData("...)
		dst = strconv.AppendUint(dst, uint64(b.Subtype), 10)
		dst = append(dst, ", "...)
		if len(b.Data) > maxFormatLen/2 {
			dst = hex.AppendEncode(dst, b.Data[:maxFormatLen/2])
			return append(dst, "...)"...)
		}
		dst = hex.AppendEncode(dst, b.Data)
		return append(dst, ')')
	case bson.TypeJavaScript:
		dst = append(dst, "JavaScript("...)
		dst = strconv.AppendQuote(dst, v.JavaScript())
		return append(dst, ')')
	case bson.TypeCodeWithScope:
		code, _ := v.CodeWithScope()
		dst = append(dst, "CodeWScope("...)
		dst = strconv.AppendQuote(dst, code)
		return append(dst, ')')
	case bson.TypeDBPointer:
		ns, id := v.DBPointer()
		dst = append(dst, "DBRef("...)
		dst = strconv.AppendQuote(dst, ns)
		dst = append(dst, ", '"...)
		dst = hex.AppendEncode(dst, id[:])
		return append(dst, "')"...)
	case bson.TypeEmbeddedDocument:
		if depth >= bson.MaxDepth {
			return append(dst, "{ ... }"...)
		}
		return formatDoc(dst, v.Document(), depth+1)
	case bson.TypeArray:
		if depth >= bson.MaxDepth {
			return append(dst, "[ ... ]"...)
		}
		it := v.Array().Iter()
		n := 0
		dst = append(dst, '[')
		for it.Next() {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, ' ')
			dst = formatValue(dst, it.Value(), depth+1)
			n++
		}
		if n > 0 {
			dst = append(dst, ' ')
		}
		return append(dst, ']')
	}
	dst = append(dst, "<type "...)
	dst = strconv.AppendUint(dst, uint64(v.Type), 10)
	return append(dst, '>')
}

// formatDoc appends doc as mongod prints documents: { a: 1, b: "x" }.
func formatDoc(dst []byte, doc bson.Raw, depth int) []byte {
	it := doc.Iter()
	n := 0
	dst = append(dst, '{')
	for it.Next() {
		if len(dst) > maxFormatLen {
			dst = append(dst, " ..."...)
			break
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, ' ')
		dst = append(dst, it.KeyBytes()...)
		dst = append(dst, ": "...)
		dst = formatValue(dst, it.Value(), depth)
		n++
	}
	if n > 0 {
		dst = append(dst, ' ')
	}
	return append(dst, '}')
}

// appendClipped appends s quoted, cut to maxFormatLen bytes.
func appendClipped(dst []byte, s string) []byte {
	if len(s) <= maxFormatLen {
		return strconv.AppendQuote(dst, s)
	}
	dst = strconv.AppendQuote(dst, s[:maxFormatLen])
	return append(dst, "..."...)
}
