package unified

import (
	"errors"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// ActualError is what a runner observed of an operation's error, in the
// terms expectedError asserts on. Err nil means the operation succeeded.
type ActualError struct {
	Err            error
	IsClientError  bool  // the error did not come from a server response
	IsTimeoutError bool  // the error is a timeoutMS expiry
	HasCode        bool  // the server response had a "code"
	Code           int32 // the server response's "code"
	CodeName       string
	Labels         []string
	Response       bson.Raw      // the server response, nil if none
	Result         bson.RawValue // a partial result (e.g. a bulk write's), zero if none
	// WriteErrors and WriteConcernErrors are a client bulk write's, keyed
	// by the failed write's index and in order.
	WriteErrors        map[int]bson.Raw
	WriteConcernErrors []bson.Raw
}

// MatchError applies an expectedError object to what a runner observed.
// Mismatches are *MismatchError values whose paths start with "expectError".
func MatchError(expected bson.Raw, actual *ActualError, opts *Options) error {
	const p = "expectError"
	if actual == nil || actual.Err == nil {
		return mismatch(p, docValue(expected), bson.RawValue{}, "the operation succeeded; want an error")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	m := matcher{ents: o.Entities}
	it := expected.Iter()
	for it.Next() {
		key, v := it.Key(), it.Value()
		path := p + "." + key
		switch key {
		case "isError":
			if b, ok := v.BooleanOK(); !ok || !b {
				return invalid(path, nil, "isError must be true")
			}
		case "isClientError", "isTimeoutError":
			want, ok := v.BooleanOK()
			if !ok {
				return invalid(path, nil, "%s takes a boolean", key)
			}
			got := actual.IsClientError
			if key == "isTimeoutError" {
				got = actual.IsTimeoutError
			}
			if got != want {
				return mismatch(path, v, bson.RawValue{}, "got %v, want %v (error: %v)", got, want, actual.Err)
			}
		case "errorContains":
			s, ok := v.StringValueOK()
			if !ok {
				return invalid(path, nil, "errorContains takes a string")
			}
			// "using a case-insensitive match"
			if !strings.Contains(strings.ToLower(actual.Err.Error()), strings.ToLower(s)) {
				return mismatch(path, v, bson.RawValue{}, "error %q does not contain %q", actual.Err.Error(), s)
			}
		case "errorCode":
			want, ok := v.AsInt64OK()
			if !ok {
				return invalid(path, nil, "errorCode takes an integer")
			}
			if !actual.HasCode || int64(actual.Code) != want {
				return mismatch(path, v, bson.RawValue{}, "got code %s, want %d (error: %v)", codeString(actual), want, actual.Err)
			}
		case "errorCodeName":
			s, ok := v.StringValueOK()
			if !ok {
				return invalid(path, nil, "errorCodeName takes a string")
			}
			// "using a case-insensitive comparison"
			if !strings.EqualFold(actual.CodeName, s) {
				return mismatch(path, v, bson.RawValue{}, "got codeName %q, want %q (error: %v)", actual.CodeName, s, actual.Err)
			}
		case "errorLabelsContain", "errorLabelsOmit":
			labels, err := stringArray(path, v)
			if err != nil {
				return err
			}
			for _, l := range labels {
				has := contains(actual.Labels, l)
				if key == "errorLabelsContain" && !has {
					return mismatch(path, v, bson.RawValue{}, "error labels %q lack %q", actual.Labels, l)
				}
				if key == "errorLabelsOmit" && has {
					return mismatch(path, v, bson.RawValue{}, "error labels %q include %q", actual.Labels, l)
				}
			}
		case "errorResponse":
			if actual.Response == nil {
				return mismatch(path, v, bson.RawValue{}, "the error has no server response (error: %v)", actual.Err)
			}
			if err := m.match(path, v, docValue(actual.Response), true, true); err != nil {
				return err
			}
		case "expectResult":
			if err := m.match(path, v, actual.Result, !actual.Result.IsZero(), true); err != nil {
				return err
			}
		case "writeErrors":
			d, ok := v.DocumentOK()
			if !ok {
				return invalid(path, nil, "writeErrors takes a document")
			}
			if err := m.matchWriteErrors(path, d, actual.WriteErrors); err != nil {
				return err
			}
		case "writeConcernErrors":
			if v.Type != bson.TypeArray {
				return invalid(path, nil, "writeConcernErrors takes an array")
			}
			vals, err := bson.Raw(v.Value).Values()
			if err != nil {
				return invalid(path, err, "writeConcernErrors is malformed")
			}
			if len(vals) != len(actual.WriteConcernErrors) {
				return mismatch(path, v, bson.RawValue{}, "got %d write concern errors, want %d", len(actual.WriteConcernErrors), len(vals))
			}
			for i, w := range vals {
				if err := m.match(join(path, strconv.Itoa(i)), w, docValue(actual.WriteConcernErrors[i]), true, true); err != nil {
					return err
				}
			}
		default:
			return invalid(path, nil, "unknown expectedError field %q", key)
		}
	}
	if err := it.Err(); err != nil {
		return invalid(p, err, "expectedError is malformed")
	}
	return nil
}

func (m *matcher) matchWriteErrors(path string, exp bson.Raw, got map[int]bson.Raw) error {
	it := exp.Iter()
	n := 0
	for it.Next() {
		n++
		idx, err := strconv.Atoi(it.Key())
		if err != nil {
			return invalid(join(path, it.Key()), err, "writeErrors keys are write indexes")
		}
		w, ok := got[idx]
		if !ok {
			return mismatch(join(path, it.Key()), it.Value(), bson.RawValue{}, "no write error for write %d", idx)
		}
		if err := m.match(join(path, it.Key()), it.Value(), docValue(w), true, true); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return invalid(path, err, "writeErrors is malformed")
	}
	if len(got) != n {
		return mismatch(path, docValue(exp), bson.RawValue{}, "got %d write errors, want %d", len(got), n)
	}
	return nil
}

func codeString(a *ActualError) string {
	if !a.HasCode {
		return "(none)"
	}
	return strconv.Itoa(int(a.Code))
}

func stringArray(path string, v bson.RawValue) ([]string, error) {
	if v.Type != bson.TypeArray {
		return nil, invalid(path, nil, "want an array of strings")
	}
	vals, err := bson.Raw(v.Value).Values()
	if err != nil {
		return nil, invalid(path, err, "array is malformed")
	}
	out := make([]string, 0, len(vals))
	for _, x := range vals {
		s, ok := x.StringValueOK()
		if !ok {
			return nil, invalid(path, nil, "want strings, got %s", show(x))
		}
		out = append(out, s)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IsMismatch reports whether err is (or wraps) a *MismatchError.
func IsMismatch(err error) bool {
	var me *MismatchError
	return errors.As(err, &me)
}
