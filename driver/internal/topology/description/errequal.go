package description

import (
	"errors"
	"reflect"
)

// sameError is the error comparison of Server Description Equality. The
// specification marks the error field (=) but does not say how errors
// compare; comparing messages would make a dead server's description
// change on every heartbeat, since each failed check's message names a new
// connection number (and a read error the local port). So two errors are
// the same when their chains hold the same error types in the same order
// and their root causes (the errors that wrap nothing) have the same
// message: "connection refused" stays "connection refused" however many
// connections were tried, while a refused dial and a timed-out read, a
// state change error and a network error, or two server errors with
// different codes still differ.
func sameError(a, b error) bool {
	for {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		if reflect.TypeOf(a) != reflect.TypeOf(b) {
			return false
		}
		switch ua := a.(type) {
		case interface{ Unwrap() []error }:
			as, bs := ua.Unwrap(), b.(interface{ Unwrap() []error }).Unwrap()
			if len(as) != len(bs) {
				return false
			}
			for i := range as {
				if !sameError(as[i], bs[i]) {
					return false
				}
			}
			return true
		}
		na, nb := errors.Unwrap(a), errors.Unwrap(b)
		if na == nil && nb == nil {
			return a.Error() == b.Error()
		}
		a, b = na, nb
	}
}
