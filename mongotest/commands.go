package mongotest

import (
	"context"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Request is one decoded command, as a handler sees it. It is valid only
// while the handler runs: Body aliases the connection's buffers, so a
// handler copies whatever it keeps.
type Request struct {
	// DB is the command's database, from $db (or the OP_QUERY namespace).
	DB string
	// Name is the command name: the body's first key, as sent.
	Name string
	// Body is the command document, $db included, with every OP_MSG
	// document sequence merged in as an array field of the same name
	// (an insert's "documents"), as mongod presents it.
	Body bson.Raw
	// Conn is the connection the command arrived on.
	Conn *Conn
	// ExhaustAllowed is the OP_MSG exhaustAllowed flag.
	ExhaustAllowed bool
	// Compressor is the compressor the request arrived with ("snappy",
	// "zlib", "zstd", "noop"), or "" when it was not compressed.
	Compressor string

	parseErr    error // a problem with the message a reply can report
	legacyQuery bool  // the request came as OP_QUERY
	// more is set by a handler whose reply may be followed by another
	// without a request (exhaust); streaming is set while the server
	// produces those follow-ups.
	more      bool
	streaming bool
	// ownReply is set by a handler whose reply is a buffer it just made
	// for this request and keeps no hold on (getMore's): appendOK may then
	// finish a big one in place instead of copying it.
	ownReply bool
	// scatterOK is set by handleMsg when the reply may be written as
	// pieces (scatter.go): it will be neither compressed nor checksummed.
	// A handler may then leave a big cursor batch in batch instead of
	// returning its reply.
	scatterOK bool
	batch     *cursorBatch
	// helloTV is the topologyVersion counter of the last streamed hello.
	helloTV int64
	// firstHello is set on the connection's first hello.
	firstHello bool
	// opTime is the cluster time of the command's write, zero for a
	// command that did not write.
	opTime bson.Timestamp
	// snap is the time a snapshot read reads at (snapshot.go).
	snap *snapRead
}

// HandlerFunc answers one command. It returns the reply without ok: the
// server appends ok:1, or, when the error is non-nil, replies
// {ok:0, errmsg, code, codeName, errorLabels} from the error (a
// *mongoerr.Error keeps its code; any other error becomes InternalError).
// When both are non-nil, the reply's fields are added to the error reply
// (e.g. errInfo). A reply that carries its own ok is sent as it is.
type HandlerFunc func(ctx context.Context, s *Server, r *Request) (bson.Raw, error)

type cmdFlags uint8

const (
	// cmdNoAuth runs before the connection has authenticated.
	cmdNoAuth cmdFlags = 1 << iota
	// cmdAdminOnly refuses to run outside the admin database.
	cmdAdminOnly
	// cmdSensitive keeps the body out of the command log, as the command
	// monitoring specification redacts it.
	cmdSensitive
	// cmdUser marks a handler set with Server.Handle; its replies are
	// validated before they are sent.
	cmdUser
	// cmdHello is hello or legacy hello: the connection's client metadata
	// is taken from it before the failCommand fail point is consulted,
	// so an appName filter matches the handshake's own hello, as in
	// mongod.
	cmdHello
	// cmdMongodOnly does not exist on mongos (the replSet* commands):
	// there it fails with CommandNotFound, as mongos registers no such
	// command.
	cmdMongodOnly
	// cmdMongosOnly exists on mongos only (isdbgrid, listShards).
	cmdMongosOnly
	// cmdUnchecked marks a handler set with Server.HandleUnchecked: its
	// replies go out as they are, valid BSON or not.
	cmdUnchecked
)

// availableOn tells whether a command with these flags exists on a server
// in role; commands set with Server.Handle always do.
func (f cmdFlags) availableOn(role Role) bool {
	if f&cmdUser != 0 {
		return true
	}
	if role.isRouter() {
		return f&cmdMongodOnly == 0
	}
	return f&cmdMongosOnly == 0
}

type command struct {
	h     HandlerFunc
	flags cmdFlags
}

// sensitive are the commands whose bodies the command log never keeps.
var sensitive = map[string]bool{
	"authenticate": true, "saslStart": true, "saslContinue": true, "getnonce": true,
	"createUser": true, "updateUser": true, "copydbgetnonce": true, "copydbsaslstart": true, "copydb": true,
}

// Code names mongoerr does not list.
var extraCodeNames = map[int32]string{
	17:    "ProtocolError",
	186:   "ClientMetadataCannotBeMutated",
	322:   "APIVersionError",
	334:   "MechanismUnavailable",
	352:   "UnsupportedOpQueryCommand",
	10334: "BSONObjectTooLarge",
	11:    "UserNotFound",
	51003: "Location51003",

	codeSearchNotEnabled:   "SearchNotEnabled",
	codeAPIVersionRequired: "Location498870",
	codeAPIStrictError:     "APIStrictError",
	codeAPIParamsNoVersion: "Location4886600",

	codeCappedPositionLow: "CappedPositionLost",
	codeCursorInUse:       "CursorInUse",
	codeQueryPlanKilled:   "QueryPlanKilled",

	codeIngressRateLimited: "IngressRequestRateLimitExceeded",
}

// newError builds a MongoDB error with the code's name.
func newError(code int32, format string, args ...any) *mongoerr.Error {
	e := mongoerr.New(code, format, args...)
	if n, ok := extraCodeNames[code]; ok {
		e.CodeName = n
	}
	return e
}

// The error codes the retryable writes specification lists; mongod 4.4+
// labels errors with these codes RetryableWriteError on retryable writes.
var retryableCodes = map[int32]bool{
	11600: true, 11602: true, 10107: true, 13435: true, 13436: true, 189: true,
	91: true, 7: true, 6: true, 89: true, 9001: true, 262: true,
}

// stateChangeCodes are the "not primary" errors (mongod's NotPrimaryError
// category); a replica-set member adds its topologyVersion to replies
// carrying them (a standalone or a mongos does not). The
// shutdown errors (91, 11600) carry it only while mongod is in quiesce
// mode, which this server never is: so a driver cannot take a shutdown
// error, injected by a fail point or not, as stale, and clears its pool.
var stateChangeCodes = map[int32]bool{
	10107: true, 13435: true, 13436: true, 11602: true, 189: true,
}

// isRetryableWrite tells whether mongod would label a retryable error on
// r: a write with txnNumber outside a transaction, or a transaction's
// commit or abort.
func isRetryableWrite(r *Request) bool {
	switch r.Name {
	case "insert", "update", "delete", "findAndModify", "findandmodify", "bulkWrite":
		if _, err := r.Body.LookupErr("txnNumber"); err != nil {
			return false
		}
		_, err := r.Body.LookupErr("autocommit")
		return err != nil
	case "commitTransaction", "abortTransaction":
		return true
	}
	return false
}

// dispatch runs one request and returns the reply body, with ok, in the
// connection's scratch buffer. An error closes the connection (a fail
// point, or the connection ending while the command waited).
func (c *Conn) dispatch(ctx context.Context, r *Request) ([]byte, error) {
	out, _, err := c.dispatchScatter(ctx, r, false)
	return out, err
}

// dispatchScatter is dispatch that, with scatter set, may return a big
// cursor batch's reply as pieces for writeScatter (sc non-nil, out nil)
// rather than copied into one buffer: only when no fail point applied to
// the command, it succeeded, and its reply does not start an exhaust
// stream. Otherwise the reply is the same bytes, contiguous.
func (c *Conn) dispatchScatter(ctx context.Context, r *Request, scatter bool) (out []byte, sc *scatterReply, err error) {
	s := c.s
	r.more, r.ownReply, r.scatterOK, r.batch, r.opTime, r.snap = false, false, scatter, nil, bson.Timestamp{}, nil
	if !r.streaming {
		s.log.add(c.id, r)
		s.ops.count(r)
	}
	res, herr, fx, err := c.execute(ctx, r)
	b := r.batch
	r.batch = nil
	if err != nil {
		return nil, nil, err
	}
	if b != nil && herr == nil {
		if fx == nil && !(r.more && r.ExhaustAllowed) {
			return nil, c.scatter(r, b), nil
		}
		res, r.ownReply = b.appendReply(), true
	}
	if herr != nil {
		out = c.appendError(c.body[:0], r, mongoerr.As(herr), res)
	} else {
		out = c.appendOK(c.body[:0], r, res, fx)
	}
	if cap(out) <= maxKeptBuffer {
		c.body = out[:0]
	}
	return out, nil, nil
}

// execute finds the handler and runs it under the authentication rules and
// the failCommand fail point. It returns the handler's reply and error, the
// fail point action that applied, and an error that closes the connection.
func (c *Conn) execute(ctx context.Context, r *Request) (bson.Raw, error, *failAction, error) {
	s := c.s
	if r.parseErr != nil {
		return nil, r.parseErr, nil, nil
	}
	cmd, ok := s.lookup(r.Name)
	if !ok || !cmd.flags.availableOn(s.role()) {
		return nil, newError(mongoerr.CommandNotFound, "no such command: '%s'", r.Name), nil, nil
	}
	if s.opts.Auth && cmd.flags&cmdNoAuth == 0 && !c.authenticated() {
		return nil, newError(mongoerr.Unauthorized, "Command %s requires authentication", r.Name), nil, nil
	}
	if cmd.flags&cmdAdminOnly != 0 && r.DB != "admin" {
		return nil, newError(mongoerr.Unauthorized, "%s may only be run against the admin database.", r.Name), nil, nil
	}
	if v, err := r.Body.LookupErr("apiVersion"); err == nil {
		if str, ok := v.StringValueOK(); !ok || str != "1" {
			return nil, newError(322, "API version must be \"1\""), nil, nil
		}
	}
	if err := checkAPIStrict(r); err != nil {
		return nil, err, nil, nil
	}
	if r.Name != "endSessions" {
		s.touchSession(c, r)
	}
	if s.requireAPIVersion() && !internalHello(cmd, r) {
		if _, err := r.Body.LookupErr("apiVersion"); err != nil {
			return nil, newError(codeAPIVersionRequired, "The apiVersion parameter is required, please configure your MongoClient's API version"), nil, nil
		}
	}
	if cmd.flags&cmdHello != 0 {
		first, err := c.takeHandshake(r.Body)
		if err != nil {
			return nil, err, nil, nil
		}
		r.firstHello = first
	}
	ta := timeArgsOf(r.Body)
	deadline, err := maxTimeDeadline(r, ta.maxTimeMS)
	if err != nil {
		return nil, err, nil, nil
	}
	s.clock.advanceFrom(ta.clusterTime)
	if limited := s.ingress.limit(s, c, cmd, r); limited != nil {
		return nil, limited, nil, nil
	}
	fx := s.fps.failCommand(c, r)
	if fx != nil {
		if fx.closeConnection {
			return nil, nil, nil, errClose("closed by the failCommand fail point")
		}
		if fx.blockConnection {
			if err := c.waitFor(ctx, fx.blockTime, nil); err != nil {
				return nil, nil, nil, err
			}
		}
		if fx.errorCode != 0 {
			e := newError(fx.errorCode, "Failing command via 'failCommand' failpoint")
			if fx.labelsSet {
				e.Labels = append([]string{}, fx.labels...)
			}
			return nil, e, nil, nil
		}
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		// mongod sets the operation's deadline before the fail point
		// blocks, and the command's first interrupt check fails it.
		return nil, newError(mongoerr.MaxTimeMSExpired, "operation exceeded time limit"), nil, nil
	}
	if err := s.checkAfterClusterTime(ta.readConcern); err != nil {
		return nil, err, nil, nil
	}
	if s.gossips() && !s.store.HistoryOn() {
		s.clock.enableHistory(s.store)
	}
	if err := s.startSnapshotRead(r, ta.readConcern); err != nil {
		return nil, err, nil, nil
	}
	res, err := cmd.h(ctx, s, r)
	if err == nil && writes(r) {
		r.opTime = s.clock.tickMark(s.store)
	}
	if err == nil {
		res = withAtClusterTime(r, res)
	}
	var ec errClose
	if errors.As(err, &ec) {
		// A handler closes the connection on purpose (the
		// onPrimaryTransactionalWrite fail point).
		return nil, nil, nil, ec
	}
	if err == nil && cmd.flags&cmdUser != 0 && cmd.flags&cmdUnchecked == 0 && res != nil {
		if verr := res.Validate(); verr != nil {
			return nil, newError(mongoerr.InternalError, "the handler set with Handle(%q) returned invalid BSON: %v", r.Name, verr), nil, nil
		}
	}
	return res, err, fx, nil
}

// appendOK appends a successful reply: the handler's fields, the fail
// point's writeConcernError, ok:1, error labels and the cluster time.
func (c *Conn) appendOK(dst []byte, r *Request, res bson.Raw, fx *failAction) []byte {
	injectWCE := fx != nil && fx.writeConcernError != nil
	hasOK, hasLabels := false, false
	var wce bson.Raw
	if len(res) > 0 {
		it := res.Iter()
		for it.Next() {
			switch it.Key() {
			case "writeConcernError":
				if !injectWCE {
					wce, _ = it.Value().DocumentOK()
				}
			case "ok":
				hasOK = true
			case "errorLabels":
				hasLabels = true
			}
		}
	}
	if injectWCE {
		wce = fx.writeConcernError
	}
	if len(res) > maxKeptBuffer && r.ownReply && !injectWCE {
		// A big reply its handler made for this request alone (a cursor
		// batch) gets its last fields appended in place, in the room the
		// handler left, rather than copied whole.
		tail := c.appendOKTail(c.body[:0], r, hasOK, hasLabels, wce, fx)
		out := res
		if cap(res)-len(res) < len(tail) {
			out = make([]byte, len(res), len(res)+len(tail))
			copy(out, res)
		}
		out = append(out[:len(out)-1], tail...)
		out = append(out, 0)
		binary.LittleEndian.PutUint32(out, uint32(len(out)))
		c.body = tail[:0]
		return out
	}
	if len(res) > maxKeptBuffer {
		// Copied in one allocation rather than by doubling.
		dst = make([]byte, 0, len(res)+512)
	}
	start, dst := bson.AppendDocumentStart(dst)
	if len(res) > 0 {
		it := res.Iter()
		for it.Next() {
			if injectWCE && it.Key() == "writeConcernError" {
				continue
			}
			dst = append(dst, it.Element()...)
		}
	}
	if injectWCE {
		dst = bson.AppendDocumentElement(dst, "writeConcernError", wce)
	}
	dst = c.appendOKTail(dst, r, hasOK, hasLabels, wce, fx)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// appendOKTail appends the fields appendOK adds after the handler's: ok
// unless the handler set it, errorLabels, and $clusterTime.
func (c *Conn) appendOKTail(dst []byte, r *Request, hasOK, hasLabels bool, wce bson.Raw, fx *failAction) []byte {
	if !hasOK {
		dst = bson.AppendDoubleElement(dst, "ok", 1)
	}
	if !hasLabels {
		var labels []string
		switch {
		case fx != nil && fx.labelsSet && wce != nil:
			labels = fx.labels
		case wce != nil && isRetryableWrite(r):
			if code, ok := wce.Lookup("code").AsInt64OK(); ok && retryableCodes[int32(code)] {
				labels = []string{"RetryableWriteError"}
			}
		}
		dst = appendLabels(dst, labels)
	}
	return c.s.appendClusterTimeAt(dst, r.opTime)
}

// appendError appends {ok:0, errmsg, code, codeName, ...}: extra's fields,
// errorLabels, topologyVersion for state changes, and the cluster time.
func (c *Conn) appendError(dst []byte, r *Request, e *mongoerr.Error, extra bson.Raw) []byte {
	start, dst := bson.AppendDocumentStart(dst)
	dst = bson.AppendDoubleElement(dst, "ok", 0)
	dst = bson.AppendStringElement(dst, "errmsg", e.Message)
	dst = bson.AppendInt32Element(dst, "code", e.Code)
	name := e.CodeName
	if name == "" {
		name = newError(e.Code, "").CodeName
	}
	dst = bson.AppendStringElement(dst, "codeName", name)
	if len(extra) > 0 {
		it := extra.Iter()
		for it.Next() {
			switch it.Key() {
			case "ok", "errmsg", "code", "codeName", "errorLabels":
				continue
			}
			dst = append(dst, it.Element()...)
		}
	}
	labels := e.Labels
	if labels == nil && retryableCodes[e.Code] && isRetryableWrite(r) {
		labels = []string{"RetryableWriteError"}
	}
	dst = appendLabels(dst, labels)
	if ms := c.s.ingress.baseBackoffMS.Load(); ms > 0 && overloaded(labels) {
		dst = bson.AppendInt32Element(dst, "baseBackoffMS", int32(min(ms, 1<<31-1)))
	}
	if stateChangeCodes[e.Code] && c.s.isReplicaSetMember() {
		dst = c.s.appendTopologyVersion(dst, "topologyVersion")
	}
	dst = c.s.appendClusterTimeAt(dst, r.opTime)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

func appendLabels(dst []byte, labels []string) []byte {
	if len(labels) == 0 {
		return dst
	}
	as, dst := bson.AppendArrayElementStart(dst, "errorLabels")
	for i, l := range labels {
		dst = bson.AppendStringElement(dst, bson.ArrayKey(i), l)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	return dst
}

// opCounters are serverStatus's opcounters, counted as mongod does:
// inserts, updates and deletes per statement, queries per find, getMores,
// and every other command.
type opCounters struct {
	insert, query, update, delete, getmore, command atomic.Int64
}

func (o *opCounters) count(r *Request) {
	switch r.Name {
	case "insert":
		o.insert.Add(arrayLen(r.Body, "documents"))
	case "update":
		o.update.Add(arrayLen(r.Body, "updates"))
	case "delete":
		o.delete.Add(arrayLen(r.Body, "deletes"))
	case "find":
		o.query.Add(1)
	case "getMore":
		o.getmore.Add(1)
	default:
		o.command.Add(1)
	}
}

func arrayLen(doc bson.Raw, key string) int64 {
	arr, ok := doc.Lookup(key).ArrayOK()
	if !ok {
		return 0
	}
	var n int64
	it := arr.Iter()
	for it.Next() {
		n++
	}
	return n
}

// int64Field reads an integral number of any numeric type; a double must
// be whole.
func int64Field(doc bson.Raw, key string) (int64, bool, error) {
	v, err := doc.LookupErr(key)
	if err != nil {
		return 0, false, nil
	}
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64OK()
		return n, true, nil
	case bson.TypeDouble:
		f := v.Double()
		if f != float64(int64(f)) {
			return 0, true, newError(mongoerr.BadValue, "%s must be a whole number, not %v", key, f)
		}
		return int64(f), true, nil
	}
	return 0, true, newError(mongoerr.TypeMismatch, "%s is of type %s, expected a number", key, v.Type)
}
