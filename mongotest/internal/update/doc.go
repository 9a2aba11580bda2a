// Package update is the test server's update engine: it compiles update
// documents (operators or a replacement) and applies them to bson.Raw
// documents as mongod does, and builds the document an upsert starts from.
//
// Supported: $set $unset $inc $mul $min $max $rename $push (with $each,
// $slice, $sort, $position) $addToSet (with $each) $pull $pullAll $pop
// $currentDate $setOnInsert, the all-elements $[] and filtered $[<id>]
// positional operators with arrayFilters, and replacements.
//
// Differences from mongod:
//   - Aggregation-pipeline updates and $bit return NotImplemented.
//   - The positional "$" operator needs the array index the query matched,
//     which this package is not given; it fails with mongod's "did not find
//     the match needed from the query" error.
//   - Array filters must name their identifier at the top level; top-level
//     $and/$or in an array filter return NotImplemented.
//   - Decimal128 arithmetic in $inc and $mul is exact up to 34 digits and
//     then truncates rather than rounding half-even.
package update
