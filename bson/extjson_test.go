package bson

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

// ejDoc builds a document with the append functions; f appends elements.
func ejDoc(f func(b []byte) []byte) []byte {
	start, b := AppendDocumentStart(nil)
	b = f(b)
	b, _ = AppendDocumentEnd(b, start)
	return b
}

func ejOID(s string) ObjectID {
	var id ObjectID
	if !ejParseHex(id[:], []byte(s)) {
		panic("bad test ObjectID " + s)
	}
	return id
}

func ejDec(s string) Decimal128 {
	d, err := ParseDecimal128(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestExtJSONParse(t *testing.T) {
	oid := ejOID("56e1fc72e0c917e9c4714161")
	uuid := []byte{0x73, 0xff, 0xd2, 0x64, 0x44, 0xb3, 0x4c, 0x69, 0x90, 0xe8, 0xe7, 0xd1, 0xdf, 0xc0, 0x35, 0xd4}
	tests := []struct {
		name string
		in   string
		want []byte
	}{
		{"empty", `{}`, ejDoc(func(b []byte) []byte { return b })},
		{"whitespace everywhere", " \t\r\n{ \"a\" \n: \t[ 1 , { } , [ ] ] \r} \n", ejDoc(func(b []byte) []byte {
			s, b := AppendArrayElementStart(b, "a")
			b = AppendInt32Element(b, "0", 1)
			b = AppendDocumentElement(b, "1", ejDoc(func(b []byte) []byte { return b }))
			b = AppendArrayElement(b, "2", ejDoc(func(b []byte) []byte { return b }))
			b, _ = AppendDocumentEnd(b, s)
			return b
		})},
		{"literals and strings", `{"s":"x","t":true,"f":false,"n":null}`, ejDoc(func(b []byte) []byte {
			b = AppendStringElement(b, "s", "x")
			b = AppendBooleanElement(b, "t", true)
			b = AppendBooleanElement(b, "f", false)
			return AppendNullElement(b, "n")
		})},
		{"string escapes", `{"e":"\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00\u0000é"}`, ejDoc(func(b []byte) []byte {
			return AppendStringElement(b, "e", "\"\\/\b\f\n\r\tAé😀\x00é")
		})},
		{"escaped key", `{"\u0061\n":1}`, ejDoc(func(b []byte) []byte { return AppendInt32Element(b, "a\n", 1) })},
		{"JSON numbers take the smallest exact type", `{"a":0,"b":-1,"c":2147483647,"d":2147483648,"e":-2147483648,"f":-2147483649,` +
			`"g":9223372036854775807,"h":-9223372036854775808,"i":9223372036854775808,"j":1.5,"k":1e2,"l":-0,"m":-0.0,"n":1E-2,"o":-12345678901234567890123}`,
			ejDoc(func(b []byte) []byte {
				b = AppendInt32Element(b, "a", 0)
				b = AppendInt32Element(b, "b", -1)
				b = AppendInt32Element(b, "c", math.MaxInt32)
				b = AppendInt64Element(b, "d", math.MaxInt32+1)
				b = AppendInt32Element(b, "e", math.MinInt32)
				b = AppendInt64Element(b, "f", math.MinInt32-1)
				b = AppendInt64Element(b, "g", math.MaxInt64)
				b = AppendInt64Element(b, "h", math.MinInt64)
				b = AppendDoubleElement(b, "i", 9223372036854775808)
				b = AppendDoubleElement(b, "j", 1.5)
				b = AppendDoubleElement(b, "k", 100)
				b = AppendInt32Element(b, "l", 0)
				b = AppendDoubleElement(b, "m", math.Copysign(0, -1))
				b = AppendDoubleElement(b, "n", 0.01)
				return AppendDoubleElement(b, "o", -12345678901234567890123)
			})},
		{"canonical numbers", `{"i":{"$numberInt":"-2147483648"},"l":{"$numberLong":"9223372036854775807"},"d":{"$numberDouble":"-1.5E+3"},` +
			`"z":{"$numberDouble":"-0.0"},"p":{"$numberDouble":"Infinity"},"m":{"$numberDouble":"-Infinity"},"n":{"$numberDouble":"NaN"},"x":{"$numberDecimal":"1.5"},"one":{"$numberDouble":"1"}}`,
			ejDoc(func(b []byte) []byte {
				b = AppendInt32Element(b, "i", math.MinInt32)
				b = AppendInt64Element(b, "l", math.MaxInt64)
				b = AppendDoubleElement(b, "d", -1500)
				b = AppendDoubleElement(b, "z", math.Copysign(0, -1))
				b = AppendDoubleElement(b, "p", math.Inf(1))
				b = AppendDoubleElement(b, "m", math.Inf(-1))
				b = AppendDoubleElement(b, "n", math.Float64frombits(0x7FF8000000000000))
				b = AppendDecimal128Element(b, "x", ejDec("1.5"))
				return AppendDoubleElement(b, "one", 1)
			})},
		{"other wrappers", `{"o":{"$oid":"56E1FC72e0c917e9c4714161"},"s":{"$symbol":"sym"},"c":{"$code":"f()"},"t":{"$timestamp":{"i":4294967295,"t":1}},` +
			`"r":{"$regularExpression":{"options":"xmi","pattern":"^a/b"}},"p":{"$dbPointer":{"$id":{"$oid":"56e1fc72e0c917e9c4714161"},"$ref":"db.c"}},` +
			`"u":{"$undefined":true},"lo":{"$minKey":1},"hi":{"$maxKey":1}}`,
			ejDoc(func(b []byte) []byte {
				b = AppendObjectIDElement(b, "o", oid)
				b = AppendSymbolElement(b, "s", "sym")
				b = AppendJavaScriptElement(b, "c", "f()")
				b = AppendTimestampElement(b, "t", 1, math.MaxUint32)
				b = AppendRegexElement(b, "r", "^a/b", "imx")
				b = AppendDBPointerElement(b, "p", "db.c", oid)
				b = AppendUndefinedElement(b, "u")
				b = AppendMinKeyElement(b, "lo")
				return AppendMaxKeyElement(b, "hi")
			})},
		{"binary: canonical, one-digit subtype, subtype 2, legacy both orders, $uuid", `{"a":{"$binary":{"subType":"80","base64":"AQID"}},` +
			`"b":{"$binary":{"base64":"","subType":"4"}},"c":{"$binary":{"base64":"//8=","subType":"02"}},` +
			`"d":{"$binary":"AQID","$type":"5"},"e":{"$type":"Ff","$binary":"AQID"},"f":{"$uuid":"73ffd264-44b3-4c69-90e8-e7d1dfc035d4"},"g":{"$uuid":"73FFD26444B34C6990E8E7D1DFC035D4"}}`,
			ejDoc(func(b []byte) []byte {
				b = AppendBinaryElement(b, "a", 0x80, []byte{1, 2, 3})
				b = AppendBinaryElement(b, "b", 4, nil)
				b = AppendBinaryElement(b, "c", 2, []byte{0xff, 0xff})
				b = AppendBinaryElement(b, "d", 5, []byte{1, 2, 3})
				b = AppendBinaryElement(b, "e", 0xff, []byte{1, 2, 3})
				b = AppendBinaryElement(b, "f", 4, uuid)
				return AppendBinaryElement(b, "g", 4, uuid)
			})},
		{"code with scope in either key order, nested", `{"a":{"$code":"f","$scope":{"x":1}},"b":{"$scope":{"y":{"$code":"g","$scope":{}}},"$code":"h"}}`,
			ejDoc(func(b []byte) []byte {
				b = AppendCodeWithScopeElement(b, "a", "f", ejDoc(func(b []byte) []byte { return AppendInt32Element(b, "x", 1) }))
				inner := ejDoc(func(b []byte) []byte {
					return AppendCodeWithScopeElement(b, "y", "g", ejDoc(func(b []byte) []byte { return b }))
				})
				return AppendCodeWithScopeElement(b, "b", "h", inner)
			})},
		{"dates", `{"a":{"$date":"1970-01-01T00:00:00Z"},"b":{"$date":"2012-12-24T12:15:30.501Z"},"c":{"$date":"2012-12-24t13:15:30.5019+01:00"},` +
			`"d":{"$date":"2012-12-24T10:45:30-0130"},"e":{"$date":"1969-12-31T23:59:59.999z"},"f":{"$date":{"$numberLong":"-62135596800000"}},"g":{"$date":"2000-02-29T00:00:00.1Z"}}`,
			ejDoc(func(b []byte) []byte {
				b = AppendDateTimeElement(b, "a", 0)
				b = AppendDateTimeElement(b, "b", 1356351330501)
				b = AppendDateTimeElement(b, "c", 1356351330501)
				b = AppendDateTimeElement(b, "d", 1356351330000)
				b = AppendDateTimeElement(b, "e", -1)
				b = AppendDateTimeElement(b, "f", -62135596800000)
				return AppendDateTimeElement(b, "g", 951782400100)
			})},
		{"legacy regex and the $regex query operator", `{"a":{"$regex":"^x","$options":"si"},"b":{"$options":"","$regex":"y"},` +
			`"q":{"$regex":{"$regularExpression":{"pattern":"foo*","options":""}},"$options":"ix"},"r":{"$regex":"z"},"s":{"$regex":"z","$options":"i","x":1}}`,
			ejDoc(func(b []byte) []byte {
				b = AppendRegexElement(b, "a", "^x", "is")
				b = AppendRegexElement(b, "b", "y", "")
				b = AppendDocumentElement(b, "q", ejDoc(func(b []byte) []byte {
					b = AppendRegexElement(b, "$regex", "foo*", "")
					return AppendStringElement(b, "$options", "ix")
				}))
				b = AppendDocumentElement(b, "r", ejDoc(func(b []byte) []byte { return AppendStringElement(b, "$regex", "z") }))
				return AppendDocumentElement(b, "s", ejDoc(func(b []byte) []byte {
					b = AppendStringElement(b, "$regex", "z")
					b = AppendStringElement(b, "$options", "i")
					return AppendInt32Element(b, "x", 1)
				}))
			})},
		{"$type query operator, unknown $ keys, DBRef-like documents stay documents", `{"t":{"$type":2},"u":{"$type":"string"},"v":{"$foo":1,"$numberint":"1"},` +
			`"r":{"$ref":"c","$id":1,"$db":"d","x":2},"s":{"$ref":"c"}}`,
			ejDoc(func(b []byte) []byte {
				b = AppendDocumentElement(b, "t", ejDoc(func(b []byte) []byte { return AppendInt32Element(b, "$type", 2) }))
				b = AppendDocumentElement(b, "u", ejDoc(func(b []byte) []byte { return AppendStringElement(b, "$type", "string") }))
				b = AppendDocumentElement(b, "v", ejDoc(func(b []byte) []byte {
					b = AppendInt32Element(b, "$foo", 1)
					return AppendStringElement(b, "$numberint", "1")
				}))
				b = AppendDocumentElement(b, "r", ejDoc(func(b []byte) []byte {
					b = AppendStringElement(b, "$ref", "c")
					b = AppendInt32Element(b, "$id", 1)
					b = AppendStringElement(b, "$db", "d")
					return AppendInt32Element(b, "x", 2)
				}))
				return AppendDocumentElement(b, "s", ejDoc(func(b []byte) []byte { return AppendStringElement(b, "$ref", "c") }))
			})},
		{"wrapper keys at the top level are plain keys", `{"$oid":"x","$regex":"a","$options":"i"}`, ejDoc(func(b []byte) []byte {
			b = AppendStringElement(b, "$oid", "x")
			b = AppendStringElement(b, "$regex", "a")
			return AppendStringElement(b, "$options", "i")
		})},
		{"array of wrappers", `{"a":[{"$numberLong":"1"},{"$oid":"56e1fc72e0c917e9c4714161"},"s"]}`, ejDoc(func(b []byte) []byte {
			s, b := AppendArrayElementStart(b, "a")
			b = AppendInt64Element(b, "0", 1)
			b = AppendObjectIDElement(b, "1", oid)
			b = AppendStringElement(b, "2", "s")
			b, _ = AppendDocumentEnd(b, s)
			return b
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseExtJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseExtJSON(%s): %v", tt.in, err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("ParseExtJSON(%s)\n got %X\nwant %X", tt.in, []byte(got), tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("result does not validate: %v", err)
			}
			// Appending keeps what dst held.
			out, err := AppendParseExtJSON([]byte("pre"), []byte(tt.in))
			if err != nil || string(out[:3]) != "pre" || !bytes.Equal(out[3:], tt.want) {
				t.Fatalf("AppendParseExtJSON = %X, %v", out, err)
			}
		})
	}
}

func TestExtJSONParseErrors(t *testing.T) {
	deep := func(n int, open, close, inner string) string {
		return `{"a":` + strings.Repeat(open, n) + inner + strings.Repeat(close, n) + `}`
	}
	tests := []struct {
		in     string
		off    int
		path   string
		reason string
	}{
		{``, 0, "", "input is empty"},
		{`  `, 2, "", "input is empty"},
		{`[]`, 0, "", "must be a JSON object"},
		{`"a"`, 0, "", "must be a JSON object"},
		{`{"a":1} x`, 8, "", "after the top-level object"},
		{`{"a":1}{}`, 7, "", "after the top-level object"},
		{`{"a":1`, 6, "", "end of input"},
		{`{"a" 1}`, 5, "", "want ':'"},
		{`{"a":1,}`, 7, "", "want a string key"},
		{`{a:1}`, 1, "", "want a string key"},
		{`{"a":[1,]}`, 8, "a.1", "want a value"},
		{`{"a":[1 2]}`, 8, "a", "want ',' or ']'"},
		{`{"a":01}`, 5, "a", "leading zeros"},
		{`{"a":-01}`, 5, "a", "leading zeros"},
		{`{"a":1.}`, 7, "a", "invalid number"},
		{`{"a":.5}`, 5, "a", "want a value"},
		{`{"a":+1}`, 5, "a", "want a value"},
		{`{"a":1e}`, 7, "a", "invalid number"},
		{`{"a":-}`, 6, "a", "invalid number"},
		{`{"a":1e400}`, 5, "a", "out of the range of a double"},
		{`{"a":-1e400}`, 5, "a", "out of the range of a double"},
		{`{"a":tru}`, 5, "a", "want true"},
		{`{"a":nul}`, 5, "a", "want null"},
		{`{"a":NaN}`, 5, "a", "want a value"},
		{"{\"a\":\"\x01\"}", 6, "a", "control character"},
		{"{\"a\":\"\xff\"}", 6, "a", "invalid UTF-8"},
		{"{\"a\xc3\":1}", 3, "", "invalid UTF-8"},
		{`{"a":"\q"}`, 6, "a", "invalid escape"},
		{`{"a":"\u12"}`, 6, "a", `invalid \u escape`},
		{`{"a":"\ud800"}`, 6, "a", "lone UTF-16 surrogate"},
		{`{"a":"\ud800\u0041"}`, 6, "a", "lone UTF-16 surrogate"},
		{`{"a":"\udc00"}`, 6, "a", "lone UTF-16 surrogate"},
		{`{"a":"abc`, 5, "a", "unterminated string"},
		{`{"a\u0000":1}`, 1, "", "NUL byte"},
		{`{"a":{"b\u0000":1}}`, 6, "a", "NUL byte"},
		// Type wrapper values.
		{`{"a":{"b":{"$numberInt":"x"}}}`, 24, "a.b.$numberInt", "$numberInt must be a decimal 32-bit integer"},
		{`{"a":{"$numberInt":"2147483648"}}`, 19, "a.$numberInt", "32-bit integer"},
		{`{"a":{"$numberInt":"+1"}}`, 19, "a.$numberInt", "32-bit integer"},
		{`{"a":{"$numberInt":"01"}}`, 19, "a.$numberInt", "32-bit integer"},
		{`{"a":{"$numberInt":" 1"}}`, 19, "a.$numberInt", "32-bit integer"},
		{`{"a":{"$numberInt":"1.0"}}`, 19, "a.$numberInt", "32-bit integer"},
		{`{"a":{"$numberInt":""}}`, 19, "a.$numberInt", "32-bit integer"},
		{`{"a":{"$numberInt":1}}`, 19, "a.$numberInt", "must be a string, found a number"},
		{`{"a":{"$numberLong":"9223372036854775808"}}`, 20, "a.$numberLong", "64-bit integer"},
		{`{"a":{"$numberLong":"-9223372036854775809"}}`, 20, "a.$numberLong", "64-bit integer"},
		{`{"a":{"$numberDouble":"1."}}`, 22, "a.$numberDouble", "not a number"},
		{`{"a":{"$numberDouble":"inf"}}`, 22, "a.$numberDouble", "not a number"},
		{`{"a":{"$numberDouble":"+1"}}`, 22, "a.$numberDouble", "not a number"},
		{`{"a":{"$numberDouble":"1 "}}`, 22, "a.$numberDouble", "not a number"},
		{`{"a":{"$numberDouble":"1e400"}}`, 22, "a.$numberDouble", "out of the range"},
		{`{"a":{"$numberDecimal":"1.2.3"}}`, 23, "a.$numberDecimal", "$numberDecimal"},
		{`{"a":{"$oid":"56e1fc72e0c917e9c471416"}}`, 13, "a.$oid", "24 hexadecimal digits"},
		{`{"a":{"$oid":"56e1fc72e0c917e9c471416g"}}`, 13, "a.$oid", "24 hexadecimal digits"},
		{`{"a":{"$binary":{"base64":"AQI","subType":"00"}}}`, 26, "a.$binary.base64", "invalid base64"},
		{`{"a":{"$binary":{"base64":"AQ\nI=","subType":"00"}}}`, 26, "a.$binary.base64", "line break"},
		{`{"a":{"$binary":{"base64":"AQ==","subType":"100"}}}`, 43, "a.$binary.subType", "hex binary subtype"},
		{`{"a":{"$binary":{"base64":"AQ==","subType":""}}}`, 43, "a.$binary.subType", "hex binary subtype"},
		{`{"a":{"$binary":{"base64":"AQ==","subType":"0x"}}}`, 43, "a.$binary.subType", "hex binary subtype"},
		{`{"a":{"$binary":{"base64":"AQ==","base64":"AQ==","subType":"0"}}}`, 33, "a.$binary", "appears twice"},
		{`{"a":{"$binary":{"base64":"AQ=="}}}`, 6, "a.$binary", "missing its \"subType\""},
		{`{"a":{"$binary":"AQ=="}}`, 6, "a", "needs a \"$type\""},
		{`{"a":{"$binary":"AQ==","$type":0}}`, 23, "a", "legacy $type must be a hex string"},
		{`{"a":{"$binary":"AQ==","$type":"zz"}}`, 23, "a", "not a one- or two-digit hex"},
		{`{"a":{"$binary":{"base64":"AQ==","subType":"00"},"$type":"00"}}`, 49, "a", `unexpected key "$type"`},
		{`{"a":{"$binary":5}}`, 16, "a.$binary", "must be an object"},
		{`{"a":{"$uuid":"73ffd264-44b3-4c69-90e8-e7d1dfc035d"}}`, 14, "a.$uuid", "$uuid"},
		{`{"a":{"$timestamp":{"t":-1,"i":0}}}`, 24, "a.$timestamp.t", "from 0 to 4294967295"},
		{`{"a":{"$timestamp":{"t":4294967296,"i":0}}}`, 24, "a.$timestamp.t", "from 0 to 4294967295"},
		{`{"a":{"$timestamp":{"t":1.0,"i":0}}}`, 24, "a.$timestamp.t", "from 0 to 4294967295"},
		{`{"a":{"$timestamp":{"t":1,"i":1e2}}}`, 30, "a.$timestamp.i", "from 0 to 4294967295"},
		{`{"a":{"$timestamp":{"t":1,"i":"1"}}}`, 30, "a.$timestamp.i", "non-negative integer"},
		{`{"a":{"$timestamp":{"t":1}}}`, 6, "a.$timestamp", `missing its "i"`},
		{`{"a":{"$timestamp":{"t":1,"i":2,"x":3}}}`, 32, "a.$timestamp", `unexpected key "x"`},
		{`{"a":{"$regularExpression":{"pattern":"a\u0000","options":""}}}`, 38, "a.$regularExpression.pattern", "NUL byte"},
		{`{"a":{"$regularExpression":{"pattern":"a","options":"\u0000"}}}`, 52, "a.$regularExpression.options", "NUL byte"},
		{`{"a":{"$regex":"a\u0000","$options":""}}`, 6, "a.$regex", "NUL byte"},
		{`{"a":{"$regex":"a","$options":"\u0000"}}`, 19, "a.$options", "NUL byte"},
		{`{"a":{"$dbPointer":{"$ref":"b"}}}`, 6, "a.$dbPointer", `missing its "$id"`},
		{`{"a":{"$dbPointer":{"$ref":"b","$id":"56e1fc72e0c917e9c4714161"}}}`, 37, "a.$dbPointer.$id", "must be an object"},
		{`{"a":{"$dbPointer":{"$ref":"b","$id":{"$oid":"56e1fc72e0c917e9c4714161","x":1}}}}`, 72, "a.$dbPointer.$id", `unexpected key "x"`},
		{`{"a":{"$date":42}}`, 14, "a.$date", "RFC 3339 string or"},
		{`{"a":{"$date":{"$numberInt":"1"}}}`, 15, "a.$date", `unexpected key "$numberInt"`},
		{`{"a":{"$date":{"$numberLong":"1.5"}}}`, 29, "a.$date.$numberLong", "64-bit integer"},
		{`{"a":{"$date":{}}}`, 14, "a.$date", `must be {"$numberLong"`},
		{`{"a":{"$date":"2012-13-01T00:00:00Z"}}`, 14, "a.$date", "out of range"},
		{`{"a":{"$date":"2011-02-29T00:00:00Z"}}`, 14, "a.$date", "out of range"},
		{`{"a":{"$date":"2012-12-24T24:00:00Z"}}`, 14, "a.$date", "out of range"},
		{`{"a":{"$date":"2012-12-24T12:15:30"}}`, 14, "a.$date", "time zone"},
		{`{"a":{"$date":"2012-12-24 12:15:30Z"}}`, 14, "a.$date", "want 'T'"},
		{`{"a":{"$date":"2012-12-24T12:15:30.Z"}}`, 14, "a.$date", "digits after '.'"},
		{`{"a":{"$date":"2012-12-24T12:15:30+1:00"}}`, 14, "a.$date", "offset"},
		{`{"a":{"$date":"2012-12-24T12:15:30Zjunk"}}`, 14, "a.$date", "after the time zone"},
		{`{"a":{"$date":"12-12-24T12:15:30Z"}}`, 14, "a.$date", "YYYY-MM-DD"},
		{`{"a":{"$date":{"$numberLong":"1"},"b":1}}`, 34, "a", `unexpected key "b" in a $date type wrapper`},
		{`{"a":{"$minKey":2}}`, 16, "a.$minKey", "must be the integer 1"},
		{`{"a":{"$maxKey":1.0}}`, 16, "a.$maxKey", "must be the integer 1"},
		{`{"a":{"$maxKey":"1"}}`, 16, "a.$maxKey", "must be the integer 1"},
		{`{"a":{"$undefined":false}}`, 19, "a.$undefined", "must be true"},
		{`{"a":{"$oid":"56e1fc72e0c917e9c4714161","$symbol":"x"}}`, 40, "a", "cannot appear in the same object"},
		{`{"a":{"$oid":"56e1fc72e0c917e9c4714161","$oid":"56e1fc72e0c917e9c4714161"}}`, 40, "a", "cannot appear in the same object"},
		{`{"a":{"b":1,"$oid":"56e1fc72e0c917e9c4714161"}}`, 6, "a", `unexpected key "b" in a $oid type wrapper`},
		{`{"a":{"$scope":{}}}`, 6, "a", "$scope without $code"},
		{`{"a":{"$scope":{},"$type":"x"}}`, 6, "a", "$scope without $code"},
		{`{"a":{"$code":"","$scope":1}}`, 17, "a", "$scope must be a document"},
		{`{"a":{"$code":"","$scope":{},"$scope":{}}}`, 29, "a", "$scope appears twice"},
		{`{"a":{"$symbol":"","$scope":{}}}`, 19, "a", "cannot appear in a $symbol type wrapper"},
		{`{"a":{"$code":"","$scope":{"b":{"$numberInt":"z"}}}}`, 45, "a.$scope.b.$numberInt", "32-bit integer"},
		// The inner objects parseInner reads: each key once, no other key,
		// none missing.
		{`{"a":{"$binary":{}}}`, 6, "a.$binary", `missing its "base64"`},
		{`{"a":{"$binary":{"base64":"AQ==" "subType":"00"}}}`, 33, "a.$binary", "want ',' or '}'"},
		{`{"a":{"$timestamp":{"t":1,"t":2}}}`, 26, "a.$timestamp", `key "t" appears twice`},
		{`{"a":{"$regularExpression":{"pattern":"a"}}}`, 6, "a.$regularExpression", `missing its "options"`},
		{`{"a":{"$regularExpression":{"options":"a"}}}`, 6, "a.$regularExpression", `missing its "pattern"`},
		{`{"a":{"$dbPointer":{"$ref":"a.b"}}}`, 6, "a.$dbPointer", `missing its "$id"`},
		{`{"a":{"$dbPointer":{"$ref":"a.b","$ref":"c"}}}`, 33, "a.$dbPointer", `key "$ref" appears twice`},
		{`{"a":{"$dbPointer":{"$ref":"a.b","$id":{"$oid":"0123"}}}}`, 47, "a.$dbPointer.$id.$oid", "24 hexadecimal digits"},
		{`{"a":{"$dbPointer":{"$ref":"a.b","$id":{}}}}`, 39, "a.$dbPointer.$id", `$id must be {"$oid"`},
		{`{"a":{"$dbPointer":{"$ref":"a.b","$id":{"x":1}}}}`, 40, "a.$dbPointer.$id", `unexpected key "x" in $dbPointer $id; want only "$oid"`},
		{`{"a":{"$dbPointer":{"$ref":"a.b","$id":5}}}`, 39, "a.$dbPointer.$id", "must be an object"},
		{`{"a":{"$date":{"$numberLong":"x"}}}`, 29, "a.$date.$numberLong", "64-bit integer string"},
		{`{"a":{"$date":{}}}`, 14, "a.$date", `$date object must be {"$numberLong"`},
		{`{"a":{"$date":{"$numberLong":"1","$numberLong":"2"}}}`, 33, "a.$date", `unexpected key "$numberLong" in $date`},
		{`{"a":{"$date":{"$numberLong":"1"`, 32, "a.$date", "unexpected end of input"},
		// Depth: the top-level document is depth 1 and MaxDepth the deepest.
		// The top-level object plus MaxDepth nested ones: the innermost is
		// one too deep, and is reported where it opens.
		{deep(MaxDepth, `{"b":`, `}`, `1`), 5 + 5*(MaxDepth-1), "a" + strings.Repeat(".b", MaxDepth-1), "maximum depth"},
		{deep(MaxDepth, `[`, `]`, `1`), 5 + MaxDepth - 1, "a" + strings.Repeat(".0", MaxDepth-1), "maximum depth"},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			out, err := AppendParseExtJSON([]byte("pre"), []byte(tt.in))
			if string(out) != "pre" {
				t.Errorf("dst changed on error: %q", out)
			}
			var e *ExtJSONError
			if !errors.As(err, &e) {
				t.Fatalf("ParseExtJSON(%s) error = %v (%T), want *ExtJSONError", tt.in, err, err)
			}
			if e.Offset != tt.off || e.Path != tt.path || !strings.Contains(e.Reason, tt.reason) {
				t.Fatalf("ParseExtJSON(%s):\n got offset %d path %q reason %q\nwant offset %d path %q reason containing %q",
					tt.in, e.Offset, e.Path, e.Reason, tt.off, tt.path, tt.reason)
			}
			if r, err := ParseExtJSON([]byte(tt.in)); r != nil || err == nil {
				t.Fatalf("ParseExtJSON returned %X, %v", []byte(r), err)
			}
		})
	}
}

