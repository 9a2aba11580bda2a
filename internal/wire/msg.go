package wire

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
)

// Flags are an OP_MSG's flagBits.
type Flags uint32

// The flag bits OP_MSG.md defines. Bits 0-15 are required: a receiver must
// reject a message with one it does not know. Bits 16-31 are optional.
const (
	ChecksumPresent Flags = 1 << 0
	MoreToCome      Flags = 1 << 1
	ExhaustAllowed  Flags = 1 << 16
)

// requiredUnknown are the required flag bits this package does not know.
const requiredUnknown = Flags(0xFFFF) &^ (ChecksumPresent | MoreToCome)

// Sequence is a kind-1 section: a named run of documents, such as an
// insert's "documents".
type Sequence struct {
	Identifier string
	Docs       []bson.Raw
}

// Msg is a decoded OP_MSG. Body and the documents of Sequences alias the
// message bytes.
type Msg struct {
	Header    Header
	Flags     Flags
	Body      bson.Raw // the kind-0 section
	Sequences []Sequence
}

const (
	sectionBody     = 0
	sectionSequence = 1
)

// AppendMsg appends a whole OP_MSG: flags, body as the kind-0 section, then
// one kind-1 section per sequence. When flags has ChecksumPresent a CRC-32C
// over the message is appended. body must be a whole BSON document and
// identifiers must not contain a NUL byte; neither is checked here, since
// the caller builds both (ParseMsg on the receiving side checks them).
func AppendMsg(dst []byte, requestID, responseTo int32, flags Flags, body bson.Raw, seqs ...Sequence) []byte {
	start, dst := AppendHeaderStart(dst, requestID, responseTo, OpMsg)
	dst = AppendMsgFlags(dst, flags)
	dst = append(dst, sectionBody)
	dst = append(dst, body...)
	for i := range seqs {
		var s int
		s, dst = AppendSequenceStart(dst, seqs[i].Identifier)
		for _, d := range seqs[i].Docs {
			dst = append(dst, d...)
		}
		dst = FinishSequence(dst, s)
	}
	return FinishMessage(dst, start, flags&ChecksumPresent != 0)
}

// AppendMsgFlags appends an OP_MSG's flagBits. FinishMessage later sets or
// clears ChecksumPresent to match its checksum argument.
func AppendMsgFlags(dst []byte, f Flags) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(f))
}

// AppendSequenceStart appends the start of a kind-1 section: the kind byte,
// a size placeholder and the identifier as a cstring (it must not contain a
// NUL byte). The caller appends the documents, then calls FinishSequence with
// start.
func AppendSequenceStart(dst []byte, identifier string) (start int, out []byte) {
	dst = append(dst, sectionSequence)
	start = len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = append(dst, identifier...)
	dst = append(dst, 0)
	return start, dst
}

