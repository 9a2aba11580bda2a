package connstring

import (
	"reflect"
	"testing"
)

// Every option Parse knows is a field of URIOptions tagged with its
// canonical name, and every field is an option Parse sets and String
// writes back: an option added to the table without a field, or a field
// without an option, fails here.
func TestURIOptionsMatchOptionTable(t *testing.T) {
	fields := map[string]reflect.StructField{} // those not yet matched
	all := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[URIOptions]()) {
		tag := f.Tag.Get("uri")
		if tag == "" {
			t.Errorf("URIOptions.%s has no uri tag", f.Name)
			continue
		}
		if _, dup := fields[tag]; dup {
			t.Errorf("uri tag %q on two fields", tag)
		}
		fields[tag] = f
		all[tag] = f
	}
	// Aliases write into their replacement's field.
	aliases := map[string]string{"ssl": "tls", "wtimeout": "wTimeoutMS", "gssapiServiceName": "authMechanismProperties"}
	for _, o := range options {
		if target, ok := aliases[o.name]; ok {
			if _, ok := all[target]; !ok {
				t.Errorf("alias %s: no field for %s", o.name, target)
			}
			continue
		}
		if o.deprecatedFor != "" {
			t.Errorf("deprecated option %s: add it to aliases with the option it sets", o.name)
			continue
		}
		f, ok := fields[o.name]
		if !ok {
			t.Errorf("option %s has no URIOptions field tagged uri:%q", o.name, o.name)
			continue
		}
		delete(fields, o.name)
		if o.get == nil {
			t.Errorf("option %s: String cannot write it", o.name)
			continue
		}
		// String writes the field once it is set.
		var c ConnString
		v := reflect.ValueOf(&c.URIOptions).Elem().FieldByIndex(f.Index)
		v.Set(sampleValue(f.Type))
		if got := o.get(&c, true); len(got) == 0 {
			t.Errorf("option %s: field %s set but String writes nothing", o.name, f.Name)
		}
		if f.Type == reflect.TypeFor[Secret]() && !o.sensitive {
			t.Errorf("option %s holds a Secret but is not marked sensitive", o.name)
		}
	}
	for tag, f := range fields {
		t.Errorf("URIOptions.%s (uri:%q) is not an option Parse knows", f.Name, tag)
	}
}

// sampleValue returns a set value of typ.
func sampleValue(typ reflect.Type) reflect.Value {
	switch typ.Kind() {
	case reflect.Pointer:
		p := reflect.New(typ.Elem())
		p.Elem().Set(sampleValue(typ.Elem()))
		return p
	case reflect.String:
		return reflect.ValueOf("x").Convert(typ)
	case reflect.Slice:
		s := reflect.MakeSlice(typ, 1, 1)
		s.Index(0).Set(sampleValue(typ.Elem()))
		return s
	case reflect.Map:
		m := reflect.MakeMap(typ)
		m.SetMapIndex(reflect.ValueOf("K"), reflect.ValueOf("v"))
		return m
	case reflect.Struct:
		v := reflect.New(typ).Elem()
		v.Field(0).Set(sampleValue(v.Field(0).Type()))
		return v
	}
	return reflect.New(typ).Elem() // numbers and booleans: their zero is set behind a pointer
}
