// Package collation parses a MongoDB collation document the way mongod
// does, with mongod's error codes, and compares strings by it using the
// Unicode collation algorithm with CLDR locale tailorings
// (golang.org/x/text/collate). Options that package cannot honour
// (caseFirst "upper"/"lower", alternate "shifted", locale variants such
// as "@collation=") are refused with NotImplemented rather than answered
// approximately.
package collation
