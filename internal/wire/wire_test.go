package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// h decodes hex written with spaces between fields, as the tests lay out
// messages field by field.
func h(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

// Documents written out byte by byte from the BSON layout.
const (
	// {hello: 1, $db: "admin"}: 31 bytes.
	helloDocHex = "1f000000 10 68656c6c6f00 01000000 02 24646200 06000000 61646d696e00 00"
	// {insert: "c", $db: "db"}: 31 bytes.
	insertDocHex = "1f000000 02 696e7365727400 02000000 6300 02 24646200 03000000 646200 00"
	// {_id: 1} and {_id: 2}: 14 bytes each.
	id1Hex = "0e000000 10 5f696400 01000000 00"
	id2Hex = "0e000000 10 5f696400 02000000 00"
	// {isMaster: 1, helloOk: true}: 29 bytes.
	isMasterDocHex = "1d000000 10 69734d617374657200 01000000 08 68656c6c6f4f6b00 01 00"
	// {ok: 1.0}: 17 bytes.
	okDocHex = "11000000 01 6f6b00 000000000000f03f 00"
	// {_id: 1} as a field selector would look: reuse id1.
)

// helloMsgHex is an OP_MSG carrying helloDoc: length 52, requestID 1,
// responseTo 0, opCode 2013, flagBits 0, kind 0.
const helloMsgHex = "34000000 01000000 00000000 dd070000 00000000 00 " + helloDocHex

// insertMsgHex is an OP_MSG with insertDoc and a "documents" sequence of
// {_id:1},{_id:2}: 16+4+1+31+1+42 = 95 bytes, requestID 5, responseTo 0.
const insertMsgHex = "5f000000 05000000 00000000 dd070000 00000000 00 " + insertDocHex +
	" 01 2a000000 646f63756d656e747300 " + id1Hex + " " + id2Hex

// queryMsgHex is an OP_QUERY on admin.$cmd: length 68, requestID 7,
// opCode 2004, flags 0, "admin.$cmd", skip 0, return -1, isMasterDoc.
const queryMsgHex = "44000000 07000000 00000000 d4070000 00000000 61646d696e2e24636d6400 00000000 ffffffff " + isMasterDocHex

// replyMsgHex is an OP_REPLY: length 53, requestID 9, responseTo 7,
// opCode 1, responseFlags 8, cursorID 0, startingFrom 0, numberReturned 1.
const replyMsgHex = "35000000 09000000 07000000 01000000 08000000 0000000000000000 00000000 01000000 " + okDocHex

func TestAppendMsgExact(t *testing.T) {
	hello := bson.Raw(h(t, helloDocHex))
	insert := bson.Raw(h(t, insertDocHex))
	docs := []bson.Raw{h(t, id1Hex), h(t, id2Hex)}

	// With a checksum: length 56 and flagBits 1; the CRC-32C is computed
	// here with the standard library over the 52 bytes before it.
	sumPrefix := h(t, "38000000 02000000 03000000 dd070000 01000000 00 "+helloDocHex)
	crc := crc32.Checksum(sumPrefix, crc32.MakeTable(crc32.Castagnoli))
	withSum := binary.LittleEndian.AppendUint32(append([]byte(nil), sumPrefix...), crc)

	tests := []struct {
		name       string
		reqID, rsp int32
		flags      Flags
		body       bson.Raw
		seqs       []Sequence
		want       []byte
	}{
		{"hello", 1, 0, 0, hello, nil, h(t, helloMsgHex)},
		{"insert with sequence", 5, 0, 0, insert, []Sequence{{"documents", docs}}, h(t, insertMsgHex)},
		{"checksum", 2, 3, ChecksumPresent, hello, nil, withSum},
		{"moreToCome and exhaustAllowed", 1, 0, MoreToCome | ExhaustAllowed, hello, nil,
			h(t, "34000000 01000000 00000000 dd070000 02000100 00 "+helloDocHex)},
		{"empty sequence", 1, 0, 0, hello, []Sequence{{"x", nil}},
			h(t, "3b000000 01000000 00000000 dd070000 00000000 00 "+helloDocHex+" 01 06000000 7800")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("prefix")
			got := AppendMsg(append([]byte(nil), prefix...), tt.reqID, tt.rsp, tt.flags, tt.body, tt.seqs...)
			if !bytes.HasPrefix(got, prefix) {
				t.Fatalf("AppendMsg overwrote dst")
			}
			got = got[len(prefix):]
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("AppendMsg:\n got %x\nwant %x", got, tt.want)
			}
			m, err := ParseMsg(got)
			if err != nil {
				t.Fatalf("ParseMsg: %v", err)
			}
			if m.Flags != tt.flags || !bytes.Equal(m.Body, tt.body) || len(m.Sequences) != len(tt.seqs) {
				t.Fatalf("ParseMsg = %+v", m)
			}
			if m.Header != (Header{Length: int32(len(tt.want)), RequestID: tt.reqID, ResponseTo: tt.rsp, OpCode: OpMsg}) {
				t.Fatalf("header = %+v", m.Header)
			}
			for i, s := range m.Sequences {
				if s.Identifier != tt.seqs[i].Identifier || len(s.Docs) != len(tt.seqs[i].Docs) {
					t.Fatalf("sequence %d = %+v", i, s)
				}
				for j := range s.Docs {
					if !bytes.Equal(s.Docs[j], tt.seqs[i].Docs[j]) {
						t.Fatalf("sequence %d doc %d = %x", i, j, s.Docs[j])
					}
				}
			}
		})
	}
}