// FinishSequence patches the size of the kind-1 section begun at start.
func FinishSequence(dst []byte, start int) []byte {
	if start < 0 || len(dst)-start < 4 {
		return dst
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// ParseMsg decodes one whole OP_MSG, header included. It checks that the
// length field equals len(msg), that no unknown required flag is set, the
// checksum when one is present, that there is exactly one kind-0 section,
// that every section and document fits its declared size exactly, that
// sequence identifiers are unique, and that every document is valid BSON.
// The returned documents alias msg.
func ParseMsg(msg []byte) (Msg, error) { return parseMsg(msg, true) }

// ParseMsgFraming is ParseMsg that checks only the body document's framing
// (its length within the message and its terminating NUL), not its
// elements. A caller uses it for a reply whose reader checks as it reads
// (every reader of package bson does, and returns a typed error), to skip
// scanning a large cursor batch twice. Sequence documents are checked in
// full.
func ParseMsgFraming(msg []byte) (Msg, error) { return parseMsg(msg, false) }

func parseMsg(msg []byte, validateBody bool) (Msg, error) {
	const op = "OP_MSG"
	var m Msg
	h, err := parseHeaderFor(op, msg, OpMsg)
	if err != nil {
		return m, err
	}
	m.Header = h
	if len(msg) < HeaderLen+4 {
		return m, errorf(op, len(msg), ErrTruncated, "flagBits needs 4 bytes, have "+itoa(len(msg)-HeaderLen))
	}
	m.Flags = Flags(binary.LittleEndian.Uint32(msg[HeaderLen:]))
	if bad := m.Flags & requiredUnknown; bad != 0 {
		return m, errorf(op, HeaderLen, nil, "unknown required flag bits 0x"+hex32(uint32(bad)))
	}
	end := len(msg)
	if m.Flags&ChecksumPresent != 0 {
		if end < HeaderLen+4+4 {
			return m, errorf(op, end, ErrTruncated, "checksumPresent is set but there is no room for the checksum")
		}
		end -= 4
		want := binary.LittleEndian.Uint32(msg[end:])
		if got := crc32.Checksum(msg[:end], castagnoli); got != want {
			return m, errorf(op, end, ErrChecksum,
				"checksum is 0x"+hex32(want)+", message has CRC-32C 0x"+hex32(got))
		}
	}
	pos := HeaderLen + 4
	if pos == end {
		return m, errorf(op, pos, ErrTruncated, "no sections")
	}
	haveBody := false
	for pos < end {
		kind := msg[pos]
		secStart := pos
		pos++
		switch kind {
		case sectionBody:
			if haveBody {
				return m, errorf(op, secStart, nil, "second kind-0 section")
			}
			var doc bson.Raw
			var err error
			if validateBody {
				doc, err = docAt(op, msg[:end], pos, end, docName{what: "body document", index: -1})
			} else {
				doc, err = framedDocAt(op, msg[:end], pos, end, docName{what: "body document", index: -1})
			}
			if err != nil {
				return m, err
			}
			m.Body = doc
			haveBody = true
			pos += len(doc)
		case sectionSequence:
			seq, n, err := parseSequence(msg[:end], pos)
			if err != nil {
				return m, err
			}
			for i := range m.Sequences {
				if m.Sequences[i].Identifier == seq.Identifier {
					return m, errorf(op, pos+4, nil, "sequence identifier "+quote(seq.Identifier)+" appears twice")
				}
			}
			m.Sequences = append(m.Sequences, seq)
			pos += n
		default:
			return m, errorf(op, secStart, nil, "section kind "+itoa(int(kind))+" is unknown")
		}
	}
	if !haveBody {
		return m, errorf(op, HeaderLen+4, nil, "no kind-0 section")
	}
	return m, nil
}

// parseSequence decodes the kind-1 payload at pos (its size field) within
// msg and returns it and its size.
func parseSequence(msg []byte, pos int) (Sequence, int, error) {
	const op = "OP_MSG"
	var s Sequence
	if len(msg)-pos < 4 {
		return s, 0, errorf(op, pos, ErrTruncated, "sequence size needs 4 bytes, have "+itoa(len(msg)-pos))
	}
	size := int(int32(binary.LittleEndian.Uint32(msg[pos:])))
	if size < 5 {
		return s, 0, errorf(op, pos, nil, "sequence size "+itoa(size)+" is below the minimum of 5")
	}
	if size > len(msg)-pos {
		return s, 0, errorf(op, pos, ErrTruncated,
			"sequence size "+itoa(size)+" exceeds the "+itoa(len(msg)-pos)+" bytes left")
	}
	end := pos + size
	idStart := pos + 4
	id, next, ok := cstring(msg[:end], idStart)
	if !ok {
		return s, 0, errorf(op, idStart, ErrTruncated, "sequence identifier has no NUL terminator within the section")
	}
	s.Identifier = id
	// Count first so Docs is allocated once, at its final size.
	count := 0
	for p := next; p < end; count++ {
		doc, err := docAt(op, msg[:end], p, end, docName{what: "sequence document", seq: id, index: count})
		if err != nil {
			return s, 0, err
		}
		p += len(doc)
	}
	if count > 0 {
		s.Docs = make([]bson.Raw, 0, count)
		for p := next; p < end; {
			n := int(binary.LittleEndian.Uint32(msg[p:]))
			s.Docs = append(s.Docs, bson.Raw(msg[p:p+n:p+n]))
			p += n
		}
	}
	return s, size, nil
}

// docName names a document in errors. It is built only when an error
// happens, so the success path does not allocate for it.
type docName struct {
	what  string // "body document", "document", "query document", ...
	seq   string // the sequence identifier, for sequence documents
	index int    // the document's index, or -1
}

func (n docName) String() string {
	s := n.what
	if n.seq != "" || n.what == "sequence document" {
		s = "sequence " + quote(n.seq) + " document"
	}
	if n.index >= 0 {
		s += " " + itoa(n.index)
	}
	return s
}

// framedDocAt returns the document at pos, which must end by end, checking
// only its length and its terminating NUL.
func framedDocAt(op string, msg []byte, pos, end int, name docName) (bson.Raw, error) {
	if end-pos < 4 {
		return nil, errorf(op, pos, ErrTruncated, name.String()+" length needs 4 bytes, have "+itoa(end-pos))
	}
	n := int(int32(binary.LittleEndian.Uint32(msg[pos:])))
	if n < 5 {
		return nil, errorf(op, pos, nil, name.String()+" length "+itoa(n)+" is below the minimum of 5")
	}
	if n > end-pos {
		return nil, errorf(op, pos, ErrTruncated,
			name.String()+" length "+itoa(n)+" exceeds the "+itoa(end-pos)+" bytes left")
	}
	if msg[pos+n-1] != 0 {
		return nil, errorf(op, pos+n-1, nil, name.String()+" does not end with a NUL byte")
	}
	return bson.Raw(msg[pos : pos+n : pos+n]), nil
}

// docAt returns the validated document at pos, which must end by end.
func docAt(op string, msg []byte, pos, end int, name docName) (bson.Raw, error) {
	if end-pos < 4 {
		return nil, errorf(op, pos, ErrTruncated, name.String()+" length needs 4 bytes, have "+itoa(end-pos))
	}
	n := int(int32(binary.LittleEndian.Uint32(msg[pos:])))
	if n < 5 {
		return nil, errorf(op, pos, nil, name.String()+" length "+itoa(n)+" is below the minimum of 5")
	}
	if n > end-pos {
		return nil, errorf(op, pos, ErrTruncated,
			name.String()+" length "+itoa(n)+" exceeds the "+itoa(end-pos)+" bytes left")
	}
	doc := bson.Raw(msg[pos : pos+n : pos+n])
	if err := doc.Validate(); err != nil {
		off := pos
		var de *bson.DecodeError
		if errors.As(err, &de) && de.Offset >= 0 {
			off += de.Offset
		}
		return nil, errorf(op, off, err, name.String()+" is not valid BSON")
	}
	return doc, nil
}

// parseHeaderFor decodes msg's header and checks the opcode and that the
// length field matches len(msg).
func parseHeaderFor(op string, msg []byte, want OpCode) (Header, error) {
	h, err := ParseHeader(msg)
	if err != nil {
		e := err.(*Error)
		e.Op = op
		return h, e
	}
	if h.OpCode != want {
		return h, errorf(op, 12, nil, "opCode is "+h.OpCode.String()+", want "+want.String())
	}
	if int(h.Length) != len(msg) {
		if int(h.Length) > len(msg) {
			return h, errorf(op, len(msg), ErrTruncated,
				"messageLength is "+itoa(int(h.Length))+" but only "+itoa(len(msg))+" bytes are present")
		}
		return h, errorf(op, int(h.Length), nil,
			"messageLength is "+itoa(int(h.Length))+" but "+itoa(len(msg))+" bytes are present")
	}
	return h, nil
}

// cstring returns the NUL-terminated string at pos and the offset after it.
func cstring(b []byte, pos int) (string, int, bool) {
	for i := pos; i < len(b); i++ {
		if b[i] == 0 {
			return string(b[pos:i]), i + 1, true
		}
	}
	return "", 0, false
}

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b[:])
}

// quote shows an identifier from the wire in an error; it is bounded so a
// hostile peer cannot make errors huge.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}
