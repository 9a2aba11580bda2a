package event

import (
	"context"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// OperationMonitor receives one pair of hooks per driver operation (find,
// insert, a getMore of a cursor...), an extension of ours: the
// specifications define events only for the commands an operation sends.
type OperationMonitor interface {
	// OperationStarted runs before server selection. The context it returns
	// is used for the whole operation (selection, checkout, every command
	// attempt) and handed to OperationFinished.
	OperationStarted(ctx context.Context, e *OperationStarted) context.Context
	// OperationFinished runs once, after the last attempt.
	OperationFinished(ctx context.Context, e *OperationFinished)
}

// OperationStarted describes an operation about to run.
type OperationStarted struct {
	// Name is the operation's name as the OpenTelemetry specification
	// gives it: the command's ("find", "insert", "findAndModify",
	// "getMore"), except "runCommand" for a command the application
	// wrote, "dropCollection" and "createCollection". OperationFinished and
	// OperationRetry carry the same name.
	Name        string
	Database    string
	Collection  string // empty for database and client operations
	OperationID int64  // shared with the command events of this operation
	// Generic marks a command the application wrote (RunCommand,
	// RunCursorCommand, and Ping): Name is then the command's name. The
	// OpenTelemetry specification calls such an operation runCommand.
	Generic bool
	// Origin is set on a cursor's getMore and killCursors to the context
	// that the OperationStarted hooks of the operation that opened the
	// cursor (find, aggregate, ...) returned; nil otherwise. A monitor can
	// find there what it stored for that operation, e.g. a tracing sink
	// its span. Only its values are meant to be read: it may have been
	// canceled long ago.
	Origin context.Context
}

// OperationFinished describes an operation that ended, successfully or not.
type OperationFinished struct {
	Name        string
	Database    string
	Collection  string
	OperationID int64

	Attempts  int           // command attempts, retries included
	Selection time.Duration // total time in server selection, over all attempts
	CheckOut  time.Duration // total time checking out connections, over all attempts
	Duration  time.Duration // from OperationStarted to now
	// Timeout is the operation's time budget (timeoutMS or the context's
	// deadline) when it had one; 0 means none.
	Timeout time.Duration
	Err     error // nil on success
	// TimeoutStage says where the operation's time budget ran out when
	// it failed for that reason (Err is then a timeout: errors.Is(Err,
	// context.DeadlineExceeded)): one of the TimeoutStage constants, e.g.
	// TimeoutStageSelection. It is empty on success and for every other
	// failure, a serverSelectionTimeoutMS or waitQueueTimeoutMS that ran
	// out without a deadline included.
	TimeoutStage string
}

// CommandMonitor receives the command monitoring specification's events,
// one started and one succeeded or failed per command sent. An event's
// Command and Reply are the driver's own buffers, valid only until the
// method returns: a monitor that keeps one must copy it (bytes.Clone).
type CommandMonitor interface {
	// CommandStarted returns the context that is handed to the matching
	// CommandSucceeded or CommandFailed.
	CommandStarted(ctx context.Context, e *CommandStarted) context.Context
	CommandSucceeded(ctx context.Context, e *CommandSucceeded)
	CommandFailed(ctx context.Context, e *CommandFailed)
}

// CommandFields are the fields every command event carries. The connection
// is identified by numbers and fields, never by a composite string, so they
// can be used as they are in logs, spans and metrics.
type CommandFields struct {
	CommandName  string
	DatabaseName string
	RequestID    int32 // the request id of the wire message
	OperationID  int64 // the operation this command belongs to

	ServerHost string // host name, IP address or Unix socket path
	ServerPort int    // 0 for a Unix socket
	// ConnectionID is the driver's id for the connection, unique within
	// its pool.
	ConnectionID int64
	// ServerConnectionID is the server's id for the connection (hello's
	// connectionId), when the server sent one.
	ServerConnectionID *int64
	// ServiceID is the load balancer's backend service, in load-balanced
	// mode only.
	ServiceID *bson.ObjectID
	// Redacted is set by the producer when the command is security
	// sensitive (IsSensitiveCommand): the started event's Command and the
	// succeeded event's Reply are then empty documents, and a failed
	// event's Failure keeps only the server's code, code name and error
	// labels. Monitors that show or export payloads use it; they need not
	// guess from the command name or the document's size.
	Redacted bool
}

// CommandStarted is sent before a command goes on the wire. Command is
// redacted (an empty document, with Redacted set) for the security-sensitive
// commands the command monitoring specification lists.
type CommandStarted struct {
	CommandFields
	Command bson.Raw
}

// CommandSucceeded is sent when a command's reply has ok: 1.
type CommandSucceeded struct {
	CommandFields
	Duration time.Duration
	Reply    bson.Raw // redacted (an empty document) when Redacted is set
}

// CommandFailed is sent when a command failed: a network error, a timeout or
// a reply with ok: 0.
type CommandFailed struct {
	CommandFields
	Duration time.Duration
	// Failure is the error. When Redacted is set and the server refused
	// the command, it keeps only the code, code name and error labels.
	Failure error
	// Reply is the server's reply when there was one, else nil; an empty
	// document when Redacted is set.
	Reply bson.Raw
}

// sensitiveCommands are the commands whose contents the command monitoring
// specification redacts, lowercased.
var sensitiveCommands = map[string]bool{
	"authenticate": true, "saslstart": true, "saslcontinue": true, "getnonce": true,
	"createuser": true, "updateuser": true, "copydbgetnonce": true, "copydbsaslstart": true, "copydb": true,
}

// IsSensitiveCommand reports whether the command named name, with body cmd,
// is one whose command and reply must be redacted in every event, log, span
// and metric: the authentication and user-management commands, and hello or
// legacy hello when it carries speculativeAuthenticate. The name is compared
// without regard to case, as the server does.
func IsSensitiveCommand(name string, cmd bson.Raw) bool {
	n := strings.ToLower(name)
	if sensitiveCommands[n] {
		return true
	}
	if n == "hello" || n == "ismaster" {
		_, err := cmd.LookupErr("speculativeAuthenticate")
		return err == nil
	}
	return false
}
