package connstring

import "strconv"

// Redacted replaces a secret wherever this package would otherwise show
// it: in String output, Error values and Warning values.
const Redacted = "xxxxx"

// Error is a connection string that cannot be used. Option names the
// option in its canonical spelling ("authSource"), the option key as
// written for an unknown one, or the part of the URI at fault: "scheme",
// "userinfo", "host", "database" or "uri". Value is the offending value,
// Redacted when it is or may contain a secret, "" when there is none.
type Error struct {
	Option string
	Value  string
	Reason string
}

// Error formats e as `connstring: <option> "<value>": <reason>`.
func (e *Error) Error() string {
	b := []byte("connstring: ")
	if e.Option != "" {
		b = append(b, e.Option...)
		if e.Value != "" {
			b = append(b, ' ')
			if e.Value == Redacted {
				b = append(b, "(value redacted)"...)
			} else {
				b = strconv.AppendQuote(b, e.Value)
			}
		}
		b = append(b, ": "...)
	}
	b = append(b, e.Reason...)
	return string(b)
}

// WarningKind classifies a Warning.
type WarningKind int

const (
	// UnknownOption: the key is not a URI option this driver knows; the
	// option is ignored.
	UnknownOption WarningKind = iota + 1
	// InvalidValue: the value is empty or not valid for the option; the
	// option is ignored. WithStrict turns these into errors, and a
	// security option (FailsClosed) never gives this warning: its
	// invalid value is always an error.
	InvalidValue
	// RepeatedOption: the key appeared more than once; the last valid
	// value is used.
	RepeatedOption
	// DeprecatedOption: the key is a deprecated alias (such as wtimeout
	// for wTimeoutMS); it is used unless its replacement is also present.
	DeprecatedOption
	// NonCanonicalValue: the value was accepted in a non-canonical
	// spelling (such as readPreference=SECONDARY) and normalised.
	NonCanonicalValue
)

// String returns the kind's name.
func (k WarningKind) String() string {
	switch k {
	case UnknownOption:
		return "unknown option"
	case InvalidValue:
		return "invalid value"
	case RepeatedOption:
		return "repeated option"
	case DeprecatedOption:
		return "deprecated option"
	case NonCanonicalValue:
		return "non-canonical value"
	}
	return "warning " + strconv.Itoa(int(k))
}

// Warning is something Parse ignored or corrected in a URI that is still
// usable. Option and Value follow the rules of Error: a secret's value is
// Redacted, and an unknown option's value is never included (it may be a
// misspelt password option). Message is a complete sentence for a log.
type Warning struct {
	Kind    WarningKind
	Option  string
	Value   string
	Message string
}

// String returns w.Message.
func (w Warning) String() string { return w.Message }
