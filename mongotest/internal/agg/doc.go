// Package agg is the test server's aggregation pipeline: it compiles the
// stages of an aggregate command, checking each up front as mongod does,
// and runs them over a stream of bson.Raw documents.
//
// Supported stages: $match (a query filter, with $expr at its top level
// or under $and, $or and $nor),
// $project, $addFields and $set, $unset, $group, $sort, $skip, $limit,
// $count, $unwind, $replaceRoot, $replaceWith, $lookup (equality,
// pipeline and both), $facet, $unionWith, $sortByCount, $bucket and $out.
// $lookup and $unionWith read other collections through
// Options.Collections. A stage name mongod does not know fails with
// Location40324; one it knows but this package does not run
// ($graphLookup, $bucketAuto, $merge, ...) fails with NotImplemented
// naming the stage.
//
// Expressions: field paths (through arrays as aggregation does), $$ROOT,
// $$CURRENT, $$NOW, $$REMOVE, user variables ($$name, bound by the let
// option, $lookup's let and $let; EvalLet and Eval serve other commands'
// let), literals and $literal, $let, $rand, and the operators
// $add $subtract $multiply $divide $mod $abs, $eq $ne $gt $gte $lt $lte
// $cmp, $and $or $not, $cond $ifNull, $concat $toLower $toUpper $substrCP
// $strLenCP, $size $arrayElemAt $in $isArray, $type $toString $toInt
// $toLong $toDouble $toBool, $getField $setField $unsetField (for field
// names with '.' or a leading '$'; 'field' must be a constant string, as
// mongod 8.0 requires). ExprFilter compiles a find, update or delete
// filter's $expr with that command's let. Accumulators: $sum $avg $min $max $push
// $addToSet $first $last $count. Other operators and accumulators mongod
// has fail with NotImplemented; names mongod does not know fail as mongod
// fails them (InvalidPipelineOperator, or 15952 in $group).
//
// Where this differs from mongod:
//   - $group emits its groups in the order their keys were first seen;
//     mongod's order is unspecified.
//   - Decimal128 values compare exactly, but arithmetic ($add, $sum, $avg,
//     ...) on them fails with NotImplemented, and as a $group key a
//     non-integral Decimal128 does not share a group with an equal double.
//   - $toString formats doubles with Go's shortest representation, which
//     can differ from mongod's for very large or small magnitudes.
//   - $lookup reads only the aggregate's database, not other databases
//     ({from: {db, coll}} is NotImplemented); $lookup and $unionWith see
//     the collection's state as they start. Whether a name is a view is
//     Options.Collections' business (mongotest reads a view as its
//     pipeline's result).
//   - Options.Collation applies to $match, $sort, $group's (and
//     $sortByCount's) keys and its $min, $max and $addToSet, $bucket's
//     boundaries, $lookup's matches and the comparison expressions.
//   - The 100 MB memory limits of $group and $sort are not implemented;
//     every document is still held to mongod's 16 MiB limit.
package agg
