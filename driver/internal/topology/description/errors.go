package description

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
)

// Phase says where an error happened.
type Phase uint8

const (
	// PhaseOperation: on an established connection, after the handshake
	// (the tests' "afterHandshakeCompletes").
	PhaseOperation Phase = iota
	// PhaseHandshake: while connecting or running hello for a new
	// application connection (part of "beforeHandshakeCompletes").
	PhaseHandshake
	// PhaseAuth: during authentication, after hello (the rest of
	// "beforeHandshakeCompletes").
	PhaseAuth
	// PhaseCheck: a server monitor's check failed.
	PhaseCheck
)

// Error codes of state change errors (SDAM, "not writable primary" and
// "node is recovering").
const (
	codeInterruptedAtShutdown           = 11600
	codeInterruptedDueToReplStateChange = 11602
	codeNotPrimaryOrSecondary           = 13436
	codePrimarySteppedDown              = 189
	codeShutdownInProgress              = 91
	codeNotWritablePrimary              = 10107
	codeNotPrimaryNoSecondaryOk         = 13435
	codeLegacyNotPrimary                = 10058
)

// wireVersion42 is MongoDB 4.2, before which every state change error
// cleared the pool.
const wireVersion42 = 8

// ErrorInfo describes an error on a connection to one server, as error
// handling needs it. For a command error (or a write concern error, which
// is checked the same way) Code, Message and TopologyVersion come from the
// reply; errors inside writeErrors must not be passed here.
type ErrorInfo struct {
	// Err is the error itself; it becomes the Unknown description's Error.
	Err   error
	Phase Phase
	// Network is true for a network error, Timeout for a network timeout
	// (which is also a network error).
	Network bool
	Timeout bool
	// Code is the server's error code, 0 when the reply had none; Message
	// is its errmsg, consulted only when Code is 0.
	Code    int32
	Message string
	// TopologyVersion is the one in the error reply, if any.
	TopologyVersion *handshake.TopologyVersion
	// Generation is the generation of the connection the error happened
	// on; PoolGeneration the pool's current one (in load-balanced mode,
	// that of the connection's service). An error from an older
	// generation is stale.
	Generation     uint64
	PoolGeneration uint64
	// MaxWireVersion is that connection's server's maxWireVersion.
	MaxWireVersion int32
	// SystemOverloaded is true when the error carries the
	// SystemOverloadedError label (server or pool backpressure).
	SystemOverloaded bool
	// LoadBalanced is true when the topology is LoadBalanced; ServiceID is
	// the connection's serviceId then, nil when it is not known yet.
	LoadBalanced bool
	ServiceID    *bson.ObjectID
}

// ErrorOutcome is what to do about an error. When MarkUnknown is set the
// caller applies Server to the topology, and clears the pool in the same
// critical section, as the specification requires.
type ErrorOutcome struct {
	// Stale is true when the error is ignored because it predates what
	// the client already knows (older pool generation or topologyVersion).
	Stale bool
	// MarkUnknown: apply Server (type Unknown) to the topology.
	MarkUnknown bool
	Server      ServerDescription
	// ClearPool: clear the server's pool; in load-balanced mode only the
	// connections to ServiceID. InterruptInUse: close checked-out
	// connections too.
	ClearPool      bool
	InterruptInUse bool
	ServiceID      *bson.ObjectID
	// RequestCheck: ask the server's monitor for an immediate check.
	RequestCheck bool
	// CancelCheck: cancel the monitor's check in progress.
	CancelCheck bool
	// SkipWait (monitor checks only): begin the next check at once rather
	// than after heartbeatFrequencyMS, since a known server just failed
	// with a network error and one retry is worth it.
	SkipWait bool
}

