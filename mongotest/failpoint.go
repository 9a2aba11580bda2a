package mongotest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// The fail points the server knows. failCommand is applied to every
// command; the other two are consulted by the handlers they concern.
const (
	FailCommand                    = "failCommand"
	OnPrimaryTransactionalWrite    = "onPrimaryTransactionalWrite"
	FailGetMoreAfterCursorCheckout = "failGetMoreAfterCursorCheckout"
)

var knownFailPoints = map[string]bool{
	FailCommand: true, OnPrimaryTransactionalWrite: true, FailGetMoreAfterCursorCheckout: true,
}

type failMode uint8

const (
	modeOff failMode = iota
	modeAlwaysOn
	modeTimes
	modeSkip
)

type failPoints struct {
	mu  sync.Mutex
	fps map[string]*failPoint
}

type failPoint struct {
	mode    failMode
	n       int64 // times left, or evaluations left to skip
	entered int64 // times the fail point fired
	data    bson.Raw
	action  *failAction // failCommand's parsed data
}

// failAction is failCommand's data, parsed once when it is configured and
// never changed afterwards, so it can be shared without locking.
type failAction struct {
	commands          map[string]bool
	closeConnection   bool
	blockConnection   bool
	blockTime         time.Duration
	errorCode         int32
	labels            []string
	labelsSet         bool
	writeConcernError bson.Raw
	appName           string
	hasAppName        bool
}

func configureFailPointCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	count, err := s.fps.configure(r.Body)
	if err != nil {
		return nil, err
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt64Element(dst, "count", count)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// SetFailPoint configures a fail point from Go, with the document
// configureFailPoint takes (bson.D, bson.M, bson.Raw or a struct):
//
//	s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"},
//		{Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
//		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 91}}}})
func (s *Server) SetFailPoint(cmd any) error {
	raw, ok := cmd.(bson.Raw)
	if !ok {
		b, err := bson.Marshal(cmd)
		if err != nil {
			return fmt.Errorf("mongotest: SetFailPoint: %w", err)
		}
		raw = b
	}
	if err := raw.Validate(); err != nil {
		return fmt.Errorf("mongotest: SetFailPoint: %w", err)
	}
	if _, err := s.fps.configure(raw); err != nil {
		return fmt.Errorf("mongotest: SetFailPoint: %w", err)
	}
	return nil
}

// ClearFailPoints turns every fail point off.
func (s *Server) ClearFailPoints() {
	s.fps.mu.Lock()
	s.fps.fps = nil
	s.fps.mu.Unlock()
}

// configure applies a configureFailPoint document and returns how many
// times the fail point had fired before.
func (f *failPoints) configure(cmd bson.Raw) (int64, error) {
	name, ok := cmd.Lookup("configureFailPoint").StringValueOK()
	if !ok {
		return 0, newError(mongoerr.TypeMismatch, "configureFailPoint must name a fail point with a string")
	}
	if !knownFailPoints[name] {
		return 0, newError(mongoerr.BadValue, "unknown fail point: %s (mongotest supports failCommand, onPrimaryTransactionalWrite and failGetMoreAfterCursorCheckout)", name)
	}
	fp := &failPoint{}
	mv, err := cmd.LookupErr("mode")
	if err != nil {
		return 0, newError(mongoerr.BadValue, "configureFailPoint requires mode")
	}
	switch mv.Type {
	case bson.TypeString:
		switch mv.StringValue() {
		case "alwaysOn":
			fp.mode = modeAlwaysOn
		case "off":
			fp.mode = modeOff
		default:
			return 0, newError(mongoerr.BadValue, "unknown fail point mode %q (want alwaysOn, off, {times: n} or {skip: n})", mv.StringValue())
		}
	case bson.TypeEmbeddedDocument:
		m := mv.Document()
		times, hasTimes, err := int64Field(m, "times")
		if err != nil {
			return 0, err
		}
		skip, hasSkip, err := int64Field(m, "skip")
		if err != nil {
			return 0, err
		}
		switch {
		case hasTimes && hasSkip:
			return 0, newError(mongoerr.BadValue, "fail point mode takes times or skip, not both")
		case hasTimes:
			if times < 0 {
				return 0, newError(mongoerr.BadValue, "mode.times must not be negative")
			}
			fp.mode, fp.n = modeTimes, times
			if times == 0 {
				fp.mode = modeOff
			}
		case hasSkip:
			if skip < 0 {
				return 0, newError(mongoerr.BadValue, "mode.skip must not be negative")
			}
			fp.mode, fp.n = modeSkip, skip
		default:
			return 0, newError(mongoerr.BadValue, "fail point mode document needs times or skip (activationProbability is not supported)")
		}
	default:
		return 0, newError(mongoerr.TypeMismatch, "mode is of type %s, expected a string or an object", mv.Type)
	}
	if dv, err := cmd.LookupErr("data"); err == nil {
		d, ok := dv.DocumentOK()
		if !ok {
			return 0, newError(mongoerr.TypeMismatch, "data is of type %s, expected an object", dv.Type)
		}
		fp.data = append(bson.Raw(nil), d...)
	}
	if name == FailCommand && fp.mode != modeOff {
		if fp.action, err = parseFailCommand(fp.data); err != nil {
			return 0, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var count int64
	if old := f.fps[name]; old != nil {
		count = old.entered
	}
	fp.entered = count
	if f.fps == nil {
		f.fps = map[string]*failPoint{}
	}
	f.fps[name] = fp
	return count, nil
}

func parseFailCommand(data bson.Raw) (*failAction, error) {
	a := &failAction{commands: map[string]bool{}}
	arr, ok := data.Lookup("failCommands").ArrayOK()
	if !ok {
		return nil, newError(mongoerr.BadValue, "failCommand requires data.failCommands, an array of command names")
	}
	it := arr.Iter()
	for it.Next() {
		name, ok := it.Value().StringValueOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "data.failCommands must hold strings")
		}
		// Keyed by the registered name, so that the name and its
		// aliases are one command, as in mongod.
		a.commands[commandName(name)] = true
	}
	var err error
	if a.closeConnection, err = boolField(data, "closeConnection"); err != nil {
		return nil, err
	}
	if a.blockConnection, err = boolField(data, "blockConnection"); err != nil {
		return nil, err
	}
	code, hasCode, err := int64Field(data, "errorCode")
	if err != nil {
		return nil, err
	}
	if hasCode {
		if code == 0 || code != int64(int32(code)) {
			return nil, newError(mongoerr.BadValue, "data.errorCode %d is not a valid error code", code)
		}
		a.errorCode = int32(code)
	}
	block, hasBlock, err := int64Field(data, "blockTimeMS")
	if err != nil {
		return nil, err
	}
	if a.blockConnection {
		if !hasBlock || block < 0 {
			return nil, newError(mongoerr.BadValue, "data.blockTimeMS, a non-negative number, is required with blockConnection")
		}
		a.blockTime = time.Duration(block) * time.Millisecond
	}
	if lv, err := data.LookupErr("errorLabels"); err == nil {
		labels, ok := lv.ArrayOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "data.errorLabels must be an array of strings")
		}
		a.labelsSet, a.labels = true, []string{}
		it := labels.Iter()
		for it.Next() {
			l, ok := it.Value().StringValueOK()
			if !ok {
				return nil, newError(mongoerr.TypeMismatch, "data.errorLabels must be an array of strings")
			}
			a.labels = append(a.labels, l)
		}
	}
	if wv, err := data.LookupErr("writeConcernError"); err == nil {
		w, ok := wv.DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "data.writeConcernError must be an object")
		}
		a.writeConcernError = w
	}
	if av, err := data.LookupErr("appName"); err == nil {
		name, ok := av.StringValueOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "data.appName must be a string")
		}
		a.appName, a.hasAppName = name, true
	}
	return a, nil
}

