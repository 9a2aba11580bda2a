package unified

import (
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// Common Options: readConcern, readPreference and writeConcern documents
// as the driver's types.

func readConcernOf(v bson.RawValue, path string) (*driver.ReadConcern, error) {
	if v.IsZero() {
		return nil, nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		return nil, invalid(path, nil, "readConcern must be a document")
	}
	if err := checkKeys(d, "level"); err != nil {
		return nil, invalid(path, err, "malformed readConcern")
	}
	level, _ := d.Lookup("level").StringValueOK()
	return &driver.ReadConcern{Level: level}, nil
}

func readPreferenceOf(v bson.RawValue, path string) (*driver.ReadPreference, error) {
	if v.IsZero() {
		return nil, nil
	}
	o, err := runCommandReadPref(v)
	if err != nil {
		return nil, err
	}
	return &driver.ReadPreference{Mode: o.ReadPreference, Tags: o.ReadPreferenceTags, MaxStaleness: o.MaxStaleness}, nil
}

func writeConcernOf(v bson.RawValue, path string) (*driver.WriteConcern, error) {
	if v.IsZero() {
		return nil, nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		return nil, invalid(path, nil, "writeConcern must be a document")
	}
	if err := checkKeys(d, "w", "journal", "wtimeoutMS"); err != nil {
		return nil, invalid(path, err, "malformed writeConcern")
	}
	wc := &driver.WriteConcern{}
	switch w := d.Lookup("w"); {
	case w.IsZero():
	case w.Type == bson.TypeString:
		wc.W = &driver.W{Tag: w.StringValue()}
	default:
		n, ok := w.AsInt64OK()
		if !ok {
			return nil, invalid(path+".w", nil, "w must be a number or a string")
		}
		wc.W = &driver.W{Nodes: int(n)}
	}
	if j, ok := d.Lookup("journal").BooleanOK(); ok {
		wc.Journal = &j
	}
	if ms, ok := d.Lookup("wtimeoutMS").AsInt64OK(); ok {
		wc.WTimeout = time.Duration(ms) * time.Millisecond
	}
	return wc, nil
}

// timeoutOf reads a timeoutMS option (nil when absent).
func timeoutOf(opts bson.Raw, path string) (*time.Duration, error) {
	v := opts.Lookup("timeoutMS")
	if v.IsZero() {
		return nil, nil
	}
	n, ok := v.AsInt64OK()
	if !ok {
		return nil, invalid(path+".timeoutMS", nil, "timeoutMS must be an integer, got %s", show(v))
	}
	d := time.Duration(n) * time.Millisecond
	return &d, nil
}

// concernsOf reads a collectionOrDatabaseOptions document (timeoutOf
// reads its timeoutMS).
func concernsOf(opts bson.Raw, path string) (rc *driver.ReadConcern, rp *driver.ReadPreference, wc *driver.WriteConcern, err error) {
	if opts == nil {
		return nil, nil, nil, nil
	}
	if rc, err = readConcernOf(opts.Lookup("readConcern"), path+".readConcern"); err != nil {
		return
	}
	if rp, err = readPreferenceOf(opts.Lookup("readPreference"), path+".readPreference"); err != nil {
		return
	}
	wc, err = writeConcernOf(opts.Lookup("writeConcern"), path+".writeConcern")
	return
}
