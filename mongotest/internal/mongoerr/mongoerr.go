// Package mongoerr is the MongoDB-shaped error the test server returns: a
// numeric code, its codeName and a message, as mongod puts them in an
// {ok: 0} reply. The server's packages (query, update, store, the command
// handlers) all return it so a reply can be built from any of them.
package mongoerr

import (
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
)

// Codes mongod uses, with their code names. Only codes the test server
// returns are listed.
const (
	InternalError                   = 1
	BadValue                        = 2
	NoSuchKey                       = 4
	EmptyFieldName                  = 56
	Unauthorized                    = 13
	TypeMismatch                    = 14
	AuthenticationFailed            = 18
	IllegalOperation                = 20
	NamespaceNotFound               = 26
	IndexNotFound                   = 27
	PathNotViable                   = 28
	ConflictingUpdateOperators      = 40
	CursorNotFound                  = 43
	NamespaceExists                 = 48
	DollarPrefixedFieldName         = 52
	InvalidIdField                  = 53
	NotSingleValueField             = 54
	CommandNotFound                 = 59
	ImmutableField                  = 66
	InvalidOptions                  = 72
	InvalidNamespace                = 73
	IndexOptionsConflict            = 85
	IndexKeySpecsConflict           = 86
	NetworkTimeout                  = 89
	OperationFailed                 = 96
	WriteConflict                   = 112
	CommandNotSupported             = 115
	NotImplemented                  = 238
	InvalidPipelineOperator         = 168
	MaxTimeMSExpired                = 50
	DocumentValidationFailure       = 121
	Interrupted                     = 11601
	InterruptedAtShutdown           = 11600
	InterruptedDueToReplStateChange = 11602
	NotWritablePrimary              = 10107
	NotPrimaryNoSecondaryOk         = 13435
	NotPrimaryOrSecondary           = 13436
	PrimarySteppedDown              = 189
	ShutdownInProgress              = 91
	HostNotFound                    = 7
	HostUnreachable                 = 6
	SocketException                 = 9001
	DuplicateKey                    = 11000
	Location40324                   = 40324 // unrecognized pipeline stage name
	Location15998                   = 15998 // FieldPath field names may not be empty
	Location31254                   = 31254 // cannot do exclusion on field in inclusion projection
	Location2                       = 2
	FailedToParse                   = 9
	UnknownError                    = 8
	Overflow                        = 15
	InvalidLength                   = 16
	ExceededTimeLimit               = 262
	TransactionTooOld               = 225
	IncompleteTransactionHistory    = 217
	NoSuchTransaction               = 251
	StaleConfig                     = 13388
	ReauthenticationRequired        = 391
	IncompatibleCollationVersion    = 161
	CannotCreateIndex               = 67
	InvalidIndexSpecificationOption = 197
	NotAReplicaSet                  = 123
	SnapshotTooOld                  = 239
	SnapshotUnavailable             = 246
)

