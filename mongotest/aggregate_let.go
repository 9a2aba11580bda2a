package mongotest

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// letOption is a command's let option (nil when absent), checked to be a
// document as mongod's parser does; the aggregation engine checks the
// names and compiles the expressions.
func letOption(r *Request) (bson.Raw, error) {
	v, err := r.Body.LookupErr("let")
	if err != nil {
		return nil, nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.let' is the wrong type '%s', expected type 'object'", r.Name, typeName(v.Type))
	}
	return d, nil
}

// storeCollections is how the aggregation engine reads the collections
// $lookup and $unionWith name: straight from the store, a missing
// collection reading as empty.
type storeCollections struct{ s *Server }

func (c storeCollections) Scan(db, coll string, yield func(bson.Raw) bool) {
	if col := c.s.store.Collection(db, coll); col != nil {
		col.Scan(yield)
	}
}
