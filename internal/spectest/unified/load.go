package unified

import (
	"fmt"
	"os"

	"github.com/mongoscope/mongoscope/bson"
)

// LoadFile reads a spec test file, which is one Extended JSON object, as a
// BSON document. Expected values are then found with Lookup, e.g.
// doc.Lookup("tests", "0", "operations", "1", "expectResult").
func LoadFile(path string) (bson.Raw, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := bson.ParseExtJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// ParseValue parses any Extended JSON value (a document, an array or a
// scalar such as 1 or {"$numberLong": "1"}) as a BSON value, for expected
// values and for tests.
func ParseValue(data []byte) (bson.RawValue, error) {
	wrapped := make([]byte, 0, len(data)+8)
	wrapped = append(wrapped, `{"v":`...)
	wrapped = append(wrapped, data...)
	wrapped = append(wrapped, "\n}"...)
	doc, err := bson.ParseExtJSON(wrapped)
	if err != nil {
		return bson.RawValue{}, err
	}
	elems, err := doc.Elements()
	if err != nil {
		return bson.RawValue{}, err
	}
	// A value such as `1, "w": 2` would parse as two members.
	if len(elems) != 1 || elems[0].Key() != "v" {
		return bson.RawValue{}, fmt.Errorf("not a single Extended JSON value: %.60q", data)
	}
	return elems[0].Value(), nil
}
