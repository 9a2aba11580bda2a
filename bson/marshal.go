package bson

import "reflect"

// Marshal encodes v as a BSON document. v may be a D, M, map[string]any or
// Raw.
func Marshal(v any) ([]byte, error) {
	return MarshalAppend(nil, v)
}

// MarshalAppend encodes v as a BSON document appended to dst. On error dst
// is returned unchanged.
func MarshalAppend(dst []byte, v any) ([]byte, error) {
	out, err := appendDocumentValue(dst, v, 1)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendOther(dst []byte, key string, v any, depth int) ([]byte, error) {
	return dst, &MarshalError{Path: key, GoType: reflect.TypeOf(v), Reason: "no encoder for this type"}
}

func appendOtherDocument(dst []byte, v any, depth int) ([]byte, error) {
	return dst, &MarshalError{GoType: reflect.TypeOf(v), Reason: "no document encoder for this type"}
}
