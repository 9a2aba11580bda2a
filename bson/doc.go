// Package bson implements BSON (https://bsonspec.org) and MongoDB Extended JSON.
//
// It offers three ways to work with documents, from fastest to most convenient:
//
//   - Append functions (AppendInt32Element, AppendDocumentStart, ...) build BSON
//     directly into a caller-owned []byte without allocating. The driver builds
//     its commands this way.
//   - Raw, RawValue and RawElement are zero-copy views over encoded bytes: they
//     validate, look up fields by key or dotted path, and iterate without decoding.
//   - D, M, A and Go structs (with `bson` struct tags) are decoded and encoded by
//     Marshal and Unmarshal.
//
// Every BSON type is supported, including the deprecated ones (Undefined,
// DBPointer, Symbol, CodeWithScope). Bad input never panics: decoding
// functions return a *DecodeError naming the byte offset and field path, and
// struct decoding returns an *UnmarshalTypeError naming the Go field path.
//
// Nesting is limited to MaxDepth levels of documents and arrays, the same
// limit mongod applies by default.
package bson
