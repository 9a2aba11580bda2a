package unified

import (
	"sort"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// argSet reads an operation's arguments and, at the end, refuses those
// it did not read: an argument the operation does not know is an error,
// and one the format knows but the driver has no option for skips the
// test with its reason.
type argSet struct {
	args bson.Raw
	used map[string]bool
	err  error
}

func newArgs(args bson.Raw) *argSet { return &argSet{args: args, used: map[string]bool{}} }

func (a *argSet) fail(key, format string, args ...any) {
	if a.err == nil {
		a.err = invalid("arguments."+key, nil, format, args...)
	}
}

// value returns an argument, zero when absent.
func (a *argSet) value(key string) bson.RawValue {
	a.used[key] = true
	return a.args.Lookup(key)
}

func (a *argSet) has(key string) bool { return !a.args.Lookup(key).IsZero() }

// doc returns a document argument; required makes its absence an error.
func (a *argSet) doc(key string, required bool) bson.Raw {
	v := a.value(key)
	if v.IsZero() {
		if required {
			a.fail(key, "%s is required", key)
		}
		return nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		a.fail(key, "%s must be a document, got %s", key, show(v))
	}
	return d
}

// any returns an argument of any type as a value for the driver, nil when
// absent.
func (a *argSet) any(key string) any {
	v := a.value(key)
	if v.IsZero() {
		return nil
	}
	return goValue(v)
}

// goValue turns a value into one the driver's encoder takes at the top
// of an option: a document as bson.Raw, an array as bson.A, scalars as Go
// values.
func goValue(v bson.RawValue) any {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return v.Document()
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		arr := bson.A{}
		for _, x := range vals {
			arr = append(arr, goValue(x))
		}
		return arr
	case bson.TypeString:
		return v.StringValue()
	case bson.TypeInt32:
		return v.Int32()
	case bson.TypeInt64:
		return v.Int64()
	case bson.TypeDouble:
		return v.Double()
	case bson.TypeBoolean:
		return v.Boolean()
	}
	return v
}

func (a *argSet) boolPtr(key string) *bool {
	v := a.value(key)
	if v.IsZero() {
		return nil
	}
	b, ok := v.BooleanOK()
	if !ok {
		a.fail(key, "%s must be a boolean", key)
		return nil
	}
	return &b
}

func (a *argSet) int64Ptr(key string) *int64 {
	v := a.value(key)
	if v.IsZero() {
		return nil
	}
	n, ok := v.AsInt64OK()
	if !ok {
		a.fail(key, "%s must be an integer", key)
		return nil
	}
	return &n
}

func (a *argSet) int32Ptr(key string) *int32 {
	n := a.int64Ptr(key)
	if n == nil {
		return nil
	}
	m := int32(*n)
	return &m
}

func (a *argSet) msPtr(key string) *time.Duration {
	n := a.int64Ptr(key)
	if n == nil {
		return nil
	}
	d := time.Duration(*n) * time.Millisecond
	return &d
}

func (a *argSet) str(key string, required bool) string {
	v := a.value(key)
	if v.IsZero() {
		if required {
			a.fail(key, "%s is required", key)
		}
		return ""
	}
	s, ok := v.StringValueOK()
	if !ok {
		a.fail(key, "%s must be a string", key)
	}
	return s
}

// unsupportedArgs are arguments the format and the specifications
// define that the driver has no option for yet.
var unsupportedArgs = map[string]string{
	"rawData": "the driver has no rawData option (raw time-series buckets)",
}

// done reports the first malformed argument, then an argument the driver
// cannot pass (a skip), then one the operation does not know (an error).
func (a *argSet) done() error {
	if a.err != nil {
		return a.err
	}
	if a.args == nil {
		return nil
	}
	elems, err := a.args.Elements()
	if err != nil {
		return invalid("arguments", err, "malformed arguments")
	}
	var unknown []string
	for _, e := range elems {
		k := e.Key()
		if a.used[k] {
			continue
		}
		if reason, ok := unsupportedArgs[k]; ok {
			return skipf("argument %s: %s", k, reason)
		}
		unknown = append(unknown, k)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return invalid("arguments", nil, "unsupported argument(s) %s", strings.Join(unknown, ", "))
	}
	return nil
}

// skipArgs marks arguments the format defines whose driver option is
// missing: present, they skip the test with reason.
func (a *argSet) skipArgs(reason string, keys ...string) {
	for _, k := range keys {
		if a.has(k) && a.err == nil {
			a.err = skipf("argument %s: %s", k, reason)
		}
		a.used[k] = true
	}
}

func (a *argSet) setErr(err error) {
	if err != nil && a.err == nil {
		a.err = err
	}
}

// readConcern, writeConcern and readPreference read the Common Options
// given to one operation.
func (a *argSet) readConcern() *driver.ReadConcern {
	rc, err := readConcernOf(a.value("readConcern"), "arguments.readConcern")
	a.setErr(err)
	return rc
}

func (a *argSet) writeConcern() *driver.WriteConcern {
	wc, err := writeConcernOf(a.value("writeConcern"), "arguments.writeConcern")
	a.setErr(err)
	return wc
}

func (a *argSet) readPreference() *driver.ReadPreference {
	rp, err := readPreferenceOf(a.value("readPreference"), "arguments.readPreference")
	a.setErr(err)
	return rp
}