func boolField(doc bson.Raw, key string) (bool, error) {
	v, err := doc.LookupErr(key)
	if err != nil {
		return false, nil
	}
	b, ok := v.BooleanOK()
	if !ok {
		return false, newError(mongoerr.TypeMismatch, "data.%s must be a boolean", key)
	}
	return b, nil
}

// fire counts one evaluation of the fail point under its mode and
// reports whether it triggers. The caller holds f.mu.
func (fp *failPoint) fire() bool {
	switch fp.mode {
	case modeAlwaysOn:
	case modeTimes:
		fp.n--
		if fp.n <= 0 {
			fp.mode = modeOff
		}
	case modeSkip:
		if fp.n > 0 {
			fp.n--
			return false
		}
	default:
		return false
	}
	fp.entered++
	return true
}

// failCommand returns the failCommand action for r, or nil when the fail
// point is off, does not list the command, filters another appName, or
// its mode says not this time. configureFailPoint itself is never failed,
// so a test can always turn the fail point off.
func (f *failPoints) failCommand(c *Conn, r *Request) *failAction {
	f.mu.Lock()
	defer f.mu.Unlock()
	fp := f.fps[FailCommand]
	if fp == nil || fp.mode == modeOff || fp.action == nil || r.Name == "configureFailPoint" {
		return nil
	}
	a := fp.action
	if !a.commands[commandName(r.Name)] {
		return nil
	}
	if a.hasAppName && c.AppName() != a.appName {
		return nil
	}
	if !fp.fire() {
		return nil
	}
	return a
}

// failpointHit evaluates the named fail point for a handler that consults
// it (onPrimaryTransactionalWrite, failGetMoreAfterCursorCheckout): it
// reports whether the fail point fires now and returns its data document.
func (s *Server) failpointHit(name string) (bson.Raw, bool) {
	s.fps.mu.Lock()
	defer s.fps.mu.Unlock()
	fp := s.fps.fps[name]
	if fp == nil || !fp.fire() {
		return nil, false
	}
	return fp.data, true
}
