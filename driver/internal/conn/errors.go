package conn

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// ErrClosed is returned by every method of a Conn that has been closed,
// whether by Close or because an earlier error made it unusable.
var ErrClosed = errors.New("conn: connection is closed")

// NetworkError is a failure to reach the server or to exchange a message
// with it: dial, TLS, read, write, or a reply that could not be parsed.
// The connection it happened on is closed.
//
// The message names the step and the cause only ("conn: read: i/o
// timeout"): the address and the connection id are fields, which the
// events carrying the error (serverHost, driverConnectionId) and the
// driver's public errors state once each.
type NetworkError struct {
	Op      string // "dial", "tls", "write", "read", "decode", "handshake"
	Address string
	ConnID  int64 // the driver's id of the connection
	Err     error
	timeout bool
	// Labels are the error labels the driver attaches: SystemOverloadedError
	// and RetryableError on an error while connecting or during the
	// initial hello, as CMAP's backpressure rule requires (see Dial).
	Labels []string
}

// Overload labels, which CMAP asks the pool to add to a network error or
// timeout while establishing a connection (before authentication).
const (
	LabelSystemOverloaded = "SystemOverloadedError"
	LabelRetryable        = "RetryableError"
)

// HasLabel reports whether the driver attached label to the error.
func (e *NetworkError) HasLabel(label string) bool {
	for _, l := range e.Labels {
		if l == label {
			return true
		}
	}
	return false
}

func (e *NetworkError) Error() string {
	var b strings.Builder
	b.WriteString("conn: ")
	b.WriteString(e.Op)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *NetworkError) Unwrap() error { return e.Err }

// NetworkError reports true, for event.IsNetworkError.
func (e *NetworkError) NetworkError() bool { return true }

// Timeout reports whether the error came from a deadline: the context's,
// connectTimeoutMS or socketTimeoutMS.
func (e *NetworkError) Timeout() bool { return e.timeout }

// HandshakeError is a failed handshake or authentication: the server
// answered the hello but refused it, or authentication failed, including
// by a network error, which Err then holds (a *NetworkError during the
// hello itself is returned bare). Err is the cause, e.g. a *CommandError,
// an *auth.Error or a *NetworkError. Like NetworkError's, its message
// leaves the address and the connection id to the fields.
type HandshakeError struct {
	Address string
	ConnID  int64
	Stage   string // "hello" or "auth"
	Err     error
	// ServiceID is the serviceId of the hello reply (load-balanced mode)
	// when authentication failed after it: the load-balancers
	// specification has such errors clear that service's connections.
	ServiceID *bson.ObjectID
}

func (e *HandshakeError) Error() string {
	msg := "<nil>"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	if strings.HasPrefix(msg, e.Stage+": ") {
		// An *auth.Error names its stage itself ("auth: SCRAM-SHA-256
		// for user ...").
		return "conn: " + msg
	}
	return "conn: " + e.Stage + ": " + msg
}

func (e *HandshakeError) Unwrap() error { return e.Err }

// CommandError is a reply with ok other than 1: the server ran the command
// and refused it.
type CommandError struct {
	Code     int32
	CodeName string
	Message  string // the server's errmsg
	// Labels are the errorLabels, e.g. "TransientTransactionError".
	Labels []string
	// WriteConcernError is set when the reply also carried one.
	WriteConcernError *WriteConcernError
	// Raw is the whole reply, for fields this type does not lift out. It
	// is a copy and outlives the connection's buffers.
	Raw bson.Raw
}

// ServerErrorCode returns Code, or the write concern error's code when
// the reply had none, for event.ServerErrorCode.
func (e *CommandError) ServerErrorCode() int32 {
	if e.Code == 0 && e.WriteConcernError != nil {
		return e.WriteConcernError.Code
	}
	return e.Code
}

