// Package store is the test server's in-memory catalog and document storage:
// databases, collections (plain and capped), documents kept as immutable BSON
// in natural (insertion) order, the unique _id index and secondary indexes.
//
// What it guarantees, and where it differs from mongod:
//
//   - Documents are stored with _id as their first field, as mongod stores
//     them; an _id is added (a new ObjectID) when a document lacks one.
//   - The _id index and unique secondary indexes compare values as mongod's
//     indexes do: numbers by value across int32, int64, double and
//     decimal128 (1, 1.0, NumberLong(1) and NumberDecimal("1.0") collide,
//     -0.0 equals 0, NaN equals NaN), strings and symbols by their bytes (the
//     simple collation only), documents by field names, order and values.
//   - An index's collation (IndexSpec.Collation) is listed, tells indexes
//     apart, and is how a unique index compares strings (by their
//     collation sort keys). The _id index of a collection with a default
//     collation ("collation" in CollectionOptions.Extra) keys by it too.
//   - Secondary indexes are bookkeeping for listIndexes plus uniqueness
//     enforcement; queries never use them. Non-unique indexes still reject
//     documents with parallel arrays, as mongod does.
//   - expireAfterSeconds is accepted and listed but documents never expire.
//   - A unique partialFilterExpression index needs a matcher from the caller
//     (IndexSpec.PartialFilter): this package has no query engine.
//   - Capped collections evict their oldest documents on insert when the
//     byte size or document count limit is exceeded. Deletes and updates
//     that change a document's size are allowed, as in mongod 5.0 and later.
//     The size limit is rounded up as mongod does (to 4096 at least, then to
//     a multiple of 256); listCollections shows the size the caller gave.
//   - Indexing an array element through a path whose remaining part does
//     not lead into a document yields no key for that element (null when no
//     element yields one).
//   - Database sizes are approximations: document bytes plus a fixed 4 KiB
//     per collection and per index.
//
// Every method is safe for concurrent use. Readers (FindByID, Scan) run in
// parallel with each other; Scan and ScanAfter iterate over a snapshot of
// record positions, so a cursor may keep iterating while writers work.
package store