// TestLowLevelBuilders builds the insert message in place with the
// lower-level functions and checks it matches AppendMsg byte for byte.
func TestLowLevelBuilders(t *testing.T) {
	want := h(t, insertMsgHex)
	start, dst := AppendHeaderStart(nil, 5, 0, OpMsg)
	dst = AppendMsgFlags(dst, 0)
	dst = append(dst, 0)
	ds, dst := bson.AppendDocumentStart(dst)
	dst = bson.AppendStringElement(dst, "insert", "c")
	dst = bson.AppendStringElement(dst, "$db", "db")
	dst, err := bson.AppendDocumentEnd(dst, ds)
	if err != nil {
		t.Fatal(err)
	}
	ss, dst := AppendSequenceStart(dst, "documents")
	for i := int32(1); i <= 2; i++ {
		var d int
		d, dst = bson.AppendDocumentStart(dst)
		dst = bson.AppendInt32Element(dst, "_id", i)
		if dst, err = bson.AppendDocumentEnd(dst, d); err != nil {
			t.Fatal(err)
		}
	}
	dst = FinishSequence(dst, ss)
	dst = FinishMessage(dst, start, false)
	if !bytes.Equal(dst, want) {
		t.Fatalf("in-place build:\n got %x\nwant %x", dst, want)
	}

	// FinishMessage with checksum sets the flag, without clears it.
	withSum := FinishMessage(append([]byte(nil), dst...), 0, true)
	if len(withSum) != len(dst)+4 || Flags(binary.LittleEndian.Uint32(withSum[16:]))&ChecksumPresent == 0 {
		t.Fatalf("FinishMessage(checksum) = %x", withSum)
	}
	if _, err := ParseMsg(withSum); err != nil {
		t.Fatalf("ParseMsg(checksummed) = %v", err)
	}
	flagged := append([]byte(nil), dst...)
	flagged[16] |= 1
	if got := FinishMessage(flagged, 0, false); !bytes.Equal(got, want) {
		t.Fatalf("FinishMessage(no checksum) kept the flag: %x", got)
	}
	// Misused starts leave dst unchanged instead of panicking.
	for _, s := range []int{-1, len(dst) - 3, len(dst) + 10} {
		if got := FinishMessage(append([]byte(nil), dst...), s, true); !bytes.Equal(got, want) {
			t.Fatalf("FinishMessage(start %d) changed dst", s)
		}
		if got := FinishSequence(append([]byte(nil), dst...), s); !bytes.Equal(got, want) {
			t.Fatalf("FinishSequence(start %d) changed dst", s)
		}
	}
}

func TestParseMsgSequenceFirst(t *testing.T) {
	// Sections may come in any order: the sequence before the body.
	msg := h(t, "5f000000 05000000 00000000 dd070000 00000000 01 2a000000 646f63756d656e747300 "+
		id1Hex+" "+id2Hex+" 00 "+insertDocHex)
	m, err := ParseMsg(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Body, h(t, insertDocHex)) || len(m.Sequences) != 1 || len(m.Sequences[0].Docs) != 2 {
		t.Fatalf("ParseMsg = %+v", m)
	}
	// Documents alias the message.
	if &m.Body[0] != &msg[len(msg)-31] {
		t.Fatal("body was copied")
	}
	// Optional high flag bits other than exhaustAllowed are ignored and kept.
	msg[16+3] = 0x80
	if m, err = ParseMsg(msg); err != nil || m.Flags != 1<<31 {
		t.Fatalf("optional flag: %v, %v", m.Flags, err)
	}
}

