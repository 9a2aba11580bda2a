package wire

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

// withLength returns msg with its length field set to len(msg).
func withLength(msg []byte) []byte {
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)))
	return msg
}

// withChecksum returns msg (length field fixed) with a CRC-32C appended.
func withChecksum(msg []byte) []byte {
	msg = append(msg, 0, 0, 0, 0)
	withLength(msg)
	sum := crc32.Checksum(msg[:len(msg)-4], crc32.MakeTable(crc32.Castagnoli))
	binary.LittleEndian.PutUint32(msg[len(msg)-4:], sum)
	return msg
}

func TestParseMsgErrors(t *testing.T) {
	msgHdr := "00000000 01000000 00000000 dd070000 "
	tests := []struct {
		name string
		msg  []byte
		want string
		is   error
	}{
		{"unknown section kind", withLength(h(t, msgHdr+"00000000 07 "+helloDocHex)),
			"wire: OP_MSG at byte 20: section kind 7 is unknown", nil},
		{"unknown section kind after body", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 02 00")),
			"wire: OP_MSG at byte 52: section kind 2 is unknown", nil},
		{"length field too large", h(t, "35000000 01000000 00000000 dd070000 00000000 00 "+helloDocHex),
			"wire: OP_MSG at byte 52: messageLength is 53 but only 52 bytes are present", ErrTruncated},
		{"length field too small", h(t, "33000000 01000000 00000000 dd070000 00000000 00 "+helloDocHex),
			"wire: OP_MSG at byte 51: messageLength is 51 but 52 bytes are present", nil},
		{"wrong opcode", withLength(h(t, "00000000 01000000 00000000 d4070000 00000000 00 "+helloDocHex)),
			"wire: OP_MSG at byte 12: opCode is OP_QUERY, want OP_MSG", nil},
		{"unknown required flag bit 2", withLength(h(t, msgHdr+"04000000 00 "+helloDocHex)),
			"wire: OP_MSG at byte 16: unknown required flag bits 0x00000004", nil},
		{"unknown required flag bit 15", withLength(h(t, msgHdr+"00800000 00 "+helloDocHex)),
			"wire: OP_MSG at byte 16: unknown required flag bits 0x00008000", nil},
		{"no sections", withLength(h(t, msgHdr+"00000000")),
			"wire: OP_MSG at byte 20: no sections", ErrTruncated},
		{"no flags", withLength(h(t, msgHdr+"000000")),
			"wire: OP_MSG at byte 19: flagBits needs 4 bytes, have 3", ErrTruncated},
		{"no body section", withLength(h(t, msgHdr+"00000000 01 06000000 7800")),
			"wire: OP_MSG at byte 20: no kind-0 section", nil},
		{"two body sections", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 00 "+helloDocHex)),
			"wire: OP_MSG at byte 52: second kind-0 section", nil},
		{"body longer than message", withLength(h(t, msgHdr+"00000000 00 20000000 10 68656c6c6f00 01000000 02 24646200 06000000 61646d696e00 00")),
			"wire: OP_MSG at byte 21: body document length 32 exceeds the 31 bytes left", ErrTruncated},
		{"body length below 5", withLength(h(t, msgHdr+"00000000 00 04000000")),
			"wire: OP_MSG at byte 21: body document length 4 is below the minimum of 5", nil},
		{"body length negative", withLength(h(t, msgHdr+"00000000 00 ffffffff 00")),
			"wire: OP_MSG at byte 21: body document length -1 is below the minimum of 5", nil},
		{"body invalid BSON", withLength(h(t, msgHdr+"00000000 00 0c000000 63 7800 00000000 00")),
			"wire: OP_MSG at byte 25: body document is not valid BSON", nil},
		{"sequence size beyond message", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 01 07000000 7800")),
			"wire: OP_MSG at byte 53: sequence size 7 exceeds the 6 bytes left", ErrTruncated},
		{"sequence size below 5", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 01 04000000")),
			"wire: OP_MSG at byte 53: sequence size 4 is below the minimum of 5", nil},
		{"sequence identifier unterminated", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 01 06000000 7878 00")),
			"wire: OP_MSG at byte 57: sequence identifier has no NUL terminator within the section", ErrTruncated},
		{"sequence document overruns section", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 01 10000000 7800 "+id1Hex)),
			`wire: OP_MSG at byte 59: sequence "x" document 0 length 14 exceeds the 10 bytes left`, ErrTruncated},
		{"sequence leftover bytes", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 01 16000000 7800 "+id1Hex+" 0000")),
			`wire: OP_MSG at byte 73: sequence "x" document 1 length needs 4 bytes, have 2`, ErrTruncated},
		{"duplicate identifier", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 01 06000000 7800 01 06000000 7800")),
			`wire: OP_MSG at byte 64: sequence identifier "x" appears twice`, nil},
		{"sequence invalid document", withLength(h(t, msgHdr+"00000000 00 "+helloDocHex+" 01 0b000000 7800 05000000 01")),
			`wire: OP_MSG at byte 63: sequence "x" document 0 is not valid BSON`, nil},
		{"bad checksum", func() []byte {
			m := withChecksum(h(t, msgHdr+"01000000 00 "+helloDocHex))
			m[len(m)-1] ^= 0xff
			return m
		}(), "wire: OP_MSG at byte 52: checksum is 0x", ErrChecksum},
		{"checksum over flipped body byte", func() []byte {
			m := withChecksum(h(t, msgHdr+"01000000 00 "+helloDocHex))
			m[30] ^= 1
			return m
		}(), "wire: OP_MSG at byte 52: checksum is 0x", ErrChecksum},
		{"checksum flag without room", withLength(h(t, msgHdr+"01000000 000000")),
			"wire: OP_MSG at byte 23: checksumPresent is set but there is no room for the checksum", ErrTruncated},
		{"checksum flag without sections", withChecksum(h(t, msgHdr+"01000000")),
			"wire: OP_MSG at byte 20: no sections", ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMsg(tt.msg)
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("ParseMsg = %v (%T), want *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("ParseMsg error\n got %q\nwant %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
}

func TestParseLegacyErrors(t *testing.T) {
	qHdr := "00000000 07000000 00000000 d4070000 "
	rHdr := "00000000 09000000 07000000 01000000 "
	tests := []struct {
		name  string
		parse func([]byte) error
		msg   []byte
		want  string
		is    error
	}{
		{"query wrong opcode", parseQueryErr, h(t, replyMsgHex),
			"wire: OP_QUERY at byte 12: opCode is OP_REPLY, want OP_QUERY", nil},
		{"query unterminated name", parseQueryErr, withLength(h(t, qHdr+"00000000 6162")),
			"wire: OP_QUERY at byte 20: fullCollectionName has no NUL terminator", ErrTruncated},
		{"query no skip/return", parseQueryErr, withLength(h(t, qHdr+"00000000 6100 0000")),
			"wire: OP_QUERY at byte 22: numberToSkip and numberToReturn need 8 bytes, have 2", ErrTruncated},
		{"query no document", parseQueryErr, withLength(h(t, qHdr+"00000000 6100 00000000 00000000")),
			"wire: OP_QUERY at byte 30: query document length needs 4 bytes, have 0", ErrTruncated},
		{"query trailing bytes", parseQueryErr, withLength(h(t, qHdr+"00000000 6100 00000000 00000000 0500000000 0500000000 00")),
			"wire: OP_QUERY at byte 40: 1 trailing bytes after returnFieldsSelector", nil},
		{"query bad selector", parseQueryErr, withLength(h(t, qHdr+"00000000 6100 00000000 00000000 0500000000 0600000000")),
			"wire: OP_QUERY at byte 35: returnFieldsSelector document length 6 exceeds the 5 bytes left", ErrTruncated},
		{"query no flags", parseQueryErr, withLength(h(t, qHdr+"00")),
			"wire: OP_QUERY at byte 16: flags needs 4 bytes, have 1", ErrTruncated},
		{"reply wrong opcode", parseReplyErr, h(t, queryMsgHex),
			"wire: OP_REPLY at byte 12: opCode is OP_QUERY, want OP_REPLY", nil},
		{"reply short fixed part", parseReplyErr, withLength(h(t, rHdr+"00000000 00000000")),
			"wire: OP_REPLY at byte 24: responseFlags, cursorID, startingFrom and numberReturned need 20 bytes, have 8", ErrTruncated},
		{"reply negative count", parseReplyErr, withLength(h(t, rHdr+"00000000 0000000000000000 00000000 ffffffff")),
			"wire: OP_REPLY at byte 32: numberReturned -1 is negative", nil},
		{"reply count beyond bytes", parseReplyErr, withLength(h(t, rHdr+"00000000 0000000000000000 00000000 04000000 "+okDocHex)),
			"wire: OP_REPLY at byte 32: numberReturned 4 documents cannot fit in the 17 bytes left", ErrTruncated},
		{"reply fewer documents than count", parseReplyErr, withLength(h(t, rHdr+"00000000 0000000000000000 00000000 03000000 "+okDocHex+" 00000000")),
			"wire: OP_REPLY at byte 53: document 1 length 0 is below the minimum of 5", nil},
		{"reply more documents than count", parseReplyErr, withLength(h(t, rHdr+"00000000 0000000000000000 00000000 00000000 "+okDocHex)),
			"wire: OP_REPLY at byte 36: 17 bytes follow the 0 documents numberReturned declares", nil},
		{"reply count larger than documents", parseReplyErr, withLength(h(t, rHdr+"00000000 0000000000000000 00000000 02000000 "+id1Hex+" 0000000000")),
			"wire: OP_REPLY at byte 50: document 1 length 0 is below the minimum of 5", nil},
		{"reply invalid document", parseReplyErr, withLength(h(t, rHdr+"00000000 0000000000000000 00000000 01000000 0500000001")),
			"wire: OP_REPLY at byte 40: document 0 is not valid BSON", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(tt.msg)
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("got %v (%T), want *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error\n got %q\nwant %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
}

func parseQueryErr(b []byte) error { _, err := ParseQuery(b); return err }
func parseReplyErr(b []byte) error { _, err := ParseReply(b); return err }
func parseMsgErr(b []byte) error   { _, err := ParseMsg(b); return err }
func decompressErr(b []byte) error { _, err := Decompress(nil, b, 1<<20); return err }

// validMessages are whole messages of each kind with the parser that reads
// them.
func validMessages(t *testing.T) []struct {
	name  string
	msg   []byte
	parse func([]byte) error
} {
	hello := h(t, helloMsgHex)
	out := []struct {
		name  string
		msg   []byte
		parse func([]byte) error
	}{
		{"OP_MSG hello", hello, parseMsgErr},
		{"OP_MSG insert", h(t, insertMsgHex), parseMsgErr},
		{"OP_MSG checksum", AppendMsg(nil, 1, 2, ChecksumPresent, h(t, helloDocHex)), parseMsgErr},
		{"OP_QUERY", h(t, queryMsgHex), parseQueryErr},
		{"OP_QUERY selector", AppendQuery(nil, 1, Query{FullCollectionName: "a.b", Query: h(t, id1Hex), ReturnFieldsSelector: h(t, id2Hex)}), parseQueryErr},
		{"OP_REPLY", h(t, replyMsgHex), parseReplyErr},
	}
	for _, c := range []Compressor{CompressorNoop, CompressorSnappy, CompressorZlib, CompressorZstd} {
		for _, src := range [][]byte{hello, h(t, insertMsgHex)} {
			cm, err := Compress(nil, src, c, -1)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, struct {
				name  string
				msg   []byte
				parse func([]byte) error
			}{"OP_COMPRESSED " + c.String(), cm, decompressErr})
		}
	}
	return out
}

// TestTruncatedEverywhere cuts every valid message at every byte, both as
// is (length field now wrong) and with the length field patched to match,
// and checks each parser returns an *Error without panicking. A message
// whose last bytes are optional can still parse when patched, which is
// allowed only where the format says so.
func TestTruncatedEverywhere(t *testing.T) {
	for _, v := range validMessages(t) {
		if err := v.parse(v.msg); err != nil {
			t.Fatalf("%s: valid message rejected: %v", v.name, err)
		}
		for i := 0; i < len(v.msg); i++ {
			cut := append([]byte(nil), v.msg[:i]...)
			err := v.parse(cut)
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("%s cut at %d: %v (%T), want *Error", v.name, i, err, err)
			}
			if i >= HeaderLen && !errors.Is(err, ErrTruncated) {
				t.Fatalf("%s cut at %d: %v is not ErrTruncated", v.name, i, err)
			}
			if i < HeaderLen {
				continue
			}
			patched := withLength(cut)
			err = v.parse(patched)
			if err == nil {
				// The OP_QUERY selector and OP_MSG sequences are
				// optional: cutting exactly before them leaves a valid
				// message.
				if (v.name == "OP_QUERY selector" && i == len(v.msg)-14) || (v.name == "OP_MSG insert" && i == 52) {
					continue
				}
				t.Fatalf("%s cut at %d with patched length parsed", v.name, i)
			}
			if !errors.As(err, &we) {
				t.Fatalf("%s cut at %d patched: %v (%T), want *Error", v.name, i, err, err)
			}
		}
		// A trailing byte is always an error.
		long := withLength(append(append([]byte(nil), v.msg...), 0))
		if err := v.parse(long); err == nil {
			t.Fatalf("%s with a trailing byte parsed", v.name)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Op: "OP_MSG", Offset: 21, Reason: "section kind 7 is unknown"}, "wire: OP_MSG at byte 21: section kind 7 is unknown"},
		{&Error{Op: "batch", Offset: -1, Reason: "too big", Err: ErrTooLarge}, "wire: batch: too big"},
		{&Error{Op: "read", Offset: 3, Reason: "reading", Err: io.ErrUnexpectedEOF}, "wire: read at byte 3: reading: unexpected EOF"},
		{&Error{Op: "OP_MSG", Offset: 0, Err: io.EOF}, "wire: OP_MSG at byte 0: EOF"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if tt.err.Unwrap() != tt.err.Err {
			t.Errorf("Unwrap() = %v", tt.err.Unwrap())
		}
	}
}
