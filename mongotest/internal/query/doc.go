// Package query is the test server's query engine: it orders BSON values
// as mongod sorts them, matches documents against find filters, sorts them
// and projects them, all on bson.Raw bytes read in place.
//
// Supported filter operators: $eq $ne $gt $gte $lt $lte $in $nin $and $or
// $nor $not $exists $type $all $elemMatch (query and value forms) $size
// $regex/$options $mod, plus $comment (ignored). $expr works when the
// caller gives NewMatcherWith an expression compiler (the agg package's
// ExprFilter); otherwise it, like $where, $text,
// $jsonSchema, the geo operators and the $bits operators return a
// NotImplemented error naming the operator rather than being ignored.
//
// Differences from mongod:
//   - Regular expressions run on Go's regexp package (RE2 syntax). The i, m,
//     s and x options are honoured; PCRE-only syntax (lookaround,
//     backreferences, possessive quantifiers, \Z) is rejected as an invalid
//     regular expression.
//   - Strings compare by their bytes unless a Collator is given
//     (CompareWith, NewMatcherWith, NewSortWith); under a collation the
//     matcher's IDEquality declines string, document and array _ids.
//   - Undefined is its own bracket below null, so {a: null} does not match
//     an undefined value (mongod 8.0 behaves this way).
//   - Projections accept inclusion, exclusion, nested documents, $slice and
//     $elemMatch; the positional "a.$" form, $meta and computed
//     (expression) fields return NotImplemented.
package query