func TestQueryReplyExact(t *testing.T) {
	query := Query{FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: h(t, isMasterDocHex)}
	if got := AppendQuery(nil, 7, query); !bytes.Equal(got, h(t, queryMsgHex)) {
		t.Fatalf("AppendQuery:\n got %x\nwant %x", got, h(t, queryMsgHex))
	}
	q, err := ParseQuery(h(t, queryMsgHex))
	if err != nil {
		t.Fatal(err)
	}
	if q.FullCollectionName != "admin.$cmd" || q.NumberToReturn != -1 || q.NumberToSkip != 0 ||
		!bytes.Equal(q.Query, query.Query) || q.ReturnFieldsSelector != nil {
		t.Fatalf("ParseQuery = %+v", q)
	}

	// With a selector, flags and skip; an empty query is the empty document.
	sel := Query{Flags: 4, FullCollectionName: "db.c", NumberToSkip: 2, NumberToReturn: 3, ReturnFieldsSelector: h(t, id1Hex)}
	want := h(t, "34000000 08000000 00000000 d4070000 04000000 64622e6300 02000000 03000000 0500000000 "+id1Hex)
	got := AppendQuery(nil, 8, sel)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendQuery(selector):\n got %x\nwant %x", got, want)
	}
	if q, err = ParseQuery(got); err != nil || !bytes.Equal(q.ReturnFieldsSelector, sel.ReturnFieldsSelector) ||
		q.Flags != 4 || q.NumberToSkip != 2 || len(q.Query) != 5 {
		t.Fatalf("ParseQuery(selector) = %+v, %v", q, err)
	}

	reply := Reply{ResponseFlags: 8, NumberReturned: 99, Documents: []bson.Raw{h(t, okDocHex)}}
	if got := AppendReply(nil, 9, 7, reply); !bytes.Equal(got, h(t, replyMsgHex)) {
		t.Fatalf("AppendReply:\n got %x\nwant %x", got, h(t, replyMsgHex))
	}
	r, err := ParseReply(h(t, replyMsgHex))
	if err != nil {
		t.Fatal(err)
	}
	if r.ResponseFlags != 8 || r.CursorID != 0 || r.NumberReturned != 1 || len(r.Documents) != 1 ||
		!bytes.Equal(r.Documents[0], h(t, okDocHex)) {
		t.Fatalf("ParseReply = %+v", r)
	}
	// Several documents, a cursor id and startingFrom.
	multi := Reply{CursorID: -2, StartingFrom: 4, Documents: []bson.Raw{h(t, id1Hex), h(t, id2Hex)}}
	wantMulti := h(t, "40000000 01000000 02000000 01000000 00000000 feffffffffffffff 04000000 02000000 "+id1Hex+" "+id2Hex)
	got = AppendReply(nil, 1, 2, multi)
	if !bytes.Equal(got, wantMulti) {
		t.Fatalf("AppendReply(multi):\n got %x\nwant %x", got, wantMulti)
	}
	if r, err = ParseReply(got); err != nil || r.CursorID != -2 || r.StartingFrom != 4 || len(r.Documents) != 2 {
		t.Fatalf("ParseReply(multi) = %+v, %v", r, err)
	}
	// No documents at all.
	empty := AppendReply(nil, 1, 2, Reply{})
	if r, err = ParseReply(empty); err != nil || len(r.Documents) != 0 || len(empty) != 36 {
		t.Fatalf("ParseReply(empty) = %+v, %v", r, err)
	}
}

func TestParseHeader(t *testing.T) {
	hd, err := ParseHeader(h(t, replyMsgHex))
	if err != nil || hd != (Header{Length: 53, RequestID: 9, ResponseTo: 7, OpCode: OpReply}) {
		t.Fatalf("ParseHeader = %+v, %v", hd, err)
	}
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"34000000 01000000 00000000 dd0700", "wire: header at byte 15: header needs 16 bytes, have 15"},
		{"", "wire: header at byte 0: header needs 16 bytes, have 0"},
		{"0f000000 01000000 00000000 dd070000", "wire: header at byte 0: messageLength 15 is below the 16-byte header"},
		{"ffffffff 01000000 00000000 dd070000", "wire: header at byte 0: messageLength -1 is below the 16-byte header"},
	} {
		_, err := ParseHeader(h(t, tt.in))
		var we *Error
		if !errors.As(err, &we) || err.Error() != tt.want {
			t.Errorf("ParseHeader(%s) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{OpMsg.String(), "OP_MSG"}, {OpQuery.String(), "OP_QUERY"}, {OpReply.String(), "OP_REPLY"},
		{OpCompressed.String(), "OP_COMPRESSED"}, {OpCode(2002).String(), "OP_UNKNOWN(2002)"},
		{CompressorNoop.String(), "noop"}, {CompressorSnappy.String(), "snappy"},
		{CompressorZlib.String(), "zlib"}, {CompressorZstd.String(), "zstd"},
		{Compressor(9).String(), "compressor(9)"},
	} {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
	for _, c := range []Compressor{CompressorNoop, CompressorSnappy, CompressorZlib, CompressorZstd} {
		if got, ok := CompressorByName(c.String()); !ok || got != c {
			t.Errorf("CompressorByName(%q) = %v, %v", c, got, ok)
		}
	}
	for _, name := range []string{"", "Snappy", "ZSTD", "gzip", "snoopy"} {
		if _, ok := CompressorByName(name); ok {
			t.Errorf("CompressorByName(%q) accepted", name)
		}
	}
}

func TestCompressible(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"hello", false}, {"isMaster", false}, {"ismaster", false}, {"saslStart", false},
		{"saslContinue", false}, {"getnonce", false}, {"authenticate", false}, {"createUser", false},
		{"updateUser", false}, {"copydbSaslStart", false}, {"copydbgetnonce", false}, {"copydb", false},
		// Other casings are different (unknown) commands, as the handshake spec says.
		{"ISMASTER", true}, {"Hello", true},
		{"find", true}, {"insert", true}, {"ping", true}, {"getMore", true}, {"", true},
	} {
		if got := Compressible(tt.name); got != tt.want {
			t.Errorf("Compressible(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
