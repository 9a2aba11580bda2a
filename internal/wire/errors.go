package wire

import (
	"errors"
	"strconv"
)

// Sentinel errors, matched with errors.Is through an *Error's Err field.
var (
	// ErrChecksum reports an OP_MSG whose CRC-32C does not match its bytes.
	ErrChecksum = errors.New("wire: checksum mismatch")
	// ErrTooLarge reports a size over a cap: a message over maxSize, a
	// document over maxBsonObjectSize, a batch that fits in no message.
	ErrTooLarge = errors.New("wire: size over limit")
	// ErrTruncated reports a message or field that ends before its declared
	// size.
	ErrTruncated = errors.New("wire: message truncated")
)

// Error describes a message that cannot be decoded or a size limit that is
// exceeded.
type Error struct {
	// Op is the message kind or step: "OP_MSG", "OP_QUERY", "OP_REPLY",
	// "OP_COMPRESSED", "header", "read", "batch", "encode".
	Op string
	// Offset is the byte offset, from the start of the message, where the
	// problem was found; negative when no offset applies.
	Offset int
	// Reason says what is wrong, naming the field.
	Reason string
	// Err is the underlying cause (a sentinel above, a *bson.DecodeError,
	// an I/O or decompressor error), or nil.
	Err error
}

// Error formats e as "wire: OP at byte N: reason: cause". The cause is left
// out when it is one of this package's sentinels, which only classify.
func (e *Error) Error() string {
	b := make([]byte, 0, 64+len(e.Reason))
	b = append(b, "wire: "...)
	b = append(b, e.Op...)
	if e.Offset >= 0 {
		b = append(b, " at byte "...)
		b = strconv.AppendInt(b, int64(e.Offset), 10)
	}
	if e.Reason != "" {
		b = append(b, ": "...)
		b = append(b, e.Reason...)
	}
	if e.Err != nil && !isSentinel(e.Err) {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

func isSentinel(err error) bool {
	return err == ErrChecksum || err == ErrTooLarge || err == ErrTruncated
}

func errorf(op string, off int, cause error, reason string) *Error {
	return &Error{Op: op, Offset: off, Reason: reason, Err: cause}
}

// itoa keeps error construction readable.
func itoa(n int) string { return strconv.Itoa(n) }