func TestExtJSONErrorMessage(t *testing.T) {
	_, err := ParseExtJSON([]byte(`{"a":{"b":{"$oid":"zz"}}}`))
	const want = `bson: invalid Extended JSON at byte 18 (field "a.b.$oid"): $oid must be 24 hexadecimal digits, found "zz"`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant %s", err, want)
	}
	_, err = ParseExtJSON([]byte(`[`))
	if err == nil || err.Error() != `bson: invalid Extended JSON at byte 0: the top-level value must be a JSON object, found an array` {
		t.Fatalf("error = %v", err)
	}
}

func TestExtJSONDepth(t *testing.T) {
	nest := func(n int) string {
		return strings.Repeat(`{"a":`, n-1) + `{"v":{"$numberLong":"1"}}` + strings.Repeat(`}`, n-1)
	}
	// MaxDepth documents deep, with a wrapper in the deepest: fine.
	doc, err := ParseExtJSON([]byte(nest(MaxDepth)))
	if err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	if err := doc.Validate(); err != nil {
		t.Fatal(err)
	}
	// The generator writes it back, and the text parses to the same bytes.
	out, err := AppendExtJSON(nil, doc, true)
	if err != nil {
		t.Fatalf("AppendExtJSON at depth %d: %v", MaxDepth, err)
	}
	if again, err := ParseExtJSON(out); err != nil || !bytes.Equal(again, doc) {
		t.Fatalf("round trip at depth %d: %v", MaxDepth, err)
	}
	if _, err := ParseExtJSON([]byte(nest(MaxDepth + 1))); err == nil || !strings.Contains(err.Error(), "maximum depth") {
		t.Fatalf("depth %d: error %v, want maximum depth", MaxDepth+1, err)
	}
	// Code-with-scope documents count as nesting too.
	scopes := strings.Repeat(`{"a":{"$code":"","$scope":`, MaxDepth-1) + `{}` + strings.Repeat(`}}`, MaxDepth-1)
	doc, err = ParseExtJSON([]byte(scopes))
	if err != nil {
		t.Fatalf("scopes %d deep: %v", MaxDepth, err)
	}
	if err := doc.Validate(); err != nil {
		t.Fatal(err)
	}
	scopes = strings.Repeat(`{"a":{"$code":"","$scope":`, MaxDepth) + `{}` + strings.Repeat(`}}`, MaxDepth)
	if _, err := ParseExtJSON([]byte(scopes)); err == nil {
		t.Fatalf("scopes %d deep parsed", MaxDepth+1)
	}
	// A huge nesting fails fast instead of exhausting the stack.
	if _, err := ParseExtJSON([]byte(`{"a":` + strings.Repeat(`[`, 1<<20))); err == nil {
		t.Fatal("deep arrays parsed")
	}
	if _, err := ParseExtJSON([]byte(strings.Repeat(`{"a":`, 1<<20))); err == nil {
		t.Fatal("deep objects parsed")
	}
}