var names = map[int32]string{
	InternalError: "InternalError", BadValue: "BadValue", NoSuchKey: "NoSuchKey", EmptyFieldName: "EmptyFieldName", Unauthorized: "Unauthorized",
	TypeMismatch: "TypeMismatch", AuthenticationFailed: "AuthenticationFailed", IllegalOperation: "IllegalOperation",
	NamespaceNotFound: "NamespaceNotFound", IndexNotFound: "IndexNotFound", PathNotViable: "PathNotViable",
	ConflictingUpdateOperators: "ConflictingUpdateOperators", CursorNotFound: "CursorNotFound",
	NamespaceExists: "NamespaceExists", DollarPrefixedFieldName: "DollarPrefixedFieldName", InvalidIdField: "InvalidIdField",
	NotSingleValueField: "NotSingleValueField", CommandNotFound: "CommandNotFound", ImmutableField: "ImmutableField",
	InvalidOptions: "InvalidOptions", InvalidNamespace: "InvalidNamespace", IndexOptionsConflict: "IndexOptionsConflict",
	IndexKeySpecsConflict: "IndexKeySpecsConflict", NetworkTimeout: "NetworkTimeout", OperationFailed: "OperationFailed",
	WriteConflict: "WriteConflict", CommandNotSupported: "CommandNotSupported", NotImplemented: "NotImplemented",
	NotAReplicaSet: "NotAReplicaSet", SnapshotTooOld: "SnapshotTooOld", SnapshotUnavailable: "SnapshotUnavailable",
	InvalidPipelineOperator: "InvalidPipelineOperator", MaxTimeMSExpired: "MaxTimeMSExpired",
	DocumentValidationFailure: "DocumentValidationFailure", Interrupted: "Interrupted",
	InterruptedAtShutdown: "InterruptedAtShutdown", InterruptedDueToReplStateChange: "InterruptedDueToReplStateChange",
	NotWritablePrimary: "NotWritablePrimary", NotPrimaryNoSecondaryOk: "NotPrimaryNoSecondaryOk",
	NotPrimaryOrSecondary: "NotPrimaryOrSecondary", PrimarySteppedDown: "PrimarySteppedDown",
	ShutdownInProgress: "ShutdownInProgress", HostNotFound: "HostNotFound", HostUnreachable: "HostUnreachable",
	SocketException: "SocketException", DuplicateKey: "DuplicateKey", Location40324: "Location40324", IncompatibleCollationVersion: "IncompatibleCollationVersion",
	Location15998: "Location15998", Location31254: "Location31254", FailedToParse: "FailedToParse",
	UnknownError: "UnknownError", Overflow: "Overflow", InvalidLength: "InvalidLength",
	ExceededTimeLimit: "ExceededTimeLimit", TransactionTooOld: "TransactionTooOld",
	IncompleteTransactionHistory: "IncompleteTransactionHistory", NoSuchTransaction: "NoSuchTransaction",
	StaleConfig: "StaleConfig", ReauthenticationRequired: "ReauthenticationRequired",
	CannotCreateIndex: "CannotCreateIndex", InvalidIndexSpecificationOption: "InvalidIndexSpecificationOption",
}

// CodeName returns the name mongod gives code, or "Location<code>" for
// codes without one, as mongod does.
func CodeName(code int32) string {
	if n, ok := names[code]; ok {
		return n
	}
	return fmt.Sprintf("Location%d", code)
}

// Error is a command failure as mongod reports it.
type Error struct {
	Code     int32
	CodeName string
	Message  string
	// Labels are errorLabels to attach to the reply.
	Labels []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%d): %s", e.CodeName, e.Code, e.Message)
}

// New returns an Error with code's name and a formatted message.
func New(code int32, format string, args ...any) *Error {
	return &Error{Code: code, CodeName: CodeName(code), Message: fmt.Sprintf(format, args...)}
}

// As returns err as an *Error; any other error becomes InternalError with
// its text, so every failure can still be sent as a reply.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InternalError, CodeName: CodeName(InternalError), Message: err.Error()}
}

// typeNames are the names mongod gives BSON types in messages and $type.
var typeNames = map[bson.Type]string{
	bson.TypeDouble: "double", bson.TypeString: "string", bson.TypeEmbeddedDocument: "object",
	bson.TypeArray: "array", bson.TypeBinary: "binData", bson.TypeUndefined: "undefined",
	bson.TypeObjectID: "objectId", bson.TypeBoolean: "bool", bson.TypeDateTime: "date",
	bson.TypeNull: "null", bson.TypeRegex: "regex", bson.TypeDBPointer: "dbPointer",
	bson.TypeJavaScript: "javascript", bson.TypeSymbol: "symbol",
	bson.TypeCodeWithScope: "javascriptWithScope", bson.TypeInt32: "int", bson.TypeTimestamp: "timestamp",
	bson.TypeInt64: "long", bson.TypeDecimal128: "decimal", bson.TypeMinKey: "minKey", bson.TypeMaxKey: "maxKey",
}

// TypeName returns mongod's name for BSON type t ("int", "long",
// "objectId", ...), or "type 0x.." for a byte that is no BSON type.
func TypeName(t bson.Type) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type 0x%02x", byte(t))
}
