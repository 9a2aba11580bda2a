package unified

// The operations of collection entities. None is implemented yet: the
// driver's CRUD API (driver.Collection) is not there. Each known
// operation (knownOps in ops.go) skips its test with "operation X not
// implemented"; an operation is added here as one function mapping its
// arguments onto the driver's call and its result onto a document, with
// register("collection", name, fn) in init.
