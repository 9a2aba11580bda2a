package bson

import (
	"encoding/binary"
	"math"
	"strconv"
)

// VectorDType is the data type of a BSON vector (binary subtype 9): the
// first byte of its data.
type VectorDType byte

// The vector data types the BSON Binary Vector specification defines.
const (
	// Int8Vector holds signed 8-bit integers, one byte each.
	Int8Vector VectorDType = 0x03
	// Float32Vector holds IEEE 754 single-precision floats, four bytes
	// each, little-endian.
	Float32Vector VectorDType = 0x27
	// PackedBitVector holds bits packed eight to a byte, most significant
	// bit first; the padding says how many low bits of the last byte are
	// not part of the vector.
	PackedBitVector VectorDType = 0x10
)

// String returns the dtype's alias from the specification (INT8, FLOAT32,
// PACKED_BIT), or its hexadecimal value when it is not one of those.
func (t VectorDType) String() string {
	switch t {
	case Int8Vector:
		return "INT8"
	case Float32Vector:
		return "FLOAT32"
	case PackedBitVector:
		return "PACKED_BIT"
	}
	return "dtype 0x" + uuidHexByte(byte(t))
}

// VectorError reports a vector that breaks one of the specification's
// rules, when building one or when reading one from binary data.
type VectorError struct {
	DType  VectorDType // the dtype involved; 0 when the data was too short to have one
	Reason string
}

// Error names the dtype and the rule the vector breaks.
func (e *VectorError) Error() string {
	if e.DType == 0 {
		return "bson: invalid vector: " + e.Reason
	}
	return "bson: invalid " + e.DType.String() + " vector: " + e.Reason
}

// Vector is a dense numeric vector as stored in BSON binary subtype 9. Build
// one with NewInt8Vector, NewFloat32Vector, NewPackedBitVector or NewVector,
// or read one with NewVectorFromBinary; the zero Vector has no dtype and is
// not valid BSON vector data. A Vector owns its elements: constructors copy
// their input, and the slices the accessors return must not be modified.
type Vector struct {
	dtype   VectorDType
	padding uint8
	int8s   []int8
	floats  []float32
	bits    []byte
}

// NewInt8Vector returns an INT8 vector holding a copy of values.
func NewInt8Vector(values []int8) Vector {
	return Vector{dtype: Int8Vector, int8s: append([]int8{}, values...)}
}

// NewFloat32Vector returns a FLOAT32 vector holding a copy of values. NaN
// and infinities are allowed.
func NewFloat32Vector(values []float32) Vector {
	return Vector{dtype: Float32Vector, floats: append([]float32{}, values...)}
}

// NewPackedBitVector returns a PACKED_BIT vector of 8*len(bits)-padding bits,
// taken most significant bit first from a copy of bits. padding must be at
// most 7, must be 0 when bits is empty, and the padding bits (the low
// padding bits of the last byte) must be zero. The error is a *VectorError.
func NewPackedBitVector(bits []byte, padding uint8) (Vector, error) {
	if err := checkPackedBits(bits, int(padding)); err != nil {
		return Vector{}, err
	}
	return Vector{dtype: PackedBitVector, padding: padding, bits: append([]byte{}, bits...)}, nil
}

// checkPackedBits applies the specification's padding rules to PACKED_BIT
// data. Non-zero ignored bits are rejected, as the specification recommends
// for new drivers, so that equal vectors always have equal encodings.
func checkPackedBits(bits []byte, padding int) error {
	if padding < 0 || padding > 7 {
		return &VectorError{DType: PackedBitVector, Reason: "padding " + strconv.Itoa(padding) + " is outside [0, 7]"}
	}
	if padding > 0 && len(bits) == 0 {
		return &VectorError{DType: PackedBitVector, Reason: "padding " + strconv.Itoa(padding) + " given for an empty vector; it must be 0"}
	}
	if padding > 0 {
		last := bits[len(bits)-1]
		if ignored := last & (1<<padding - 1); ignored != 0 {
			return &VectorError{DType: PackedBitVector, Reason: "the " + strconv.Itoa(padding) +
				" ignored low bits of the last byte 0x" + uuidHexByte(last) + " are not zero"}
		}
	}
	return nil
}

