package conn

import (
	"context"
	"strconv"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
)

// emptyDoc is the redacted form of a sensitive command or reply.
var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

// okDoc is the reply the command monitoring specification reports for an
// unacknowledged write, which gets no reply from the server.
var okDoc = func() bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "ok", 1)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}()

// MonitoredCommand is Command with the command monitoring events: a
// CommandStarted before the message goes out, then a CommandSucceeded (ok: 1,
// a write concern error included) or a CommandFailed (a refusal, a network
// error or a timeout), all carrying operationID and the connection's ids.
// Sensitive commands (event.IsSensitiveCommand) are published with Redacted
// set, an empty command and reply, and a failure cut to its code, code name
// and labels. With no command monitor on d it is exactly Command and
// costs nothing more.
func (c *Conn) MonitoredCommand(ctx context.Context, req *Request, d *event.Dispatcher, operationID int64) (*Reply, error) {
	if !d.Command() {
		return c.Command(ctx, req)
	}
	if err := c.sendable(); err != nil {
		return nil, err
	}
	if !req.MoreToCome {
		if req.Watched {
			c.watched = true
			defer c.unwatchExternal()
		} else {
			defer c.unwatch(c.watch(ctx))
		}
	}
	id := c.reqID()
	name := commandName(req.Command)
	f := event.CommandFields{
		CommandName:  name,
		DatabaseName: req.DB,
		RequestID:    id,
		OperationID:  operationID,
		ConnectionID: c.ID(),
	}
	f.ServerHost, f.ServerPort = event.SplitAddress(c.Address())
	if h := &c.hello; h.ConnectionID != 0 {
		sid := h.ConnectionID
		f.ServerConnectionID = &sid
	}
	f.ServiceID = c.hello.ServiceID
	// The specification's Security rules: the command and reply of a
	// sensitive command are published as empty documents and a server
	// error keeps only its code, code name and labels. The flag travels on
	// every event so monitors need not decide again.
	f.Redacted = event.IsSensitiveCommand(name, req.Command)
	cmd := emptyDoc
	if !f.Redacted {
		cmd = eventCommand(req, c.cfg.Handshake.ServerAPI)
	}
	ctx = d.CommandStarted(ctx, &event.CommandStarted{CommandFields: f, Command: cmd})
	start := time.Now()
	failed := func(err error, reply bson.Raw) {
		if f.Redacted {
			err = redactedFailure(err)
			if reply != nil {
				reply = emptyDoc
			}
		}
		d.CommandFailed(ctx, &event.CommandFailed{CommandFields: f, Duration: time.Since(start), Failure: err, Reply: reply})
	}
	if _, err := c.sendAs(ctx, req, c.socketTimeout(req), id); err != nil {
		failed(err, nil)
		return nil, err
	}
	if req.MoreToCome {
		d.CommandSucceeded(ctx, &event.CommandSucceeded{CommandFields: f, Duration: time.Since(start), Reply: okDoc})
		return nil, nil
	}
	c.lazyBody = req.LazyBody
	r, err := c.receive(ctx, c.socketTimeout(req), id)
	c.lazyBody = false
	if err != nil {
		failed(err, nil)
		return nil, err
	}
	switch rerr := ReplyError(r.Body).(type) {
	case nil, *WriteConcernError:
		reply, sf := r.Body, f
		// A hello reply carrying speculativeAuthenticate is redacted even
		// if its command somehow was not: the server only sends one to a
		// hello that asked, and it belongs to an authentication exchange.
		if sf.Redacted || event.IsSensitiveCommand(name, reply) {
			reply, sf.Redacted = emptyDoc, true
		}
		d.CommandSucceeded(ctx, &event.CommandSucceeded{CommandFields: sf, Duration: time.Since(start), Reply: reply})
		if rerr != nil {
			return r, rerr
		}
		return r, nil
	default:
		failed(rerr, r.Body)
		r.Release()
		return nil, rerr
	}
}

// redactedFailure is the failure a CommandFailed event of a sensitive
// command carries: a server refusal keeps its code, code name and error
// labels and loses its message and reply; any other error (network,
// timeout) holds nothing from the command and is kept.
func redactedFailure(err error) error {
	ce, ok := err.(*CommandError)
	if !ok {
		return err
	}
	return &CommandError{Code: ce.Code, CodeName: ce.CodeName, Labels: ce.Labels}
}

// eventCommand is the command as the events show it: the body with "$db"
// and each document sequence folded in as an array, the way the server sees
// the command. It is built only when a command monitor is attached.
func eventCommand(req *Request, api *handshake.ServerAPI) bson.Raw {
	if len(req.Command) < 5 {
		return emptyDoc
	}
	n := len(req.Command) + len(req.DB) + 16
	if api != nil {
		n += 80
	}
	for _, s := range req.Sequences {
		n += len(s.Identifier) + 8
		for _, d := range s.Docs {
			n += len(d) + 8
		}
	}
	b := make([]byte, 0, n)
	b = append(b, req.Command[:len(req.Command)-1]...)
	for _, s := range req.Sequences {
		var as int
		as, b = bson.AppendArrayElementStart(b, s.Identifier)
		for i, d := range s.Docs {
			b = bson.AppendDocumentElement(b, strconv.Itoa(i), d)
		}
		b, _ = bson.AppendDocumentEnd(b, as)
	}
	b = handshake.AppendServerAPI(b, api)
	if req.DB != "" {
		b = bson.AppendStringElement(b, "$db", req.DB)
	}
	b = append(b, 0)
	b[0], b[1], b[2], b[3] = byte(len(b)), byte(len(b)>>8), byte(len(b)>>16), byte(len(b)>>24)
	return b
}
