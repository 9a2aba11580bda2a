package mongotest

import (
	"math"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// Clustered and time-series collections (create's clusteredIndex,
// timeseries and expireAfterSeconds). A clustered collection behaves as
// any other here; a time-series collection stores its measurements as
// documents, without buckets, so reads see them as mongod's view on the
// buckets shows them. What mongotest cannot do faithfully fails with
// NotImplemented.

// createSpecialOptions parses create's clusteredIndex, timeseries and
// expireAfterSeconds into opts, and appends the listed forms of the last
// two to extra (nil when there are none), in mongod's canonical form.
func createSpecialOptions(body bson.Raw, opts *store.CollectionOptions) (extra []byte, err error) {
	ci, hasCI := body.LookupErr("clusteredIndex")
	ts, hasTS := body.LookupErr("timeseries")
	exp, hasExp := body.LookupErr("expireAfterSeconds")
	var expire int64
	if hasExp == nil {
		if expire, err = expireAfterSecondsArg(exp); err != nil {
			return nil, err
		}
	}
	if hasTS == nil {
		if hasCI == nil {
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support the clusteredIndex option of create together with timeseries")
		}
		if opts.Capped {
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support capped time-series collections")
		}
		canon, err := timeseriesOptions(ts)
		if err != nil {
			return nil, err
		}
		opts.Timeseries = true
		extra = bson.AppendDocumentElement(extra, "timeseries", canon)
	}
	if hasExp == nil && hasCI != nil && hasTS != nil {
		return nil, newError(mongoerr.InvalidOptions, "'expireAfterSeconds' can be used only for clustered collections or timeseries collections")
	}
	if hasCI == nil {
		name, err := clusteredIndexOption(ci)
		if err != nil {
			return nil, err
		}
		if opts.Capped {
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support capped clustered collections")
		}
		opts.ClusteredIndex = name
	}
	if hasExp == nil {
		if expire >= math.MinInt32 && expire <= math.MaxInt32 {
			extra = bson.AppendInt32Element(extra, "expireAfterSeconds", int32(expire))
		} else {
			extra = bson.AppendInt64Element(extra, "expireAfterSeconds", expire)
		}
	}
	return extra, nil
}

// expireAfterSecondsArg reads create's expireAfterSeconds, a number of
// seconds from 0 to 2^31-1 as for a TTL index.
func expireAfterSecondsArg(v bson.RawValue) (int64, error) {
	var f float64
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		f, _ = v.AsFloat64OK()
	default:
		return 0, newError(mongoerr.TypeMismatch, "BSON field 'create.expireAfterSeconds' is the wrong type '%s', expected types '[long, int, decimal, double]'", typeName(v.Type))
	}
	switch {
	case f != f:
		return 0, newError(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be a number, not NaN")
	case f < 0:
		return 0, newError(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
	case f > math.MaxInt32:
		return 0, newError(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
	}
	return int64(f), nil
}

// clusteredIndexOption checks create's clusteredIndex as mongod 8.0 does
// for a replicated collection and returns the index name ("_id_" unless
// given).
func clusteredIndexOption(v bson.RawValue) (string, error) {
	switch v.Type {
	case bson.TypeBoolean:
		// {clusteredIndex: <bool>} is kept for mongod's internal
		// collections (time-series buckets).
		return "", newError(5979703, "The 'clusteredIndex' legacy format {clusteredIndex: <bool>} is only supported for specific internal collections and vice versa")
	case bson.TypeEmbeddedDocument:
	default:
		return "", newError(5979702, "'clusteredIndex' has to be a boolean or object.")
	}
	spec := v.Document()
	name := store.IDIndexName
	var key bson.Raw
	unique, hasUnique := false, false
	version := int64(2)
	it := spec.Iter()
	for it.Next() {
		f := it.Value()
		switch k := it.Key(); k {
		case "key":
			d, ok := f.DocumentOK()
			if !ok {
				return "", newError(mongoerr.TypeMismatch, "BSON field 'ClusteredUtil::parseClusteredInfo.key' is the wrong type '%s', expected type 'object'", typeName(f.Type))
			}
			key = d
		case "unique":
			b, ok := f.BooleanOK()
			if !ok {
				return "", newError(mongoerr.TypeMismatch, "BSON field 'ClusteredUtil::parseClusteredInfo.unique' is the wrong type '%s', expected type 'bool'", typeName(f.Type))
			}
			unique, hasUnique = b, true
		case "name":
			s, ok := f.StringValueOK()
			if !ok {
				return "", newError(mongoerr.TypeMismatch, "BSON field 'ClusteredUtil::parseClusteredInfo.name' is the wrong type '%s', expected type 'string'", typeName(f.Type))
			}
			name = s
		case "v":
			n, ok := f.AsInt64OK()
			if !ok {
				return "", newError(mongoerr.TypeMismatch, "BSON field 'ClusteredUtil::parseClusteredInfo.v' is the wrong type '%s', expected types '[long, int, decimal, double]'", typeName(f.Type))
			}
			version = n
		default:
			return "", newError(40415, "BSON field 'ClusteredUtil::parseClusteredInfo.%s' is an unknown field.", k)
		}
	}
	if key == nil {
		return "", newError(40414, "BSON field 'ClusteredUtil::parseClusteredInfo.key' is missing but a required field")
	}
	if !hasUnique {
		return "", newError(40414, "BSON field 'ClusteredUtil::parseClusteredInfo.unique' is missing but a required field")
	}
	if !unique {
		return "", newError(5979700, "The clusteredIndex option requires unique: true to be specified")
	}
	if !isIDKeyPattern(key) {
		return "", newError(mongoerr.InvalidIndexSpecificationOption, "The clusteredIndex option is only supported for key: {_id: 1}")
	}
	if version != 2 {
		return "", newError(5979704, "Invalid clusteredIndex specification %s; cannot create a clusteredIndex with v=%d", spec, version)
	}
	if name == "" {
		return "", newError(mongoerr.CannotCreateIndex, "The index name cannot be empty")
	}
	return name, nil
}

// isIDKeyPattern tells whether key is {_id: 1}, the number of any type.
func isIDKeyPattern(key bson.Raw) bool {
	elems, err := key.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return false
	}
	f, ok := elems[0].Value().AsFloat64OK()
	return ok && f == 1
}

// Granularity defaults, as mongod derives bucketMaxSpanSeconds and
// bucketRoundingSeconds from granularity.
var granularities = map[string]struct{ maxSpan, rounding int32 }{
	"seconds": {3600, 60},
	"minutes": {86400, 3600},
	"hours":   {2592000, 86400},
}

// timeseriesOptions checks create's timeseries option and returns it as
// listCollections shows it: timeField, metaField, granularity (when given
// or defaulted), bucketRoundingSeconds and bucketMaxSpanSeconds.
func timeseriesOptions(v bson.RawValue) (bson.Raw, error) {
	doc, ok := v.DocumentOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'create.timeseries' is the wrong type '%s', expected type 'object'", typeName(v.Type))
	}
	var timeField, metaField, granularity string
	var maxSpan, rounding int64
	hasMeta, hasMax, hasRound := false, false, false
	str := func(f bson.RawValue, k string) (string, error) {
		s, ok := f.StringValueOK()
		if !ok {
			return "", newError(mongoerr.TypeMismatch, "BSON field 'create.timeseries.%s' is the wrong type '%s', expected type 'string'", k, typeName(f.Type))
		}
		return s, nil
	}
	num := func(f bson.RawValue, k string) (int64, error) {
		n, ok := f.AsInt64OK()
		if !ok {
			return 0, newError(mongoerr.TypeMismatch, "BSON field 'create.timeseries.%s' is the wrong type '%s', expected type 'int'", k, typeName(f.Type))
		}
		if n < 1 || n > 31536000 {
			return 0, newError(mongoerr.BadValue, "BSON field 'create.timeseries.%s' value must be >= 1 and <= 31536000, actual value '%d'", k, n)
		}
		return n, nil
	}
	var err error
	it := doc.Iter()
	for it.Next() {
		f := it.Value()
		switch k := it.Key(); k {
		case "timeField":
			timeField, err = str(f, k)
		case "metaField":
			metaField, err = str(f, k)
			hasMeta = true
		case "granularity":
			if granularity, err = str(f, k); err == nil {
				if _, ok := granularities[granularity]; !ok {
					err = newError(mongoerr.BadValue, "Enumeration value '%s' for field 'create.timeseries.granularity' is not a valid value.", granularity)
				}
			}
		case "bucketMaxSpanSeconds":
			maxSpan, err = num(f, k)
			hasMax = true
		case "bucketRoundingSeconds":
			rounding, err = num(f, k)
			hasRound = true
		default:
			err = newError(40415, "BSON field 'create.timeseries.%s' is an unknown field.", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := doc.LookupErr("timeField"); err != nil {
		return nil, newError(40414, "BSON field 'create.timeseries.timeField' is missing but a required field")
	}
	for _, f := range []struct{ name, val string }{{"timeField", timeField}, {"metaField", metaField}} {
		if f.name == "metaField" && !hasMeta {
			continue
		}
		switch {
		case f.val == "":
			return nil, newError(mongoerr.InvalidOptions, "The '%s' option cannot be an empty string", f.name)
		case f.val[0] == '$':
			return nil, newError(mongoerr.InvalidOptions, "The '%s' option cannot start with '$'", f.name)
		case containsDot(f.val):
			return nil, newError(mongoerr.InvalidOptions, "The '%s' option cannot contain embedded '.'", f.name)
		}
	}
	if hasMeta && metaField == timeField {
		return nil, newError(mongoerr.InvalidOptions, "The 'metaField' option cannot be the same as 'timeField'")
	}
	if hasMeta && metaField == "_id" {
		return nil, newError(mongoerr.InvalidOptions, "The 'metaField' option cannot be '_id'")
	}
	if granularity != "" {
		g := granularities[granularity]
		if hasMax && maxSpan != int64(g.maxSpan) {
			return nil, newError(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than the default of %d for the provided granularity", g.maxSpan)
		}
		if hasRound && rounding != int64(g.rounding) {
			return nil, newError(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' is not configurable to a value other than the default of %d for the provided granularity", g.rounding)
		}
		maxSpan, rounding = int64(g.maxSpan), int64(g.rounding)
	} else {
		if hasMax != hasRound {
			return nil, newError(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other")
		}
		if rounding != maxSpan {
			return nil, newError(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'")
		}
		if !hasMax {
			granularity = "seconds"
			g := granularities[granularity]
			maxSpan, rounding = int64(g.maxSpan), int64(g.rounding)
		}
	}
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "timeField", timeField)
	if hasMeta {
		b = bson.AppendStringElement(b, "metaField", metaField)
	}
	if granularity != "" {
		b = bson.AppendStringElement(b, "granularity", granularity)
	}
	b = bson.AppendInt32Element(b, "bucketRoundingSeconds", int32(rounding))
	b = bson.AppendInt32Element(b, "bucketMaxSpanSeconds", int32(maxSpan))
	b, _ = bson.AppendDocumentEnd(b, start)
	return b, nil
}

func containsDot(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return true
		}
	}
	return false
}

// timeseriesField returns a time-series collection's option field
// ("timeField", "metaField"), or "" when c is not one or has none.
func timeseriesField(c *store.Collection, field string) string {
	if c == nil {
		return ""
	}
	o := c.Options()
	if !o.Timeseries {
		return ""
	}
	s, _ := o.Extra.Lookup("timeseries", field).StringValueOK()
	return s
}

// checkTimeseriesInsert refuses a measurement whose time field is missing
// or not a date, as mongod does (a write error, BadValue).
func checkTimeseriesInsert(timeField string, doc bson.Raw) error {
	if timeField == "" {
		return nil
	}
	if v, err := doc.LookupErr(timeField); err != nil || v.Type != bson.TypeDateTime {
		return newError(mongoerr.BadValue, "'%s' must be present and contain a valid BSON UTC datetime value", timeField)
	}
	return nil
}

// errTimeseriesUnsupported fails what mongotest does not do on a
// time-series collection (updates, deletes, indexes, $merge into one):
// mongod rewrites those onto the buckets, with rules of its own.
func errTimeseriesUnsupported(c *store.Collection, what string) error {
	if c == nil || !c.Options().Timeseries {
		return nil
	}
	return newError(mongoerr.NotImplemented, "mongotest does not support %s on the time-series collection %s", what, c.Namespace())
}

// timeseriesIndexes lists a time-series collection's indexes as mongod
// 8.0 does: the {metaField: 1, timeField: 1} index it creates when the
// collection has a metaField, and no _id index.
func timeseriesIndexes(c *store.Collection) []bson.Raw {
	meta := timeseriesField(c, "metaField")
	if meta == "" {
		return nil
	}
	timeField := timeseriesField(c, "timeField")
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "v", 2)
	ks, k := bson.AppendDocumentElementStart(b, "key")
	k = bson.AppendInt32Element(k, meta, 1)
	k = bson.AppendInt32Element(k, timeField, 1)
	b, _ = bson.AppendDocumentEnd(k, ks)
	b = bson.AppendStringElement(b, "name", meta+"_1_"+timeField+"_1")
	b, _ = bson.AppendDocumentEnd(b, start)
	return []bson.Raw{b}
}