// NewVector builds a vector of dtype from numbers, the form the
// specification's from_vector takes and its test files use. INT8 values
// must be integers in [-128, 127]; PACKED_BIT values are whole bytes, so
// integers in [0, 255], with padding as NewPackedBitVector requires; FLOAT32
// values are rounded to float32, and a finite value too large for float32
// is an error rather than silently becoming infinite. padding must be 0 for
// INT8 and FLOAT32. The error is a *VectorError naming the first bad value.
func NewVector(dtype VectorDType, values []float64, padding int) (Vector, error) {
	switch dtype {
	case Int8Vector, Float32Vector:
		if padding != 0 {
			return Vector{}, &VectorError{DType: dtype, Reason: "padding is " + strconv.Itoa(padding) + "; it must be 0 for this dtype"}
		}
	case PackedBitVector:
		if padding < 0 || padding > 7 {
			return Vector{}, &VectorError{DType: dtype, Reason: "padding " + strconv.Itoa(padding) + " is outside [0, 7]"}
		}
	default:
		return Vector{}, &VectorError{DType: dtype, Reason: "unknown dtype"}
	}
	switch dtype {
	case Int8Vector:
		out := make([]int8, len(values))
		for i, f := range values {
			if f != math.Trunc(f) || f < math.MinInt8 || f > math.MaxInt8 {
				return Vector{}, vectorValueError(dtype, i, f, "is not an integer in [-128, 127]")
			}
			out[i] = int8(f)
		}
		return Vector{dtype: dtype, int8s: out}, nil
	case Float32Vector:
		out := make([]float32, len(values))
		for i, f := range values {
			g := float32(f)
			if math.IsInf(float64(g), 0) && !math.IsInf(f, 0) {
				return Vector{}, vectorValueError(dtype, i, f, "overflows float32")
			}
			out[i] = g
		}
		return Vector{dtype: dtype, floats: out}, nil
	}
	out := make([]byte, len(values))
	for i, f := range values {
		if f != math.Trunc(f) || f < 0 || f > math.MaxUint8 {
			return Vector{}, vectorValueError(dtype, i, f, "is not an integer in [0, 255]")
		}
		out[i] = byte(f)
	}
	if err := checkPackedBits(out, padding); err != nil {
		return Vector{}, err
	}
	return Vector{dtype: dtype, padding: uint8(padding), bits: out}, nil
}

func vectorValueError(dtype VectorDType, i int, f float64, what string) *VectorError {
	return &VectorError{DType: dtype, Reason: "value " + strconv.FormatFloat(f, 'g', -1, 64) +
		" at index " + strconv.Itoa(i) + " " + what}
}

