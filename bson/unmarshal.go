package bson

import "reflect"

// Unmarshal decodes the BSON document data into v, which must be a *D, *M
// or *any.
func Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *D:
		d, err := DecodeD(data)
		if err == nil {
			*p = d
		}
		return err
	case *M:
		m, err := DecodeM(data)
		if err == nil {
			*p = m
		}
		return err
	case *any:
		d, err := DecodeD(data)
		if err == nil {
			*p = d
		}
		return err
	}
	return &UnmarshalTypeError{BSONType: TypeEmbeddedDocument, GoType: reflect.TypeOf(v), Reason: "no decoder for this type"}
}
