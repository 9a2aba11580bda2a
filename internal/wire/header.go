package wire

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"
)

// HeaderLen is the size of the standard message header (MsgHeader).
const HeaderLen = 16

// DefaultMaxMessageSize is the message size cap used until the server has
// reported maxMessageSizeBytes in its hello reply.
const DefaultMaxMessageSize = 48_000_000

// OpCode identifies the kind of a wire protocol message.
type OpCode int32

// The opcodes this package encodes and decodes.
const (
	OpReply      OpCode = 1
	OpQuery      OpCode = 2004
	OpCompressed OpCode = 2012
	OpMsg        OpCode = 2013
)

// String returns the opcode's name as the specifications write it
// ("OP_MSG"), or "OP_UNKNOWN(n)".
func (op OpCode) String() string {
	switch op {
	case OpReply:
		return "OP_REPLY"
	case OpQuery:
		return "OP_QUERY"
	case OpCompressed:
		return "OP_COMPRESSED"
	case OpMsg:
		return "OP_MSG"
	}
	return "OP_UNKNOWN(" + strconv.Itoa(int(op)) + ")"
}

// Header is the standard message header that starts every message.
type Header struct {
	Length     int32 // total message size in bytes, header included
	RequestID  int32
	ResponseTo int32
	OpCode     OpCode
}

// ParseHeader decodes the header at the start of b. It fails when b is
// shorter than HeaderLen or when the length field is below HeaderLen, which
// no message can have.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, errorf("header", len(b), ErrTruncated,
			"header needs 16 bytes, have "+itoa(len(b)))
	}
	h := Header{
		Length:     int32(binary.LittleEndian.Uint32(b)),
		RequestID:  int32(binary.LittleEndian.Uint32(b[4:])),
		ResponseTo: int32(binary.LittleEndian.Uint32(b[8:])),
		OpCode:     OpCode(binary.LittleEndian.Uint32(b[12:])),
	}
	if h.Length < HeaderLen {
		return h, errorf("header", 0, nil,
			"messageLength "+itoa(int(h.Length))+" is below the 16-byte header")
	}
	return h, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendHeaderStart appends a header for op with a zero length placeholder
// and returns the message's start offset in out, for FinishMessage.
func AppendHeaderStart(dst []byte, requestID, responseTo int32, op OpCode) (start int, out []byte) {
	start = len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(requestID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(responseTo))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(op))
	return start, dst
}

// FinishMessage completes the message that starts at start: it patches the
// length field and, when checksum is true and the message is an OP_MSG,
// appends a CRC-32C over the whole message. For an OP_MSG it also sets or
// clears the checksumPresent flag to match, so flag and trailer cannot
// disagree. Other opcodes have no checksum field and ignore checksum.
func FinishMessage(dst []byte, start int, checksum bool) []byte {
	if start < 0 || len(dst)-start < HeaderLen {
		// Not a message started by AppendHeaderStart; leave it alone
		// rather than write outside it.
		return dst
	}
	msg := dst[start:]
	isMsg := OpCode(binary.LittleEndian.Uint32(msg[12:])) == OpMsg && len(msg) >= HeaderLen+4
	if !isMsg {
		checksum = false
	}
	if isMsg {
		f := binary.LittleEndian.Uint32(msg[16:])
		if checksum {
			f |= uint32(ChecksumPresent)
		} else {
			f &^= uint32(ChecksumPresent)
		}
		binary.LittleEndian.PutUint32(msg[16:], f)
	}
	n := len(msg)
	if checksum {
		n += 4
	}
	binary.LittleEndian.PutUint32(msg, uint32(n))
	if checksum {
		dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(msg, castagnoli))
	}
	return dst
}