func (e *CommandError) Error() string {
	var b strings.Builder
	b.WriteString("server error")
	if e.Code != 0 || e.CodeName != "" {
		fmt.Fprintf(&b, " %d", e.Code)
		if e.CodeName != "" {
			fmt.Fprintf(&b, " (%s)", e.CodeName)
		}
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if len(e.Labels) > 0 {
		fmt.Fprintf(&b, " [labels %s]", strings.Join(e.Labels, ", "))
	}
	return b.String()
}

// HasLabel reports whether the server attached label to the error.
func (e *CommandError) HasLabel(label string) bool {
	for _, l := range e.Labels {
		if l == label {
			return true
		}
	}
	return false
}

// WriteConcernError is the writeConcernError of a reply: the write was
// applied but the requested acknowledgement was not obtained.
type WriteConcernError struct {
	Code     int32
	CodeName string
	Message  string
	Details  bson.Raw // errInfo, copied
	Labels   []string // the reply's errorLabels
}

// ServerErrorCode returns Code, for event.ServerErrorCode.
func (e *WriteConcernError) ServerErrorCode() int32 { return e.Code }

func (e *WriteConcernError) Error() string {
	s := fmt.Sprintf("write concern error %d", e.Code)
	if e.CodeName != "" {
		s += " (" + e.CodeName + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ReplyError inspects a command reply. It returns a *CommandError when ok
// is not 1 (a missing or non-numeric ok counts as a failure, as the server
// never sends one), a *WriteConcernError when ok is 1 but the reply carries
// a writeConcernError, and nil otherwise. The errors copy what they keep,
// so body may be released afterwards.
func ReplyError(body bson.Raw) error {
	okVal, err := body.LookupErr("ok")
	ok := false
	if err == nil {
		if f, isNum := okVal.AsFloat64OK(); isNum {
			ok = f == 1
		} else if b, isBool := okVal.BooleanOK(); isBool {
			ok = b
		}
	}
	var wce *WriteConcernError
	if v, err := body.LookupErr("writeConcernError"); err == nil {
		if d, isDoc := v.DocumentOK(); isDoc {
			wce = parseWCE(d)
		}
	}
	labels := errorLabels(body)
	if ok {
		if wce != nil {
			wce.Labels = labels
			return wce
		}
		return nil
	}
	ce := &CommandError{Labels: labels, WriteConcernError: wce, Raw: append(bson.Raw(nil), body...)}
	badCode := ""
	if v, isNum := body.Lookup("code").AsInt64OK(); isNum {
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			ce.Code = int32(v)
		} else {
			// Not a server error code: say so rather than cut it down to
			// another code.
			badCode = "reply has an error code out of range: " + strconv.FormatInt(v, 10)
		}
	}
	ce.CodeName, _ = body.Lookup("codeName").StringValueOK()
	ce.Message, _ = body.Lookup("errmsg").StringValueOK()
	if badCode != "" {
		if ce.Message != "" {
			badCode += "; " + ce.Message
		}
		ce.Message = badCode
	}
	if ce.Message == "" && ce.Code == 0 {
		if okVal.Type == 0 {
			ce.Message = "reply has no ok field"
		} else if _, isNum := okVal.AsFloat64OK(); !isNum && okVal.Type != bson.TypeBoolean {
			ce.Message = "reply has an ok field of type " + okVal.Type.String()
		}
	}
	return ce
}

func parseWCE(d bson.Raw) *WriteConcernError {
	w := &WriteConcernError{}
	if v, ok := d.Lookup("code").AsInt64OK(); ok {
		w.Code = int32(v)
	}
	w.CodeName, _ = d.Lookup("codeName").StringValueOK()
	w.Message, _ = d.Lookup("errmsg").StringValueOK()
	if info, ok := d.Lookup("errInfo").DocumentOK(); ok {
		w.Details = append(bson.Raw(nil), info...)
	}
	return w
}

func errorLabels(body bson.Raw) []string {
	arr, ok := body.Lookup("errorLabels").ArrayOK()
	if !ok {
		return nil
	}
	var out []string
	it := arr.Iter()
	for it.Next() {
		if s, ok := it.Value().StringValueOK(); ok {
			out = append(out, s)
		}
	}
	return out
}
