package agg

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// exprDoc is the document every expression case is evaluated against.
const exprDoc = `{"_id": 1, "i": 7, "n": -3, "l": {"$numberLong": "10"}, "d": 2.5, "s": "Hello",
	"u": "héllo", "nul": null, "t": true, "f": false, "arr": [1, 2, 3], "empty": [],
	"docs": [{"b": 1}, {"b": 2}, {"c": 3}, 4, [{"b": 5}]], "o": {"p": {"q": 9}},
	"when": {"$date": "2024-01-02T03:04:05.006Z"}, "oid": {"$oid": "0102030405060708090a0b0c"},
	"maxi": 2147483647, "mini": -2147483648, "maxl": {"$numberLong": "9223372036854775807"},
	"minl": {"$numberLong": "-9223372036854775808"}, "dec": {"$numberDecimal": "1.5"}}`

type exprCase struct {
	name string
	expr string // the expression, as JSON
	want string // the result as a JSON value; "missing" for no field
	code int32
}

func runExprCases(t *testing.T, cases []exprCase) {
	t.Helper()
	input := parseDoc(t, exprDoc)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stage := parseDoc(t, `{"$project": {"_id": 0, "r": `+c.expr+`}}`)
			p, err := Compile([]bson.Raw{stage}, Options{Now: testNow})
			var got []bson.Raw
			if err == nil {
				got, err = p.Run(feed([]bson.Raw{input}))
			}
			if c.code != 0 {
				var me *mongoerr.Error
				if !errors.As(err, &me) || me.Code != c.code {
					t.Fatalf("got %v (%v), want error code %d", err, canonicalOrNil(t, got), c.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := `[{}]`
			if c.want != "missing" {
				want = `[{"r": ` + c.want + `}]`
			}
			if g, w := canonical(t, got), canonical(t, parseArray(t, want)); g != w {
				t.Fatalf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func TestFieldPaths(t *testing.T) {
	runExprCases(t, []exprCase{
		{"top level", `"$i"`, `7`, 0},
		{"nested", `"$o.p.q"`, `9`, 0},
		{"nested document", `"$o.p"`, `{"q": 9}`, 0},
		{"missing", `"$nope"`, `missing`, 0},
		{"missing below scalar", `"$i.x"`, `missing`, 0},
		{"through array", `"$docs.b"`, `[1, 2, [5]]`, 0},
		{"array of scalars", `"$arr.x"`, `[]`, 0},
		{"whole array", `"$arr"`, `[1, 2, 3]`, 0},
		{"numeric key is a field name", `"$arr.0"`, `[]`, 0},
		{"null value", `"$nul"`, `null`, 0},
		{"ROOT path", `"$$ROOT.o.p.q"`, `9`, 0},
		{"CURRENT", `"$$CURRENT.i"`, `7`, 0},
		{"REMOVE", `"$$REMOVE"`, `missing`, 0},
		{"NOW", `"$$NOW"`, `{"$date": "2024-05-06T07:08:09.010Z"}`, 0},
		{"literal", `{"$literal": {"$add": 1}}`, `{"$add": 1}`, 0},
		{"plain string", `"abc"`, `"abc"`, 0},
		{"array literal with paths", `["$i", "$nope", 1]`, `[7, null, 1]`, 0},
		{"cluster time unsupported", `"$$CLUSTER_TIME"`, ``, mongoerr.NotImplemented},
		{"undefined variable", `"$$x"`, ``, 17276},
		{"empty part", `"$a..b"`, ``, mongoerr.Location15998},
		{"dollar part", `"$a.$b"`, ``, 16410},
	})
}

func TestArithmetic(t *testing.T) {
	runExprCases(t, []exprCase{
		{"add ints", `{"$add": ["$i", 1]}`, `8`, 0},
		{"add none", `{"$add": []}`, `0`, 0},
		{"add single operand", `{"$add": "$i"}`, `7`, 0},
		{"add long", `{"$add": ["$i", "$l"]}`, `{"$numberLong": "17"}`, 0},
		{"add double", `{"$add": ["$i", "$d"]}`, `9.5`, 0},
		{"add int32 overflow", `{"$add": ["$maxi", 1]}`, `{"$numberLong": "2147483648"}`, 0},
		{"add int64 overflow", `{"$add": ["$maxl", 1]}`, `9.223372036854775808e18`, 0},
		{"add null", `{"$add": ["$i", null]}`, `null`, 0},
		{"add missing", `{"$add": ["$i", "$nope"]}`, `null`, 0},
		{"add date", `{"$add": ["$when", 1000]}`, `{"$date": "2024-01-02T03:04:06.006Z"}`, 0},
		{"add date double rounds", `{"$add": ["$when", 1.6]}`, `{"$date": "2024-01-02T03:04:05.008Z"}`, 0},
		{"add two dates", `{"$add": ["$when", "$when"]}`, ``, 16612},
		{"add string", `{"$add": ["$i", "$s"]}`, ``, 16554},
		{"add decimal", `{"$add": ["$dec", 1]}`, ``, mongoerr.NotImplemented},
		{"subtract", `{"$subtract": ["$i", 10]}`, `-3`, 0},
		{"subtract double", `{"$subtract": ["$d", 1]}`, `1.5`, 0},
		{"subtract int32 overflow", `{"$subtract": ["$mini", 1]}`, `{"$numberLong": "-2147483649"}`, 0},
		{"subtract int64 overflow", `{"$subtract": ["$minl", 1]}`, `-9.223372036854775808e18`, 0},
		{"subtract dates", `{"$subtract": ["$when", {"$add": ["$when", -5]}]}`, `{"$numberLong": "5"}`, 0},
		{"subtract number from date", `{"$subtract": ["$when", 6]}`, `{"$date": "2024-01-02T03:04:05.000Z"}`, 0},
		{"subtract date from number", `{"$subtract": [1, "$when"]}`, ``, 16556},
		{"subtract string", `{"$subtract": ["$s", 1]}`, ``, 16556},
		{"subtract null", `{"$subtract": [null, 1]}`, `null`, 0},
		{"subtract arity", `{"$subtract": [1]}`, ``, 16020},
		{"multiply", `{"$multiply": ["$i", "$n"]}`, `-21`, 0},
		{"multiply long", `{"$multiply": ["$l", 2]}`, `{"$numberLong": "20"}`, 0},
		{"multiply int32 overflow", `{"$multiply": ["$maxi", 2]}`, `{"$numberLong": "4294967294"}`, 0},
		{"multiply int64 overflow", `{"$multiply": ["$maxl", 2]}`, `1.8446744073709552e19`, 0},
		{"multiply min by -1", `{"$multiply": ["$minl", -1]}`, `9.223372036854775808e18`, 0},
		{"multiply double", `{"$multiply": ["$d", 2]}`, `5.0`, 0},
		{"multiply null", `{"$multiply": ["$nul", 2]}`, `null`, 0},
		{"multiply string", `{"$multiply": ["$s", 2]}`, ``, 16555},
		{"divide", `{"$divide": ["$i", 2]}`, `3.5`, 0},
		{"divide exact is double", `{"$divide": [6, 3]}`, `2.0`, 0},
		{"divide by zero", `{"$divide": [1, 0]}`, ``, 16608},
		{"divide null", `{"$divide": [1, "$nope"]}`, `null`, 0},
		{"divide string", `{"$divide": ["$s", 1]}`, ``, 16609},
		{"mod", `{"$mod": ["$i", 4]}`, `3`, 0},
		{"mod negative", `{"$mod": ["$n", 2]}`, `-1`, 0},
		{"mod long", `{"$mod": ["$l", 3]}`, `{"$numberLong": "1"}`, 0},
		{"mod double", `{"$mod": ["$d", 2]}`, `0.5`, 0},
		{"mod min by -1", `{"$mod": ["$minl", -1]}`, `{"$numberLong": "0"}`, 0},
		{"mod by zero", `{"$mod": [1, 0]}`, ``, 16610},
		{"mod string", `{"$mod": [1, "a"]}`, ``, 16611},
		{"abs", `{"$abs": "$n"}`, `3`, 0},
		{"abs double", `{"$abs": -2.5}`, `2.5`, 0},
		{"abs int32 min", `{"$abs": "$mini"}`, `{"$numberLong": "2147483648"}`, 0},
		{"abs int64 min", `{"$abs": "$minl"}`, ``, 28680},
		{"abs null", `{"$abs": "$nope"}`, `null`, 0},
		{"abs string", `{"$abs": "$s"}`, ``, 28765},
		{"abs arity", `{"$abs": [1, 2]}`, ``, 16020},
	})
}

func TestComparisonBooleanConditional(t *testing.T) {
	runExprCases(t, []exprCase{
		{"eq numbers across types", `{"$eq": ["$l", 10.0]}`, `true`, 0},
		{"eq strings", `{"$eq": ["$s", "Hello"]}`, `true`, 0},
		{"eq missing vs null", `{"$eq": ["$nope", null]}`, `false`, 0},
		{"eq missing vs missing", `{"$eq": ["$nope", "$nope2"]}`, `true`, 0},
		{"ne", `{"$ne": ["$i", 7]}`, `false`, 0},
		{"gt", `{"$gt": ["$i", 5]}`, `true`, 0},
		{"gt across types", `{"$gt": ["$s", 5]}`, `true`, 0},
		{"gte", `{"$gte": ["$i", 7]}`, `true`, 0},
		{"lt", `{"$lt": ["$d", 2]}`, `false`, 0},
		{"lt null below numbers", `{"$lt": [null, 0]}`, `true`, 0},
		{"lte", `{"$lte": ["$arr", [1, 2, 3]]}`, `true`, 0},
		{"cmp", `{"$cmp": ["$i", 8]}`, `-1`, 0},
		{"cmp equal", `{"$cmp": ["$o", {"p": {"q": 9}}]}`, `0`, 0},
		{"cmp greater", `{"$cmp": ["b", "a"]}`, `1`, 0},
		{"eq arity", `{"$eq": [1]}`, ``, 16020},
		{"and", `{"$and": ["$t", 1, "s"]}`, `true`, 0},
		{"and false", `{"$and": ["$t", 0]}`, `false`, 0},
		{"and empty", `{"$and": []}`, `true`, 0},
		{"and short-circuits", `{"$and": [false, {"$divide": [1, 0]}]}`, `false`, 0},
		{"or", `{"$or": ["$f", "$nul", "$nope", 0.0, []]}`, `true`, 0},
		{"or all false", `{"$or": ["$f", "$nul", "$nope", 0]}`, `false`, 0},
		{"or empty", `{"$or": []}`, `false`, 0},
		{"not", `{"$not": ["$f"]}`, `true`, 0},
		{"not single", `{"$not": "$i"}`, `false`, 0},
		{"not arity", `{"$not": [1, 2]}`, ``, 16020},
		{"cond array", `{"$cond": [{"$gt": ["$i", 5]}, "big", "small"]}`, `"big"`, 0},
		{"cond document", `{"$cond": {"if": "$f", "then": 1, "else": 2}}`, `2`, 0},
		{"cond lazy", `{"$cond": [true, 1, {"$divide": [1, 0]}]}`, `1`, 0},
		{"cond missing then", `{"$cond": {"if": true, "else": 1}}`, ``, 17081},
		{"cond missing if", `{"$cond": {"then": 1, "else": 1}}`, ``, 17080},
		{"cond missing else", `{"$cond": {"if": true, "then": 1}}`, ``, 17082},
		{"cond unknown key", `{"$cond": {"if": 1, "then": 1, "else": 1, "x": 1}}`, ``, 17083},
		{"cond arity", `{"$cond": [1, 2]}`, ``, 16020},
		{"ifNull", `{"$ifNull": ["$nope", "$nul", "dflt"]}`, `"dflt"`, 0},
		{"ifNull first", `{"$ifNull": ["$i", "dflt"]}`, `7`, 0},
		{"ifNull false kept", `{"$ifNull": ["$f", 1]}`, `false`, 0},
		{"ifNull last missing", `{"$ifNull": ["$nope", "$nope2"]}`, `missing`, 0},
		{"ifNull arity", `{"$ifNull": ["$i"]}`, ``, 16020},
	})
}

func TestStringArrayTypeOperators(t *testing.T) {
	runExprCases(t, []exprCase{
		{"concat", `{"$concat": ["$s", " ", "world"]}`, `"Hello world"`, 0},
		{"concat empty", `{"$concat": []}`, `""`, 0},
		{"concat null", `{"$concat": ["$s", "$nope"]}`, `null`, 0},
		{"concat number", `{"$concat": ["$s", 1]}`, ``, 16702},
		{"toLower", `{"$toLower": "$s"}`, `"hello"`, 0},
		{"toUpper", `{"$toUpper": ["$s"]}`, `"HELLO"`, 0},
		{"toUpper ascii only", `{"$toUpper": "$u"}`, `"HéLLO"`, 0},
		{"toLower null", `{"$toLower": "$nope"}`, `""`, 0},
		{"toLower number", `{"$toLower": "$i"}`, `"7"`, 0},
		{"toLower array", `{"$toLower": ["$arr"]}`, ``, 16007},
		{"substrCP", `{"$substrCP": ["$u", 1, 3]}`, `"éll"`, 0},
		{"substrCP past end", `{"$substrCP": ["$s", 10, 3]}`, `""`, 0},
		{"substrCP long length", `{"$substrCP": ["$s", 3, 100]}`, `"lo"`, 0},
		{"substrCP null", `{"$substrCP": ["$nope", 0, 1]}`, `""`, 0},
		{"substrCP double index", `{"$substrCP": ["$s", 1.0, 2]}`, `"el"`, 0},
		{"substrCP fractional index", `{"$substrCP": ["$s", 1.5, 2]}`, ``, 34451},
		{"substrCP string index", `{"$substrCP": ["$s", "1", 2]}`, ``, 34450},
		{"substrCP negative index", `{"$substrCP": ["$s", -1, 2]}`, ``, 34455},
		{"substrCP string length", `{"$substrCP": ["$s", 1, "2"]}`, ``, 34452},
		{"substrCP fractional length", `{"$substrCP": ["$s", 1, 2.5]}`, ``, 34453},
		{"substrCP negative length", `{"$substrCP": ["$s", 1, -2]}`, ``, 34454},
		{"substrCP arity", `{"$substrCP": ["$s", 1]}`, ``, 16020},
		{"strLenCP", `{"$strLenCP": "$u"}`, `5`, 0},
		{"strLenCP not string", `{"$strLenCP": "$i"}`, ``, 34471},
		{"strLenCP missing", `{"$strLenCP": "$nope"}`, ``, 34471},
		{"size", `{"$size": "$arr"}`, `3`, 0},
		{"size of literal array", `{"$size": [[1, 2]]}`, `2`, 0},
		{"size missing", `{"$size": "$nope"}`, ``, 17124},
		{"size not array", `{"$size": "$s"}`, ``, 17124},
		{"arrayElemAt", `{"$arrayElemAt": ["$arr", 1]}`, `2`, 0},
		{"arrayElemAt negative", `{"$arrayElemAt": ["$arr", -1]}`, `3`, 0},
		{"arrayElemAt out of range", `{"$arrayElemAt": ["$arr", 5]}`, `missing`, 0},
		{"arrayElemAt far negative", `{"$arrayElemAt": ["$arr", -5]}`, `missing`, 0},
		{"arrayElemAt long index", `{"$arrayElemAt": ["$arr", "$l"]}`, `missing`, 0},
		{"arrayElemAt null", `{"$arrayElemAt": ["$nope", 0]}`, `null`, 0},
		{"arrayElemAt not array", `{"$arrayElemAt": ["$s", 0]}`, ``, 28689},
		{"arrayElemAt string index", `{"$arrayElemAt": ["$arr", "0"]}`, ``, 28690},
		{"arrayElemAt fractional index", `{"$arrayElemAt": ["$arr", 0.5]}`, ``, 28691},
		{"in", `{"$in": [2.0, "$arr"]}`, `true`, 0},
		{"in absent", `{"$in": [9, "$arr"]}`, `false`, 0},
		{"in not array", `{"$in": [1, "$nope"]}`, ``, 40081},
		{"isArray", `{"$isArray": ["$arr"]}`, `true`, 0},
		{"isArray literal array operand", `{"$isArray": [[1]]}`, `true`, 0},
		{"isArray no", `{"$isArray": "$s"}`, `false`, 0},
		{"type int", `{"$type": "$i"}`, `"int"`, 0},
		{"type long", `{"$type": "$l"}`, `"long"`, 0},
		{"type double", `{"$type": "$d"}`, `"double"`, 0},
		{"type missing", `{"$type": "$nope"}`, `"missing"`, 0},
		{"type null", `{"$type": "$nul"}`, `"null"`, 0},
		{"type object", `{"$type": "$o"}`, `"object"`, 0},
		{"type array", `{"$type": ["$arr"]}`, `"array"`, 0},
		{"type date", `{"$type": "$when"}`, `"date"`, 0},
		{"type oid", `{"$type": "$oid"}`, `"objectId"`, 0},
		{"type bool", `{"$type": "$t"}`, `"bool"`, 0},
		{"type decimal", `{"$type": "$dec"}`, `"decimal"`, 0},
		{"type string", `{"$type": "$s"}`, `"string"`, 0},
	})
}

func TestConversions(t *testing.T) {
	runExprCases(t, []exprCase{
		{"toString int", `{"$toString": "$i"}`, `"7"`, 0},
		{"toString long", `{"$toString": "$l"}`, `"10"`, 0},
		{"toString double", `{"$toString": "$d"}`, `"2.5"`, 0},
		{"toString bool", `{"$toString": "$t"}`, `"true"`, 0},
		{"toString oid", `{"$toString": "$oid"}`, `"0102030405060708090a0b0c"`, 0},
		{"toString date", `{"$toString": "$when"}`, `"2024-01-02T03:04:05.006Z"`, 0},
		{"toString decimal", `{"$toString": "$dec"}`, `"1.5"`, 0},
		{"toString null", `{"$toString": "$nope"}`, `null`, 0},
		{"toString string", `{"$toString": "$s"}`, `"Hello"`, 0},
		{"toString array", `{"$toString": ["$arr"]}`, ``, codeConversionFailure},
		{"toInt", `{"$toInt": "$d"}`, `2`, 0},
		{"toInt negative double truncates", `{"$toInt": -2.7}`, `-2`, 0},
		{"toInt long", `{"$toInt": "$l"}`, `10`, 0},
		{"toInt overflow", `{"$toInt": "$maxl"}`, ``, codeConversionFailure},
		{"toInt double overflow", `{"$toInt": 3e9}`, ``, codeConversionFailure},
		{"toInt NaN", `{"$toInt": {"$numberDouble": "NaN"}}`, ``, codeConversionFailure},
		{"toInt string", `{"$toInt": "42"}`, `42`, 0},
		{"toInt bad string", `{"$toInt": "4x"}`, ``, codeConversionFailure},
		{"toInt bool", `{"$toInt": "$t"}`, `1`, 0},
		{"toInt null", `{"$toInt": null}`, `null`, 0},
		{"toInt date", `{"$toInt": "$when"}`, ``, codeConversionFailure},
		{"toInt decimal", `{"$toInt": "$dec"}`, ``, mongoerr.NotImplemented},
		{"toLong", `{"$toLong": "$i"}`, `{"$numberLong": "7"}`, 0},
		{"toLong date", `{"$toLong": "$when"}`, `{"$numberLong": "1704164645006"}`, 0},
		{"toLong string", `{"$toLong": "9223372036854775807"}`, `{"$numberLong": "9223372036854775807"}`, 0},
		{"toLong double overflow", `{"$toLong": 1e19}`, ``, codeConversionFailure},
		{"toDouble", `{"$toDouble": "$i"}`, `7.0`, 0},
		{"toDouble string", `{"$toDouble": "2.25"}`, `2.25`, 0},
		{"toDouble bad string", `{"$toDouble": "x"}`, ``, codeConversionFailure},
		{"toDouble bool", `{"$toDouble": "$f"}`, `0.0`, 0},
		{"toDouble date", `{"$toDouble": "$when"}`, `1704164645006.0`, 0},
		{"toDouble object", `{"$toDouble": "$o"}`, ``, codeConversionFailure},
		{"toBool zero", `{"$toBool": 0}`, `false`, 0},
		{"toBool string", `{"$toBool": ""}`, `true`, 0},
		{"toBool null", `{"$toBool": "$nul"}`, `null`, 0},
		{"toBool date", `{"$toBool": "$when"}`, `true`, 0},
		{"nested expressions", `{"$toUpper": {"$concat": [{"$toString": {"$add": ["$i", 1]}}, "x"]}}`, `"8X"`, 0},
		{"unknown", `{"$foo": 1}`, ``, mongoerr.InvalidPipelineOperator},
	})
}

func TestUnknownExpressionMessage(t *testing.T) {
	_, err := Compile([]bson.Raw{parseDoc(t, `{"$project": {"x": {"$foo": 1}}}`)}, Options{})
	me := mongoerr.As(errOrNil(err))
	if me.Code != mongoerr.InvalidPipelineOperator || me.CodeName != "InvalidPipelineOperator" || me.Message != "Invalid $project :: caused by :: Unrecognized expression '$foo'" {
		t.Fatalf("got %+v", me)
	}
	_, err = Compile([]bson.Raw{parseDoc(t, `{"$foo": 1}`)}, Options{})
	me = mongoerr.As(errOrNil(err))
	if me.Code != 40324 || me.Message != "Unrecognized pipeline stage name: '$foo'" {
		t.Fatalf("got %+v", me)
	}
}