func TestExtJSONWrite(t *testing.T) {
	oid := ejOID("56e1fc72e0c917e9c4714161")
	tests := []struct {
		name             string
		doc              []byte
		canonical, relax string
	}{
		{"empty", ejDoc(func(b []byte) []byte { return b }), `{}`, `{}`},
		{"doubles", ejDoc(func(b []byte) []byte {
			for i, f := range []float64{1, 0, math.Copysign(0, -1), 42.42, 1e15, 1e16, 1e-4, 1e-5, 1.5e-5, 123456.789,
				1.7976931348623157e308, 5e-324, -1.2345678921232e18, 100} {
				b = AppendDoubleElement(b, strconv.Itoa(i), f)
			}
			b = AppendDoubleElement(b, "nan", math.NaN())
			b = AppendDoubleElement(b, "nanp", math.Float64frombits(0xFFF8000000000012))
			b = AppendDoubleElement(b, "inf", math.Inf(1))
			return AppendDoubleElement(b, "ninf", math.Inf(-1))
		}),
			`{"0":{"$numberDouble":"1.0"},"1":{"$numberDouble":"0.0"},"2":{"$numberDouble":"-0.0"},"3":{"$numberDouble":"42.42"},` +
				`"4":{"$numberDouble":"1000000000000000.0"},"5":{"$numberDouble":"1.0E+16"},"6":{"$numberDouble":"0.0001"},"7":{"$numberDouble":"1.0E-5"},` +
				`"8":{"$numberDouble":"1.5E-5"},"9":{"$numberDouble":"123456.789"},"10":{"$numberDouble":"1.7976931348623157E+308"},` +
				`"11":{"$numberDouble":"5.0E-324"},"12":{"$numberDouble":"-1.2345678921232E+18"},"13":{"$numberDouble":"100.0"},` +
				`"nan":{"$numberDouble":"NaN"},"nanp":{"$numberDouble":"NaN"},"inf":{"$numberDouble":"Infinity"},"ninf":{"$numberDouble":"-Infinity"}}`,
			`{"0":1.0,"1":0.0,"2":-0.0,"3":42.42,"4":1000000000000000.0,"5":1.0E+16,"6":0.0001,"7":1.0E-5,"8":1.5E-5,"9":123456.789,` +
				`"10":1.7976931348623157E+308,"11":5.0E-324,"12":-1.2345678921232E+18,"13":100.0,` +
				`"nan":{"$numberDouble":"NaN"},"nanp":{"$numberDouble":"NaN"},"inf":{"$numberDouble":"Infinity"},"ninf":{"$numberDouble":"-Infinity"}}`},
		{"integers", ejDoc(func(b []byte) []byte {
			b = AppendInt32Element(b, "i", math.MinInt32)
			return AppendInt64Element(b, "l", math.MaxInt64)
		}), `{"i":{"$numberInt":"-2147483648"},"l":{"$numberLong":"9223372036854775807"}}`, `{"i":-2147483648,"l":9223372036854775807}`},
		{"dates", ejDoc(func(b []byte) []byte {
			b = AppendDateTimeElement(b, "epoch", 0)
			b = AppendDateTimeElement(b, "ms", 1356351330001)
			b = AppendDateTimeElement(b, "before", -1)
			b = AppendDateTimeElement(b, "last", 253402300799999)
			b = AppendDateTimeElement(b, "y10k", 253402300800000)
			b = AppendDateTimeElement(b, "leap", 951782400100)
			return AppendDateTimeElement(b, "min", math.MinInt64)
		}),
			`{"epoch":{"$date":{"$numberLong":"0"}},"ms":{"$date":{"$numberLong":"1356351330001"}},"before":{"$date":{"$numberLong":"-1"}},` +
				`"last":{"$date":{"$numberLong":"253402300799999"}},"y10k":{"$date":{"$numberLong":"253402300800000"}},` +
				`"leap":{"$date":{"$numberLong":"951782400100"}},"min":{"$date":{"$numberLong":"-9223372036854775808"}}}`,
			`{"epoch":{"$date":"1970-01-01T00:00:00Z"},"ms":{"$date":"2012-12-24T12:15:30.001Z"},"before":{"$date":{"$numberLong":"-1"}},` +
				`"last":{"$date":"9999-12-31T23:59:59.999Z"},"y10k":{"$date":{"$numberLong":"253402300800000"}},` +
				`"leap":{"$date":"2000-02-29T00:00:00.100Z"},"min":{"$date":{"$numberLong":"-9223372036854775808"}}}`},
		{"strings need escapes, UTF-8 passes through", ejDoc(func(b []byte) []byte {
			return AppendStringElement(b, "k\"\\\x01", "\"\\\n\r\t\b\f\x00\x1f\x7f é😀</>&")
		}), `{"k\"\\\u0001":"\"\\\n\r\t\b\f\u0000\u001f` + "\x7f é😀</>&" + `"}`, ""},
		{"other types", ejDoc(func(b []byte) []byte {
			b = AppendObjectIDElement(b, "o", oid)
			b = AppendBinaryElement(b, "b", 0x80, []byte{1, 2, 3})
			b = AppendBinaryElement(b, "old", 2, []byte{0xff, 0xff})
			b = AppendBooleanElement(b, "t", true)
			b = AppendNullElement(b, "n")
			b = AppendRegexElement(b, "r", `a"b`, "")
			b = AppendDBPointerElement(b, "p", "db.c", oid)
			b = AppendJavaScriptElement(b, "c", "f()")
			b = AppendSymbolElement(b, "s", "sym")
			b = AppendCodeWithScopeElement(b, "cs", "g", ejDoc(func(b []byte) []byte { return AppendInt32Element(b, "x", 1) }))
			b = AppendTimestampElement(b, "ts", math.MaxUint32, 1)
			b = AppendDecimal128Element(b, "d", ejDec("-1.50E+3"))
			b = AppendUndefinedElement(b, "u")
			b = AppendMinKeyElement(b, "lo")
			return AppendMaxKeyElement(b, "hi")
		}),
			`{"o":{"$oid":"56e1fc72e0c917e9c4714161"},"b":{"$binary":{"base64":"AQID","subType":"80"}},"old":{"$binary":{"base64":"//8=","subType":"02"}},` +
				`"t":true,"n":null,"r":{"$regularExpression":{"pattern":"a\"b","options":""}},` +
				`"p":{"$dbPointer":{"$ref":"db.c","$id":{"$oid":"56e1fc72e0c917e9c4714161"}}},"c":{"$code":"f()"},"s":{"$symbol":"sym"},` +
				`"cs":{"$code":"g","$scope":{"x":{"$numberInt":"1"}}},"ts":{"$timestamp":{"t":4294967295,"i":1}},"d":{"$numberDecimal":"-1.50E+3"},` +
				`"u":{"$undefined":true},"lo":{"$minKey":1},"hi":{"$maxKey":1}}`,
			`{"o":{"$oid":"56e1fc72e0c917e9c4714161"},"b":{"$binary":{"base64":"AQID","subType":"80"}},"old":{"$binary":{"base64":"//8=","subType":"02"}},` +
				`"t":true,"n":null,"r":{"$regularExpression":{"pattern":"a\"b","options":""}},` +
				`"p":{"$dbPointer":{"$ref":"db.c","$id":{"$oid":"56e1fc72e0c917e9c4714161"}}},"c":{"$code":"f()"},"s":{"$symbol":"sym"},` +
				`"cs":{"$code":"g","$scope":{"x":1}},"ts":{"$timestamp":{"t":4294967295,"i":1}},"d":{"$numberDecimal":"-1.50E+3"},` +
				`"u":{"$undefined":true},"lo":{"$minKey":1},"hi":{"$maxKey":1}}`},
		{"degenerate BSON is normalised: array keys, unsorted regex options", ejDoc(func(b []byte) []byte {
			s, b := AppendArrayElementStart(b, "a")
			b = AppendInt32Element(b, "x", 1)
			b = AppendInt32Element(b, "x", 2)
			b, _ = AppendDocumentEnd(b, s)
			// AppendRegex sorts, so write unsorted options by hand.
			b = AppendHeader(b, TypeRegex, "r")
			b = append(b, "p\x00xsmi\x00"...)
			return append(b, byte(TypeRegex), 'q', 0, 'p', 0, 'z', 'y', 'x', 'w', 'v', 'u', 't', 's', 'r', 'q', 'o', 'n', 'm', 'l', 'k', 'j', 'i', 'h', 'g', 0)
		}),
			`{"a":[{"$numberInt":"1"},{"$numberInt":"2"}],"r":{"$regularExpression":{"pattern":"p","options":"imsx"}},"q":{"$regularExpression":{"pattern":"p","options":"ghijklmnoqrstuvwxyz"}}}`,
			`{"a":[1,2],"r":{"$regularExpression":{"pattern":"p","options":"imsx"}},"q":{"$regularExpression":{"pattern":"p","options":"ghijklmnoqrstuvwxyz"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			relax := tt.relax
			if relax == "" {
				relax = tt.canonical
			}
			for _, c := range []struct {
				canonical bool
				want      string
			}{{true, tt.canonical}, {false, relax}} {
				got, err := AppendExtJSON([]byte("pre"), tt.doc, c.canonical)
				if err != nil {
					t.Fatalf("AppendExtJSON(canonical=%v): %v", c.canonical, err)
				}
				if string(got) != "pre"+c.want {
					t.Fatalf("AppendExtJSON(canonical=%v)\n got %s\nwant pre%s", c.canonical, got, c.want)
				}
			}
			if got := Raw(tt.doc).String(); got != relax {
				t.Fatalf("Raw.String()\n got %s\nwant %s", got, relax)
			}
		})
	}
}

func TestExtJSONWriteErrors(t *testing.T) {
	valid := ejDoc(func(b []byte) []byte { return AppendStringElement(b, "a", "x") })
	tests := []struct {
		name   string
		doc    []byte
		off    int
		path   string
		reason string
	}{
		{"nil", nil, 0, "", "truncated"},
		{"trailing bytes", append(append([]byte{}, valid...), 0), len(valid), "", "less than the"},
		{"string not UTF-8", ejDoc(func(b []byte) []byte {
			return AppendDocumentElement(b, "a", ejDoc(func(b []byte) []byte { return AppendStringElement(b, "b", "x\xff") }))
		}), 4 + 3 + 4 + 3 + 4 + 1, "a.b", "string is not valid UTF-8"},
		{"key not UTF-8", ejDoc(func(b []byte) []byte { return AppendNullElement(b, "k\xff") }), 6, "", "key is not valid UTF-8"},
		{"boolean 2", ejDoc(func(b []byte) []byte { return append(AppendHeader(b, TypeBoolean, "b"), 2) }), 7, "b", "boolean byte is 0x2"},
		{"code with scope length mismatch", ejDoc(func(b []byte) []byte {
			hdr := len(b)
			b = AppendCodeWithScopeElement(b, "c", "x", ejDoc(func(b []byte) []byte { return b }))
			b[hdr+3]++ // one byte longer than code and scope; the outer framing still holds
			return append(b, 0)
		}), 7, "c", "does not match its contents"},
		{"binary subtype 2 inner length", ejDoc(func(b []byte) []byte {
			b = AppendBinaryElement(b, "x", 2, []byte{1, 2})
			b[len(b)-6]++
			return b
		}), 12, "x", "inner length"},
		{"regex not UTF-8", ejDoc(func(b []byte) []byte { return AppendRegexElement(b, "r", "\xff", "") }), 7, "r", "regex pattern"},
		{"symbol not UTF-8", ejDoc(func(b []byte) []byte { return AppendSymbolElement(b, "s", "\xc3") }), 11, "s", "symbol is not valid UTF-8"},
		{"dbpointer not UTF-8", ejDoc(func(b []byte) []byte { return AppendDBPointerElement(b, "p", "\xc3", ObjectID{}) }), 11, "p", "namespace"},
		{"scope not UTF-8", ejDoc(func(b []byte) []byte {
			return AppendCodeWithScopeElement(b, "c", "x", ejDoc(func(b []byte) []byte { return AppendStringElement(b, "k", "\xff") }))
		}), 4 + 3 + 4 + 6 + 4 + 3 + 4, "c.$scope.k", "string is not valid UTF-8"},
		{"unknown type", ejDoc(func(b []byte) []byte { return AppendHeader(b, Type(0x20), "z") }), 4, "z", "unknown element type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, canonical := range []bool{true, false} {
				out, err := AppendExtJSON([]byte("pre"), tt.doc, canonical)
				if string(out) != "pre" {
					t.Errorf("dst changed on error: %q", out)
				}
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("AppendExtJSON(%X) error = %v, want *DecodeError", tt.doc, err)
				}
				if tt.reason == "" {
					continue // only the failure matters
				}
				if de.Offset != tt.off || de.Path != tt.path || !strings.Contains(de.Reason, tt.reason) {
					t.Fatalf("got offset %d path %q reason %q\nwant offset %d path %q reason containing %q",
						de.Offset, de.Path, de.Reason, tt.off, tt.path, tt.reason)
				}
				if verr := Raw(tt.doc).Validate(); verr == nil {
					t.Fatalf("Validate accepts what AppendExtJSON rejects")
				}
			}
			if s := Raw(tt.doc).String(); !strings.HasPrefix(s, "<invalid BSON: ") {
				t.Fatalf("Raw.String() = %q", s)
			}
		})
	}
	// Too deep for the generator.
	deep := ejDoc(func(b []byte) []byte { return b })
	for i := 1; i < MaxDepth+1; i++ {
		d := deep
		deep = ejDoc(func(b []byte) []byte { return AppendDocumentElement(b, "a", d) })
	}
	if _, err := AppendExtJSON(nil, deep, true); err == nil || !strings.Contains(err.Error(), "maximum depth") {
		t.Fatalf("depth %d: %v", MaxDepth+1, err)
	}
}

func TestExtJSONStringMethods(t *testing.T) {
	doc := ejDoc(func(b []byte) []byte {
		b = AppendInt64Element(b, "n", 7)
		b = AppendDoubleElement(b, "f", 2)
		return AppendDocumentElement(b, "sub", ejDoc(func(b []byte) []byte { return AppendStringElement(b, "k\n", "v") }))
	})
	r := Raw(doc)
	if got, want := r.String(), `{"n":7,"f":2.0,"sub":{"k\n":"v"}}`; got != want {
		t.Errorf("Raw.String() = %s, want %s", got, want)
	}
	if got, want := r.Lookup("sub").String(), `{"k\n":"v"}`; got != want {
		t.Errorf("RawValue.String() = %s, want %s", got, want)
	}
	if got, want := r.Lookup("n").String(), `7`; got != want {
		t.Errorf("RawValue.String() = %s, want %s", got, want)
	}
	e, err := r.Index(2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.String(), `"sub":{"k\n":"v"}`; got != want {
		t.Errorf("RawElement.String() = %s, want %s", got, want)
	}
	for _, bad := range []fmt.Stringer{Raw(nil), RawValue{}, RawValue{Type: TypeInt32, Value: []byte{1}}, RawElement(nil),
		RawElement{byte(TypeInt32), 'k', 0, 1, 0, 0, 0, 9}, RawElement{byte(TypeString), 'k', 0xff, 0, 2, 0, 0, 0, 'v', 0}} {
		if s := bad.String(); !strings.HasPrefix(s, "<invalid BSON: ") {
			t.Errorf("%T(%X).String() = %q", bad, bad, s)
		}
	}
	// No prefix of a document, and no byte flip, makes the methods panic.
	for i := 0; i <= len(doc); i++ {
		_ = Raw(doc[:i]).String()
		_ = RawElement(doc[min(i, 4):i]).String()
		_ = RawValue{Type: TypeEmbeddedDocument, Value: doc[:i]}.String()
	}
	for i := range doc {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			m := append([]byte(nil), doc...)
			m[i] ^= x
			_ = Raw(m).String()
			_ = RawElement(m[4:]).String()
		}
	}
}

// TestExtJSONDates checks the date parser and the relaxed writer against
// the time package over the whole range.
func TestExtJSONDates(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const lo, hi = -62135596800000, 253402300799999 // 0001-01-01 .. 9999-12-31
	for i := 0; i < 20000; i++ {
		ms := lo + rng.Int63n(hi-lo+1)
		if i < 4 {
			ms = []int64{lo, hi, 0, -1}[i]
		}
		tm := time.UnixMilli(ms).UTC()
		for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000-07:00"} {
			zone := time.FixedZone("", int(rng.Int63n(24*60)-12*60)*60)
			text := tm.In(zone).Format(layout)
			got, err := ParseExtJSON([]byte(`{"d":{"$date":"` + text + `"}}`))
			if err != nil {
				// Offsets can push a year-1 or year-9999 date out of four digits.
				if y := tm.In(zone).Year(); y >= 0 && y <= 9999 {
					t.Fatalf("%s: %v", text, err)
				}
				continue
			}
			if v := got.Lookup("d").DateTime(); v != ms {
				t.Fatalf("%s parsed to %d, want %d", text, v, ms)
			}
		}
		out, err := AppendExtJSON(nil, ejDoc(func(b []byte) []byte { return AppendDateTimeElement(b, "d", ms) }), false)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"d":{"$date":{"$numberLong":"` + strconv.FormatInt(ms, 10) + `"}}}`
		if ms >= 0 {
			layout := "2006-01-02T15:04:05.000Z"
			if ms%1000 == 0 {
				layout = "2006-01-02T15:04:05Z"
			}
			want = `{"d":{"$date":"` + tm.Format(layout) + `"}}`
		}
		if string(out) != want {
			t.Fatalf("relaxed %d = %s, want %s", ms, out, want)
		}
	}
}

// TestExtJSONNumbers checks that every double survives both formats and
// that the number parser agrees with strconv.
func TestExtJSONNumbers(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 50000; i++ {
		f := math.Float64frombits(rng.Uint64())
		switch i % 4 {
		case 1:
			f = float64(rng.Int63n(1<<53)) / math.Pow(10, float64(rng.Intn(30)))
		case 2:
			f = float64(int64(rng.Uint64())) // integral values
		}
		if math.IsNaN(f) {
			continue
		}
		doc := ejDoc(func(b []byte) []byte { return AppendDoubleElement(b, "d", f) })
		for _, canonical := range []bool{true, false} {
			out, err := AppendExtJSON(nil, doc, canonical)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseExtJSON(out)
			if err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if !bytes.Equal(back, doc) {
				t.Fatalf("%v (%#x) -> %s -> %v", f, math.Float64bits(f), out, back.Lookup("d"))
			}
		}
	}
	// Integers of every length take the smallest type that holds them.
	for i := 0; i < 50000; i++ {
		v := int64(rng.Uint64()) >> rng.Intn(64)
		text := strconv.FormatInt(v, 10)
		if i%7 == 0 {
			text = "-" + strconv.FormatUint(uint64(v)<<1|1, 10) // past int64 at times
		}
		doc, err := ParseExtJSON([]byte(`{"n":` + text + `}`))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		n := doc.Lookup("n")
		if want, err := strconv.ParseInt(text, 10, 64); err != nil {
			f, _ := strconv.ParseFloat(text, 64)
			if n.Type != TypeDouble || n.Double() != f {
				t.Fatalf("%s parsed to %v %v, want double %v", text, n.Type, n, f)
			}
		} else if got, ok := n.AsInt64OK(); !ok || got != want || n.Type == TypeDouble || (n.Type == TypeInt32) != (want == int64(int32(want))) {
			t.Fatalf("%s parsed to %v %v", text, n.Type, n)
		}
	}
	// The fast path and strconv agree on decimal strings of all shapes.
	for i := 0; i < 100000; i++ {
		var sb strings.Builder
		if rng.Intn(2) == 0 {
			sb.WriteByte('-')
		}
		nd := 1 + rng.Intn(22)
		for j := 0; j < nd; j++ {
			c := byte('0' + rng.Intn(10))
			if j == 0 && nd > 1 && c == '0' {
				c = '1'
			}
			sb.WriteByte(c)
		}
		if rng.Intn(2) == 0 {
			sb.WriteByte('.')
			for j := 1 + rng.Intn(20); j > 0; j-- {
				sb.WriteByte(byte('0' + rng.Intn(10)))
			}
		}
		if rng.Intn(2) == 0 {
			sb.WriteString([]string{"e", "E", "e+", "e-", "E-"}[rng.Intn(5)])
			sb.WriteString(strconv.Itoa(rng.Intn(40)))
		}
		s := sb.String()
		want, err := strconv.ParseFloat(s, 64)
		got, ok := ejParseFloat([]byte(s))
		if (err == nil) != ok || (ok && math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("ejParseFloat(%s) = %v, %v; strconv: %v, %v", s, got, ok, want, err)
		}
	}
}

// TestExtJSONAllocs pins the hot paths: parsing into and writing into a
// buffer with room allocate nothing.
func TestExtJSONAllocs(t *testing.T) {
	in := []byte(`{"_id":{"$oid":"56e1fc72e0c917e9c4714161"},"name":"caf\u00e9 \"x\"","n":42,"big":12345678901,"f":3.25,"ok":true,` +
		`"when":{"$date":"2012-12-24T12:15:30.501Z"},"tags":["a","b",{"$numberLong":"7"}],"sub":{"x":null,"y":{"$binary":{"base64":"AQID","subType":"00"}}},` +
		`"re":{"$regularExpression":{"pattern":"^a","options":"mi"}},"ts":{"$timestamp":{"t":1,"i":2}}}`)
	buf := make([]byte, 0, 4096)
	doc, err := AppendParseExtJSON(buf, in)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = AppendParseExtJSON(buf, in) }); n != 0 {
		t.Errorf("AppendParseExtJSON allocates %v times per run", n)
	}
	out := make([]byte, 0, 4096)
	for _, canonical := range []bool{true, false} {
		if n := testing.AllocsPerRun(100, func() { _, _ = AppendExtJSON(out, doc, canonical) }); n != 0 {
			t.Errorf("AppendExtJSON(canonical=%v) allocates %v times per run", canonical, n)
		}
	}
}

