package bson

import (
	"errors"
	"testing"
)

func TestMarshalUnmarshalExtJSONStructs(t *testing.T) {
	type item struct {
		Name  string  `bson:"name"`
		Price float64 `bson:"price"`
		Qty   int64   `bson:"qty"`
	}
	in := item{Name: "widget", Price: 2.5, Qty: 1 << 40}
	canon, err := MarshalExtJSON(in, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"widget","price":{"$numberDouble":"2.5"},"qty":{"$numberLong":"1099511627776"}}`; string(canon) != want {
		t.Errorf("canonical = %s\nwant %s", canon, want)
	}
	relaxed, err := MarshalExtJSON(&in, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"widget","price":2.5,"qty":1099511627776}`; string(relaxed) != want {
		t.Errorf("relaxed = %s\nwant %s", relaxed, want)
	}
	for _, js := range [][]byte{canon, relaxed} {
		var out item
		if err := UnmarshalExtJSON(js, &out); err != nil || out != in {
			t.Errorf("UnmarshalExtJSON(%s) = %+v, %v", js, out, err)
		}
	}
	var ee *ExtJSONError
	if err := UnmarshalExtJSON([]byte(`{"qty": {"$numberLong": "x"}}`), &item{}); !errors.As(err, &ee) {
		t.Errorf("bad $numberLong: %v, want *ExtJSONError", err)
	}
	var te *UnmarshalTypeError
	if err := UnmarshalExtJSON([]byte(`{"qty": "many"}`), &item{}); !errors.As(err, &te) || te.Path != "qty" {
		t.Errorf("type mismatch: %v, want *UnmarshalTypeError at qty", err)
	}
	if _, err := MarshalExtJSON(D{{Key: "bad\x00", Value: 1}}, true); err == nil {
		t.Error("MarshalExtJSON accepted a NUL in a key")
	}
}

func TestDocumentString(t *testing.T) {
	d := D{{Key: "a", Value: int32(1)}, {Key: "b", Value: A{"x", 2.0}}}
	if got := d.String(); got != `{"a":1,"b":["x",2.0]}` {
		t.Errorf("D.String() = %s", got)
	}
	if got := (M{"k": int64(5)}).String(); got != `{"k":5}` {
		t.Errorf("M.String() = %s", got)
	}
	if got := (D{{Key: "c", Value: make(chan int)}}).String(); got == "" || got[0] != '<' {
		t.Errorf("D.String() of an unencodable value = %q", got)
	}
}

type failingMarshaler struct{}

var errUserMarshal = errors.New("user marshal failure")

func (failingMarshaler) MarshalBSON() ([]byte, error) { return nil, errUserMarshal }

type failingUnmarshaler struct{}

func (*failingUnmarshaler) UnmarshalBSON([]byte) error { return errUserMarshal }

func TestUserMethodErrorsUnwrap(t *testing.T) {
	_, err := Marshal(D{{Key: "x", Value: failingMarshaler{}}})
	if !errors.Is(err, errUserMarshal) {
		t.Errorf("Marshal: %v does not wrap the MarshalBSON error", err)
	}
	var s struct {
		X failingUnmarshaler `bson:"x"`
	}
	err = Unmarshal(mustMarshal(t, D{{Key: "x", Value: D{}}}), &s)
	if !errors.Is(err, errUserMarshal) {
		t.Errorf("Unmarshal: %v does not wrap the UnmarshalBSON error", err)
	}
}