// HandleError decides what an error does to the server whose current
// description is current, following the specification's error handling:
//
//   - a failed monitor check (PhaseCheck) marks the server Unknown and
//     clears its pool, interrupting in-use connections after a timeout;
//   - an error from an older pool generation, or a state change error whose
//     topologyVersion is not newer than current's, is stale and ignored;
//   - a state change error ("not writable primary", "node is recovering",
//     by code, or by message when there is no code) marks the server Unknown
//     with the error's topologyVersion and requests a check; the pool is
//     cleared only for "node is shutting down" errors (and for any state
//     change error from a server older than 4.2);
//   - a network error after the handshake, or any error during the
//     handshake or authentication, marks the server Unknown, clears the
//     pool and cancels the monitor's check; a timeout after the handshake
//     does nothing, nor does an error carrying SystemOverloadedError (which
//     the connection gives a network error or timeout while connecting or
//     running hello: CMAP backpressure);
//   - in load-balanced mode the server is never marked Unknown, errors
//     before the hello completed are ignored, and only the pool's
//     connections to the error's service are cleared; PoolGeneration is
//     then that service's generation.
func HandleError(current ServerDescription, e ErrorInfo) ErrorOutcome {
	network := e.Network || e.Timeout
	if e.Phase == PhaseCheck {
		return ErrorOutcome{
			MarkUnknown:    !e.LoadBalanced,
			Server:         UnknownServer(current.Address, e.Err),
			ClearPool:      true,
			InterruptInUse: e.Timeout,
			SkipWait:       network && current.Type != Unknown,
		}
	}
	if e.LoadBalanced && e.Phase == PhaseHandshake {
		// Load-balanced mode: errors before the hello completed, and
		// during it, say nothing about any service (the connection has no
		// serviceId yet) and are ignored.
		return ErrorOutcome{}
	}
	if e.Generation < e.PoolGeneration {
		return ErrorOutcome{Stale: true}
	}
	if !network && IsStateChangeError(e.Code, e.Message) {
		if CompareTopologyVersion(current.TopologyVersion, e.TopologyVersion) >= 0 {
			return ErrorOutcome{Stale: true}
		}
		var out ErrorOutcome
		if IsShutdownError(e.Code) || e.MaxWireVersion < wireVersion42 {
			out.ClearPool = true
		}
		if e.LoadBalanced {
			if out.ClearPool {
				out.ServiceID = e.ServiceID
			}
			return out
		}
		out.MarkUnknown = true
		out.Server = UnknownServer(current.Address, e.Err)
		out.Server.TopologyVersion = e.TopologyVersion
		out.RequestCheck = true
		return out
	}
	if e.Phase == PhaseOperation && (!network || e.Timeout) {
		// A command error that is no state change, or a timeout that may
		// only mean a slow operation: the server is still what it was.
		return ErrorOutcome{}
	}
	if e.SystemOverloaded {
		return ErrorOutcome{}
	}
	if e.LoadBalanced {
		if e.ServiceID == nil {
			return ErrorOutcome{}
		}
		return ErrorOutcome{ClearPool: true, ServiceID: e.ServiceID}
	}
	return ErrorOutcome{
		MarkUnknown: true,
		Server:      UnknownServer(current.Address, e.Err),
		ClearPool:   true,
		CancelCheck: true,
	}
}

// IsStateChangeError reports whether an error with this code (or, when
// code is 0, this message) is a "not writable primary" or "node is
// recovering" error.
func IsStateChangeError(code int32, message string) bool {
	return IsRecoveringError(code, message) || IsNotWritablePrimaryError(code, message)
}

// IsRecoveringError reports a "node is recovering" error: by code when
// there is one, otherwise by the substrings "node is recovering" or "not
// master or secondary" in the message.
func IsRecoveringError(code int32, message string) bool {
	if code != 0 {
		switch code {
		case codeInterruptedAtShutdown, codeInterruptedDueToReplStateChange, codeNotPrimaryOrSecondary,
			codePrimarySteppedDown, codeShutdownInProgress:
			return true
		}
		return false
	}
	return strings.Contains(message, "not master or secondary") || strings.Contains(message, "node is recovering")
}

// IsNotWritablePrimaryError reports a "not writable primary" error: by code
// when there is one, otherwise by "not master" in a message that is not a
// "node is recovering" one.
func IsNotWritablePrimaryError(code int32, message string) bool {
	if code != 0 {
		switch code {
		case codeNotWritablePrimary, codeNotPrimaryNoSecondaryOk, codeLegacyNotPrimary:
			return true
		}
		return false
	}
	return !IsRecoveringError(0, message) && strings.Contains(message, "not master")
}

// IsShutdownError reports a "node is shutting down" error, which (alone
// among state change errors) clears the pool.
func IsShutdownError(code int32) bool {
	return code == codeInterruptedAtShutdown || code == codeShutdownInProgress
}