// NewVectorFromBinary reads a vector from BSON binary data, checking every
// rule of the specification: subtype 9, a dtype and padding byte, a known
// dtype, zero padding for INT8 and FLOAT32, FLOAT32 data a multiple of four
// bytes, PACKED_BIT padding within [0, 7], not set on an empty vector, and
// covering only zero bits. The Vector copies what it needs from b.Data. The
// error is a *VectorError.
func NewVectorFromBinary(b Binary) (Vector, error) {
	if b.Subtype != SubtypeVector {
		return Vector{}, &VectorError{Reason: "binary subtype is 0x" + uuidHexByte(b.Subtype) + ", want 0x09"}
	}
	if len(b.Data) < 2 {
		return Vector{}, &VectorError{Reason: "binary data is " + strconv.Itoa(len(b.Data)) + " bytes; the dtype and padding bytes need 2"}
	}
	dtype, padding, data := VectorDType(b.Data[0]), b.Data[1], b.Data[2:]
	switch dtype {
	case Int8Vector:
		if padding != 0 {
			return Vector{}, &VectorError{DType: dtype, Reason: "padding byte is " + strconv.Itoa(int(padding)) + "; it must be 0 for this dtype"}
		}
		out := make([]int8, len(data))
		for i, c := range data {
			out[i] = int8(c)
		}
		return Vector{dtype: dtype, int8s: out}, nil
	case Float32Vector:
		if padding != 0 {
			return Vector{}, &VectorError{DType: dtype, Reason: "padding byte is " + strconv.Itoa(int(padding)) + "; it must be 0 for this dtype"}
		}
		if len(data)%4 != 0 {
			return Vector{}, &VectorError{DType: dtype, Reason: "data after the dtype and padding is " + strconv.Itoa(len(data)) + " bytes, not a multiple of 4"}
		}
		out := make([]float32, len(data)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return Vector{dtype: dtype, floats: out}, nil
	case PackedBitVector:
		if err := checkPackedBits(data, int(padding)); err != nil {
			return Vector{}, err
		}
		return Vector{dtype: dtype, padding: padding, bits: append([]byte{}, data...)}, nil
	}
	return Vector{}, &VectorError{DType: dtype, Reason: "unknown dtype"}
}

// Binary encodes v as BSON binary subtype 9. The zero Vector encodes as
// dtype 0, which NewVectorFromBinary rejects.
func (v Vector) Binary() Binary {
	var data []byte
	switch v.dtype {
	case Int8Vector:
		data = make([]byte, 2+len(v.int8s))
		for i, x := range v.int8s {
			data[2+i] = byte(x)
		}
	case Float32Vector:
		data = make([]byte, 2+4*len(v.floats))
		for i, f := range v.floats {
			binary.LittleEndian.PutUint32(data[2+4*i:], math.Float32bits(f))
		}
	default:
		data = make([]byte, 2+len(v.bits))
		copy(data[2:], v.bits)
	}
	data[0], data[1] = byte(v.dtype), v.padding
	return Binary{Subtype: SubtypeVector, Data: data}
}

// DType returns v's data type.
func (v Vector) DType() VectorDType { return v.dtype }

// Padding returns the number of ignored low bits in the last byte of a
// PACKED_BIT vector; it is 0 for the other dtypes.
func (v Vector) Padding() uint8 { return v.padding }

// Len returns the number of elements: values for INT8 and FLOAT32, bits for
// PACKED_BIT.
func (v Vector) Len() int {
	switch v.dtype {
	case Int8Vector:
		return len(v.int8s)
	case Float32Vector:
		return len(v.floats)
	}
	return 8*len(v.bits) - int(v.padding)
}

// Int8OK returns the values of an INT8 vector, and false for other dtypes.
// The slice is v's own; do not modify it.
func (v Vector) Int8OK() ([]int8, bool) {
	if v.dtype != Int8Vector {
		return nil, false
	}
	return v.int8s, true
}

// Float32OK returns the values of a FLOAT32 vector, and false for other
// dtypes. The slice is v's own; do not modify it.
func (v Vector) Float32OK() ([]float32, bool) {
	if v.dtype != Float32Vector {
		return nil, false
	}
	return v.floats, true
}

// PackedBitOK returns the packed bytes and padding of a PACKED_BIT vector,
// and false for other dtypes. The slice is v's own; do not modify it.
func (v Vector) PackedBitOK() (bits []byte, padding uint8, ok bool) {
	if v.dtype != PackedBitVector {
		return nil, 0, false
	}
	return v.bits, v.padding, true
}

// BitAt reports whether bit i (counting from 0, most significant bit of the
// first byte first) of a PACKED_BIT vector is set. It returns false when v
// is not PACKED_BIT or i is outside [0, v.Len()).
func (v Vector) BitAt(i int) bool {
	if v.dtype != PackedBitVector || i < 0 || i >= v.Len() {
		return false
	}
	return v.bits[i/8]&(0x80>>(i%8)) != 0
}

// Equal reports whether v and w have the same dtype, padding and elements.
// FLOAT32 elements compare by bit pattern, so a NaN equals the same NaN and
// 0 differs from -0: Equal agrees with comparing the encoded bytes.
func (v Vector) Equal(w Vector) bool {
	if v.dtype != w.dtype || v.padding != w.padding {
		return false
	}
	switch v.dtype {
	case Int8Vector:
		if len(v.int8s) != len(w.int8s) {
			return false
		}
		for i := range v.int8s {
			if v.int8s[i] != w.int8s[i] {
				return false
			}
		}
		return true
	case Float32Vector:
		if len(v.floats) != len(w.floats) {
			return false
		}
		for i := range v.floats {
			if math.Float32bits(v.floats[i]) != math.Float32bits(w.floats[i]) {
				return false
			}
		}
		return true
	}
	return string(v.bits) == string(w.bits)
}
