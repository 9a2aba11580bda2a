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
// collection reading as empty, a view as its pipeline's result.
type storeCollections struct {
	s     *Server
	depth int       // views being read to get here, against $lookup cycles
	snap  *snapRead // a snapshot read's time, or nil
}

func (c storeCollections) Scan(db, coll string, yield func(bson.Raw) bool) error {
	if c.s.store.View(db, coll) != nil && c.depth >= maxViewNesting {
		return namedError(43, "ViewDepthLimitExceeded", "View depth too deep or view cycle detected. Maximum depth is %d", maxViewNesting)
	}
	if c.snap != nil && c.s.store.View(db, coll) != nil {
		return newError(mongoerr.NotImplemented, "mongotest does not support readConcern level snapshot on a view (%s.%s)", db, coll)
	}
	docs, isView, err := c.s.viewReadAt(db, coll, nil, c.depth+1)
	if isView {
		for _, d := range docs {
			if !yield(d) {
				break
			}
		}
		return err
	}
	col, err := c.snap.of(c.s.store.Collection(db, coll))
	if err != nil {
		return err
	}
	if col != nil {
		col.Scan(yield)
	}
	return nil
}
