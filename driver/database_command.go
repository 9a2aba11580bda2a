package driver

import (
	"context"
	"errors"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// RunCommand runs cmd, a document whose first key names the command (a
// bson.D, a bson.Raw, a struct, or a map with a single key), on the
// database, and returns the reply: Decode or Raw it, or read Err. A
// refusal by the server is an *OperationError in Err whose cause
// errors.As turns into a *CommandError (holding the reply).
//
// The command is sent as given, with $db, the implicit session and the
// cluster time added: no read concern, write concern or read preference
// of the database is added to it (the run-command specification), and
// the command is retried only after an error labelled SystemOverloadedError
// and RetryableError, when both retryReads and retryWrites are on (client
// backpressure; every operation is retried so). Without a ReadPreference it goes to the
// primary.
//
// cmd is not inspected for maxTimeMS (the client-side operations timeout
// specification forbids it). Without timeoutMS, or with timeoutMS 0, a
// maxTimeMS in cmd is sent as it is. Under a positive timeoutMS the
// driver appends its own maxTimeMS to cmd, so a cmd carrying one has the
// field twice, which the server refuses as a duplicate: use timeoutMS
// (WithTimeout) rather than maxTimeMS in cmd.
func (db *Database) RunCommand(ctx context.Context, cmd any, opts ...*RunCommandOptions) *SingleResult {
	if db.err != nil {
		return &SingleResult{err: db.err}
	}
	if _, ok := operation.TimeoutOf(ctx); !ok && db.c.timeout != nil {
		// The database's timeoutMS, unless the operation has its own.
		ctx = operation.WithTimeout(ctx, *db.c.timeout)
	}
	body, err := db.client.RunCommand(ctx, db.name, cmd, opts...)
	if err != nil {
		return &SingleResult{err: err}
	}
	return &SingleResult{doc: body}
}

// RunCursorCommandOptions are the options of RunCursorCommand. BatchSize,
// MaxAwaitTime and Comment apply only to the getMore commands that fetch
// the later batches: the first command is sent as the caller wrote it.
type RunCursorCommandOptions struct {
	// ReadPreference, ReadPreferenceTags and MaxStaleness choose the
	// server, as for RunCommand (primary by default); the cursor's
	// getMores go to the same server.
	ReadPreference     string
	ReadPreferenceTags []map[string]string
	MaxStaleness       *time.Duration
	// BatchSize is each getMore's batchSize; it must not be negative.
	BatchSize *int32
	// MaxAwaitTime is each getMore's maxTimeMS, sent whatever the cursor
	// type, as the run-command specification asks (a server refuses it
	// on a cursor that is not tailable awaitData). A maxTimeMS in cmd
	// itself applies to the first command only and is sent as written.
	MaxAwaitTime *time.Duration
	// Comment is sent with each getMore.
	Comment any
	// CursorType says what kind of cursor the command opens; the command
	// itself must ask for it (tailable, awaitData). A tailable cursor
	// stays open when a batch comes back empty.
	CursorType CursorType
}

// RunCursorCommand runs cmd, a command that opens a cursor (find,
// aggregate, listCollections, listIndexes...), on the database, as
// RunCommand does, and returns a Cursor over its results. The cursor's
// getMores go to the server that ran cmd, with its session and, behind a
// load balancer, on its connection. A reply without a cursor document is
// an error.
func (db *Database) RunCursorCommand(ctx context.Context, cmd any, opts ...*RunCursorCommandOptions) (*Cursor, error) {
	if err := db.ready(); err != nil {
		return nil, err
	}
	raw, err := marshalCommand(cmd)
	if err != nil {
		return nil, err
	}
	var o RunCursorCommandOptions
	sel := selection.Read(selection.ReadPref{Mode: selection.Primary})
	for _, x := range opts {
		if x == nil {
			continue
		}
		if x.ReadPreference != "" || x.ReadPreferenceTags != nil || x.MaxStaleness != nil {
			rp, err := readPref(x.ReadPreference, x.ReadPreferenceTags, x.MaxStaleness)
			if err != nil {
				var oe *OptionError
				if errors.As(err, &oe) {
					field := oe.Field
					if field == "" {
						field = "ReadPreference"
					}
					return nil, &ArgumentError{Argument: "RunCursorCommandOptions." + field, Reason: oe.Reason, Err: oe.Err}
				}
				return nil, err
			}
			sel = selection.Read(rp)
		}
		setPtr(&o.BatchSize, x.BatchSize)
		setPtr(&o.MaxAwaitTime, x.MaxAwaitTime)
		setIf(&o.Comment, x.Comment)
		if x.CursorType != NonTailable {
			o.CursorType = x.CursorType
		}
	}
	co := operation.CursorOptions{Tailable: o.CursorType != NonTailable}
	if o.BatchSize != nil {
		if *o.BatchSize < 0 {
			return nil, &ArgumentError{Argument: "RunCursorCommandOptions.BatchSize", Reason: "the batch size must not be negative"}
		}
		co.BatchSize = *o.BatchSize
	}
	if o.MaxAwaitTime != nil {
		if *o.MaxAwaitTime < 0 {
			return nil, &ArgumentError{Argument: "RunCursorCommandOptions.MaxAwaitTime", Reason: "maxAwaitTimeMS must not be negative"}
		}
		co.MaxAwaitTime = *o.MaxAwaitTime
	}
	if co.Comment, err = marshalValue("RunCursorCommandOptions.Comment", o.Comment); err != nil {
		return nil, err
	}
	res, err := db.execute(ctx, &operation.Op{Name: operation.CommandName(raw), DB: db.name, Command: raw, Selector: sel, Cursor: true,
		CursorKind: cursorKind(o.CursorType), MaxAwait: co.MaxAwaitTime, KeepMaxTime: true, Kind: operation.KindCommand, Generic: true})
	if err != nil {
		return nil, err
	}
	return db.cursor(res, co)
}