// ejSpecExample extracts the JSON text of the specification's canonical
// example (the second code block after its heading), read at run time.
func ejSpecExample(t *testing.T) string {
	t.Helper()
	md, err := os.ReadFile(spectest.File(t, "extended-json", "extended-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	i := strings.Index(s, "### Canonical Extended JSON Example")
	if i < 0 {
		t.Fatal("extended-json.md has no canonical example heading")
	}
	s = s[i:]
	for n := 0; n < 2; n++ {
		j := strings.Index(s, "```javascript")
		if j < 0 {
			t.Fatal("extended-json.md: canonical example code block not found")
		}
		s = s[j+len("```javascript"):]
	}
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatal("extended-json.md: unterminated code block")
	}
	return s[:end]
}

// TestExtJSONSpecExamples covers the specification's examples and rules
// that the corpus leaves implicit (its test plan defers to the corpus).
func TestExtJSONSpecExamples(t *testing.T) {
	t.Run("canonical example", func(t *testing.T) {
		text := ejSpecExample(t)
		uuid := []byte{0xc8, 0xed, 0xab, 0xc3, 0xf7, 0x38, 0x4c, 0xa3, 0xb6, 0x8d, 0xab, 0x92, 0xa9, 0x14, 0x78, 0xa3}
		empty := ejDoc(func(b []byte) []byte { return b })
		want := ejDoc(func(b []byte) []byte {
			b = AppendObjectIDElement(b, "_id", ejOID("57e193d7a9cc81b4027498b5"))
			b = AppendStringElement(b, "String", "string")
			b = AppendInt32Element(b, "Int32", 42)
			b = AppendInt64Element(b, "Int64", 42)
			b = AppendDoubleElement(b, "Double", 42.42)
			b = AppendDecimal128Element(b, "Decimal", ejDec("1234.5"))
			b = AppendBinaryElement(b, "Binary", SubtypeUUID, uuid)
			b = AppendBinaryElement(b, "BinaryUserDefined", 0x80, []byte("123"))
			b = AppendJavaScriptElement(b, "Code", "function() {}")
			b = AppendCodeWithScopeElement(b, "CodeWithScope", "function() {}", empty)
			b = AppendDocumentElement(b, "Subdocument", ejDoc(func(b []byte) []byte { return AppendStringElement(b, "foo", "bar") }))
			s, b := AppendArrayElementStart(b, "Array")
			for i := 0; i < 5; i++ {
				b = AppendInt32Element(b, ArrayKey(i), int32(i+1))
			}
			b, _ = AppendDocumentEnd(b, s)
			b = AppendTimestampElement(b, "Timestamp", 42, 1)
			b = AppendRegexElement(b, "RegularExpression", "foo*", "xi")
			b = AppendDateTimeElement(b, "DatetimeEpoch", 0)
			b = AppendDateTimeElement(b, "DatetimePositive", 253402300799999)
			b = AppendDateTimeElement(b, "DatetimeNegative", -62135596800000)
			b = AppendBooleanElement(b, "True", true)
			b = AppendBooleanElement(b, "False", false)
			b = AppendDocumentElement(b, "DBRef", ejDoc(func(b []byte) []byte {
				b = AppendStringElement(b, "$ref", "collection")
				b = AppendObjectIDElement(b, "$id", ejOID("57e193d7a9cc81b4027498b1"))
				return AppendStringElement(b, "$db", "database")
			}))
			b = AppendDocumentElement(b, "DBRefNoDB", ejDoc(func(b []byte) []byte {
				b = AppendStringElement(b, "$ref", "collection")
				return AppendObjectIDElement(b, "$id", ejOID("57fd71e96e32ab4225b723fb"))
			}))
			b = AppendMinKeyElement(b, "Minkey")
			b = AppendMaxKeyElement(b, "Maxkey")
			return AppendNullElement(b, "Null")
		})
		got, err := ParseExtJSON([]byte(text))
		if err != nil {
			t.Fatalf("parsing the example: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("example parsed to\n%s\nwant\n%s", got, Raw(want))
		}
		out, err := AppendExtJSON(nil, want, true)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := ejNormalizeJSON(t, string(out)), ejNormalizeJSON(t, text); g != w {
			t.Fatalf("canonical output\n got %s\nwant %s", g, w)
		}
		// The relaxed example differs only in the keys it lists; the
		// positive date is within 1970..9999, so it becomes a string too.
		relaxed, err := AppendExtJSON(nil, want, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, frag := range []string{`"Int32":42,`, `"Int64":42,`, `"Double":42.42,`, `"DatetimeEpoch":{"$date":"1970-01-01T00:00:00Z"}`,
			`"DatetimePositive":{"$date":"9999-12-31T23:59:59.999Z"}`, `"DatetimeNegative":{"$date":{"$numberLong":"-62135596800000"}}`,
			`"Decimal":{"$numberDecimal":"1234.5"}`, `"Array":[1,2,3,4,5]`} {
			if !strings.Contains(string(relaxed), frag) {
				t.Errorf("relaxed output lacks %s:\n%s", frag, relaxed)
			}
		}
		// The relaxed example writes the epoch with ".000"; it parses the same.
		epoch, err := ParseExtJSON([]byte(`{"DatetimeEpoch":{"$date":"1970-01-01T00:00:00.000Z"}}`))
		if err != nil || epoch.Lookup("DatetimeEpoch").DateTime() != 0 {
			t.Fatalf("relaxed epoch: %v", err)
		}
	})
	// Parsers must accept either format; a relaxed rendering of the same
	// document parses to BSON that differs only in the types relaxed
	// output does not preserve.
	t.Run("key order is not significant", func(t *testing.T) {
		a, err1 := ParseExtJSON([]byte(`{"c":{"$code":"function(){}","$scope":{}}}`))
		b, err2 := ParseExtJSON([]byte(`{"c":{"$scope":{},"$code":"function(){}"}}`))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("%v %v %X %X", err1, err2, []byte(a), []byte(b))
		}
	})
	t.Run("$regex and $type query operators parse", func(t *testing.T) {
		for _, q := range []string{
			`{"q":{"$regex":{"$regularExpression":{"pattern":"foo*","options":""}},"$options":"ix"}}`,
			`{"q":{"$regex":{"$regularExpression":{"pattern":"foo*","options":""}}}}`,
			`{"zipCode":{"$type":2}}`,
			`{"zipCode":{"$type":"string"}}`,
		} {
			doc, err := ParseExtJSON([]byte(q))
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			first, _ := doc.Index(0)
			if first.Value().Type != TypeEmbeddedDocument {
				t.Fatalf("%s: the operator document became %v", q, first.Value().Type)
			}
		}
	})
	t.Run("$uuid is binary subtype 4", func(t *testing.T) {
		a, err1 := ParseExtJSON([]byte(`{"Binary":{"$uuid":"c8edabc3-f738-4ca3-b68d-ab92a91478a3"}}`))
		b, err2 := ParseExtJSON([]byte(`{"Binary":{"$binary":{"base64":"yO2rw/c4TKO2jauSqRR4ow==","subType":"04"}}}`))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("%v %v %X %X", err1, err2, []byte(a), []byte(b))
		}
	})
	t.Run("unknown $ keys and partial DBRefs are left as-is", func(t *testing.T) {
		for _, s := range []string{`{"a":{"$ref":"c"}}`, `{"a":{"$ref":1,"$id":2}}`, `{"a":{"$x":{"$y":1}}}`, `{"a":{"$":1}}`} {
			doc, err := ParseExtJSON([]byte(s))
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if got := doc.String(); ejNormalizeJSON(t, got) != ejNormalizeJSON(t, s) {
				t.Fatalf("%s came back as %s", s, got)
			}
		}
	})
	t.Run("relaxed output defaults: String is relaxed", func(t *testing.T) {
		doc := ejDoc(func(b []byte) []byte { return AppendInt64Element(b, "x", 1) })
		if got := Raw(doc).String(); got != `{"x":1}` {
			t.Fatalf("Raw.String() = %s", got)
		}
	})
}

func BenchmarkParseExtJSON(b *testing.B) {
	in := []byte(`{"_id":{"$oid":"56e1fc72e0c917e9c4714161"},"name":"Ada Lovelace","n":42,"big":12345678901,"f":3.25,"ok":true,` +
		`"when":{"$date":"2012-12-24T12:15:30.501Z"},"tags":["a","b","c","d"],"sub":{"x":null,"y":{"$binary":{"base64":"AQIDBAUGBwg=","subType":"00"}}},` +
		`"nums":[1,2,3,4,5,6,7,8,9,10,1.5,2.5,-3.75],"text":"the quick brown fox jumps over the lazy dog"}`)
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AppendParseExtJSON(buf, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendExtJSON(b *testing.B) {
	doc, err := ParseExtJSON([]byte(`{"_id":{"$oid":"56e1fc72e0c917e9c4714161"},"name":"Ada Lovelace","n":42,"big":12345678901,"f":3.25,"ok":true,` +
		`"when":{"$date":"2012-12-24T12:15:30.501Z"},"tags":["a","b","c","d"],"sub":{"x":null,"y":{"$binary":{"base64":"AQIDBAUGBwg=","subType":"00"}}},` +
		`"nums":[1,2,3,4,5,6,7,8,9,10,1.5,2.5,-3.75],"text":"the quick brown fox jumps over the lazy dog"}`))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	for _, canonical := range []bool{true, false} {
		b.Run(map[bool]string{true: "canonical", false: "relaxed"}[canonical], func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := AppendExtJSON(buf, doc, canonical); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleParseExtJSON() {
	doc, err := ParseExtJSON([]byte(`{"name": "Ada", "n": 42, "big": 12345678901, "born": {"$date": "1815-12-10T00:00:00Z"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Plain JSON integers take the smallest integer type that holds them.
	fmt.Println(doc.Lookup("n").Type, doc.Lookup("big").Type)
	fmt.Println(doc.Lookup("born").DateTime())
	// Output:
	// 32-bit integer 64-bit integer
	// -4861728000000
}

func ExampleAppendParseExtJSON() {
	// Reuse one buffer for many documents.
	buf := make([]byte, 0, 256)
	for _, line := range []string{`{"a": 1}`, `{"a": {"$numberLong": "2"}}`, `{"a": {"$numberLong": 3}}`} {
		doc, err := AppendParseExtJSON(buf[:0], []byte(line))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(Raw(doc).Lookup("a").Type)
	}
	// Output:
	// 32-bit integer
	// 64-bit integer
	// bson: invalid Extended JSON at byte 22 (field "a.$numberLong"): $numberLong must be a string, found a number
}

func ExampleAppendExtJSON() {
	start, doc := AppendDocumentStart(nil)
	doc = AppendInt32Element(doc, "n", 42)
	doc = AppendDoubleElement(doc, "f", 1)
	doc = AppendDateTimeElement(doc, "when", 1356351330501)
	doc, _ = AppendDocumentEnd(doc, start)

	canonical, _ := AppendExtJSON(nil, doc, true)
	relaxed, _ := AppendExtJSON(nil, doc, false)
	fmt.Println(string(canonical))
	fmt.Println(string(relaxed))
	// Output:
	// {"n":{"$numberInt":"42"},"f":{"$numberDouble":"1.0"},"when":{"$date":{"$numberLong":"1356351330501"}}}
	// {"n":42,"f":1.0,"when":{"$date":"2012-12-24T12:15:30.501Z"}}
}

func ExampleRaw_String() {
	doc, _ := ParseExtJSON([]byte(`{"_id": {"$oid": "56e1fc72e0c917e9c4714161"}, "tags": ["a", "b"]}`))
	fmt.Println(doc)
	fmt.Println(doc.Lookup("tags"))
	fmt.Println(Raw{0x05, 0, 0})
	// Output:
	// {"_id":{"$oid":"56e1fc72e0c917e9c4714161"},"tags":["a","b"]}
	// ["a","b"]
	// <invalid BSON: bson: invalid BSON at byte 0: document length prefix truncated: 3 bytes left, need 4>
}

func ExampleExtJSONError() {
	_, err := ParseExtJSON([]byte(`{"a": {"b": {"$timestamp": {"t": -1, "i": 0}}}}`))
	var e *ExtJSONError
	if errors.As(err, &e) {
		fmt.Println(e.Offset, e.Path)
		fmt.Println(e.Reason)
	}
	// Output:
	// 33 a.b.$timestamp.t
	// t must be an integer from 0 to 4294967295, found "-1"
}
