package driver

import (
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// ReadConcern is the isolation a read asks for ("local", "majority",
// "available", "linearizable", "snapshot"). The zero value, like a nil
// *ReadConcern, sends none: the server's default applies.
type ReadConcern struct {
	Level string
}

// The read concern levels.
const (
	ReadConcernLocal        = "local"
	ReadConcernMajority     = "majority"
	ReadConcernAvailable    = "available"
	ReadConcernLinearizable = "linearizable"
	ReadConcernSnapshot     = "snapshot"
)

// encode returns the readConcern document, or nil for the server default.
func (rc *ReadConcern) encode() bson.Raw {
	if rc == nil || rc.Level == "" {
		return nil
	}
	st, b := bson.AppendDocumentStart(make([]byte, 0, 32))
	b = bson.AppendStringElement(b, "level", rc.Level)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

// WriteConcern is the acknowledgement a write asks for. The zero value,
// like a nil *WriteConcern, sends none: the server's default applies.
type WriteConcern struct {
	// W is the number of members (Nodes), or a tag set name or
	// "majority" (Tag), that must acknowledge; nil leaves it to the
	// server. W{Nodes: 0} is an unacknowledged write, sent without
	// waiting for a reply.
	W *W
	// Journal (j) asks for the write to be in the on-disk journal.
	Journal *bool
	// WTimeout (wtimeout) bounds the wait for the acknowledgements on the
	// server; 0 means none. Prefer the client's Timeout.
	WTimeout time.Duration
}

// Majority is the write concern {w: "majority"}.
func Majority() *WriteConcern { return &WriteConcern{W: &W{Tag: "majority"}} }

// Unacknowledged is the write concern {w: 0}. An unacknowledged write
// never carries a session id (the driver-sessions specification): outside
// an explicit session it takes no implicit session, and in an explicit
// session it is a *SessionError (ErrSessionUnacknowledged), before
// anything is sent. A causally consistent session's later operations are
// not causally consistent with it (no operationTime comes back).
func Unacknowledged() *WriteConcern { return &WriteConcern{W: &W{}} }

// Acknowledged tells whether a write under wc waits for a reply: every
// write concern but {w: 0} without j:true.
func (wc *WriteConcern) Acknowledged() bool {
	if wc == nil || wc.W == nil {
		return true
	}
	return wc.W.Tag != "" || wc.W.Nodes != 0 || (wc.Journal != nil && *wc.Journal)
}

// validate checks wc as the read-write-concern specification asks:
// {w: 0, j: true} is refused, and so are negative values.
func (wc *WriteConcern) validate() error {
	if wc == nil {
		return nil
	}
	if wc.W != nil && wc.W.Tag == "" && wc.W.Nodes < 0 {
		return &ArgumentError{Argument: "WriteConcern.W", Reason: fmt.Sprintf("w must not be negative, got %d", wc.W.Nodes)}
	}
	if wc.WTimeout < 0 {
		return &ArgumentError{Argument: "WriteConcern.WTimeout", Reason: "wtimeout must not be negative"}
	}
	if wc.W != nil && wc.W.Tag == "" && wc.W.Nodes == 0 && wc.Journal != nil && *wc.Journal {
		return &ArgumentError{Argument: "WriteConcern", Reason: "w: 0 with j: true is invalid: an unacknowledged write cannot be journaled"}
	}
	return nil
}

// encode returns the writeConcern document, or nil for the server default.
func (wc *WriteConcern) encode() bson.Raw {
	if wc == nil || (wc.W == nil && wc.Journal == nil && wc.WTimeout == 0) {
		return nil
	}
	st, b := bson.AppendDocumentStart(make([]byte, 0, 48))
	if wc.W != nil {
		if wc.W.Tag != "" {
			b = bson.AppendStringElement(b, "w", wc.W.Tag)
		} else {
			b = bson.AppendInt32Element(b, "w", int32(wc.W.Nodes))
		}
	}
	if wc.WTimeout > 0 {
		b = bson.AppendInt64Element(b, "wtimeout", wc.WTimeout.Milliseconds())
	}
	if wc.Journal != nil {
		b = bson.AppendBooleanElement(b, "j", *wc.Journal)
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

// ReadPreference chooses the servers a read may use.
type ReadPreference struct {
	// Mode is "primary" (the default, also when ""), "primaryPreferred",
	// "secondary", "secondaryPreferred" or "nearest".
	Mode string
	// Tags are the tag sets tried in order; not allowed with primary.
	Tags []map[string]string
	// MaxStaleness excludes secondaries staler than this: a whole number
	// of seconds, at least 90s. nil means no maximum; 0 is refused.
	MaxStaleness *time.Duration
}

// The read preference modes.
const (
	Primary            = "primary"
	PrimaryPreferred   = "primaryPreferred"
	Secondary          = "secondary"
	SecondaryPreferred = "secondaryPreferred"
	Nearest            = "nearest"
)

// selection converts rp, naming the field at fault in an *ArgumentError.
func (rp *ReadPreference) selection(argument string) (selection.ReadPref, error) {
	r, err := readPref(rp.Mode, rp.Tags, rp.MaxStaleness)
	if err != nil {
		if oe, ok := err.(*OptionError); ok {
			field := oe.Field
			if field == "" {
				field = "Mode"
			}
			switch field {
			case "ReadPreference":
				field = "Mode"
			case "ReadPreferenceTags":
				field = "Tags"
			}
			return r, &ArgumentError{Argument: argument + "." + field, Reason: oe.Reason, Err: oe.Err}
		}
		return r, err
	}
	return r, nil
}

// concerns is what a client, database or collection passes down: the
// encoded read and write concerns and the read preference.
type concerns struct {
	rc       bson.Raw // nil: none
	wc       bson.Raw // nil: none
	wcAck    bool     // the write concern waits for a reply
	readPref selection.ReadPref
	// timeout is the inherited timeoutMS (client-side operations
	// timeout): nil for the client's, 0 for no limit.
	timeout *time.Duration
}

// withTimeout returns c with timeoutMS d (nil keeps c's); a negative d
// is an *ArgumentError naming arg.
func (c concerns) withTimeout(arg string, d *time.Duration) (concerns, error) {
	if d == nil {
		return c, nil
	}
	if *d < 0 {
		return c, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("timeoutMS must not be negative, got %v", *d)}
	}
	v := *d
	c.timeout = &v
	return c, nil
}

// with returns c overridden by the given settings; a nil argument keeps
// c's. arg prefixes the names in errors ("DatabaseOptions").
func (c concerns) with(arg string, rc *ReadConcern, wc *WriteConcern, rp *ReadPreference) (concerns, error) {
	if rc != nil {
		c.rc = rc.encode()
	}
	if wc != nil {
		if err := wc.validate(); err != nil {
			if ae, ok := err.(*ArgumentError); ok {
				ae.Argument = arg + "." + ae.Argument
			}
			return c, err
		}
		c.wc = wc.encode()
		c.wcAck = wc.Acknowledged()
	}
	if rp != nil {
		r, err := rp.selection(arg + ".ReadPreference")
		if err != nil {
			return c, err
		}
		c.readPref = r
	}
	return c, nil
}

// forOperation returns c overridden by one operation's own settings, as
// with does, except for a read concern: an operation's server default
// (ReadConcern{}) under a client, database or collection that has a read
// concern of its own is sent as readConcern: {}, overriding theirs (the
// read-write-concern specification, "Read Commands": the driver MUST
// include the command's read concern then, the server default included).
func (c concerns) forOperation(arg string, rc *ReadConcern, wc *WriteConcern, rp *ReadPreference) (concerns, error) {
	inherited := c.rc != nil
	c, err := c.with(arg, rc, wc, rp)
	if err == nil && rc != nil && c.rc == nil && inherited {
		c.rc = serverDefaultReadConcern
	}
	return c, err
}

// serverDefaultReadConcern is the empty readConcern document.
var serverDefaultReadConcern = bson.Raw{5, 0, 0, 0, 0}
