package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/mongoscope/mongoscope/bson"
)

// seedMessages are valid messages of every kind for the fuzz corpora.
func seedMessages(f *testing.F) [][]byte {
	return [][]byte{
		h(f, helloMsgHex),
		h(f, insertMsgHex),
		h(f, queryMsgHex),
		h(f, replyMsgHex),
		AppendMsg(nil, 1, 2, ChecksumPresent|MoreToCome, h(f, helloDocHex), Sequence{"a", nil}, Sequence{"b", nil}),
		AppendMsg(nil, 1, 2, ExhaustAllowed, h(f, insertDocHex), Sequence{"documents", docsOfBytes(f, id1Hex, id2Hex)}),
		h(f, "5f000000 05000000 00000000 dd070000 00000000 01 2a000000 646f63756d656e747300 "+id1Hex+" "+id2Hex+" 00 "+insertDocHex),
		AppendQuery(nil, 3, Query{FullCollectionName: "a.b", Query: h(f, id1Hex), ReturnFieldsSelector: h(f, id2Hex)}),
		AppendReply(nil, 4, 5, Reply{CursorID: 9, Documents: docsOfBytes(f, id1Hex, okDocHex)}),
		bigMsg(f, 3),
	}
}

func docsOfBytes(t testing.TB, hexes ...string) []bson.Raw {
	out := make([]bson.Raw, len(hexes))
	for i, s := range hexes {
		out[i] = h(t, s)
	}
	return out
}

func FuzzParseMessage(f *testing.F) {
	for _, m := range seedMessages(f) {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkErr := func(what string, err error) {
			var we *Error
			if err != nil && !errors.As(err, &we) {
				t.Fatalf("%s: %v (%T) is not *Error", what, err, err)
			}
		}
		hd, err := ParseHeader(data)
		checkErr("ParseHeader", err)

		buf, err := ReadMessage(bytes.NewReader(data), 1<<16)
		checkErr("ReadMessage", err)
		if err == nil {
			if len(buf.B) != int(hd.Length) || !bytes.Equal(buf.B, data[:len(buf.B)]) {
				t.Fatalf("ReadMessage returned %x from %x", buf.B, data)
			}
			buf.Release()
		}

		m, err := ParseMsg(data)
		checkErr("ParseMsg", err)
		if err == nil {
			checkMsgReencode(t, data, m)
		}
		q, err := ParseQuery(data)
		checkErr("ParseQuery", err)
		if err == nil {
			want := append([]byte(nil), data...)
			binary.LittleEndian.PutUint32(want[8:], 0) // AppendQuery writes responseTo 0
			if got := AppendQuery(nil, hd.RequestID, q); !bytes.Equal(got, want) {
				t.Fatalf("OP_QUERY re-encoded differently:\n got %x\nwant %x", got, want)
			}
		}
		r, err := ParseReply(data)
		checkErr("ParseReply", err)
		if err == nil {
			if got := AppendReply(nil, hd.RequestID, hd.ResponseTo, r); !bytes.Equal(got, data) {
				t.Fatalf("OP_REPLY re-encoded differently:\n got %x\nwant %x", got, data)
			}
		}
	})
}

// checkMsgReencode re-encodes a parsed OP_MSG with and without a checksum
// and compares with the input.
func checkMsgReencode(t *testing.T, data []byte, m Msg) {
	t.Helper()
	bodyFirst := data[HeaderLen+4] == sectionBody
	for _, sum := range []bool{true, false} {
		flags := m.Flags &^ ChecksumPresent
		if sum {
			flags |= ChecksumPresent
		}
		got := AppendMsg(nil, m.Header.RequestID, m.Header.ResponseTo, flags, m.Body, m.Sequences...)
		// The expected bytes: the input without its checksum, the flag set
		// as chosen, the length adjusted, then a checksum if chosen.
		want := append([]byte(nil), data...)
		if m.Flags&ChecksumPresent != 0 {
			want = want[:len(want)-4]
		}
		binary.LittleEndian.PutUint32(want[HeaderLen:], uint32(flags))
		want = FinishMessage(want, 0, sum)
		if bodyFirst {
			if !bytes.Equal(got, want) {
				t.Fatalf("OP_MSG re-encoded (checksum %v) differently:\n got %x\nwant %x", sum, got, want)
			}
			continue
		}
		// Sequences came first in the input; AppendMsg writes the body
		// first, so compare the decoded forms instead.
		if len(got) != len(want) {
			t.Fatalf("OP_MSG re-encoded to %d bytes, input (adjusted) has %d", len(got), len(want))
		}
		m2, err := ParseMsg(got)
		if err != nil {
			t.Fatalf("re-encoded OP_MSG does not parse: %v", err)
		}
		if !bytes.Equal(m2.Body, m.Body) || len(m2.Sequences) != len(m.Sequences) || m2.Flags != flags {
			t.Fatalf("re-encoded OP_MSG differs: %+v vs %+v", m2, m)
		}
		for i := range m.Sequences {
			a, b := m.Sequences[i], m2.Sequences[i]
			if a.Identifier != b.Identifier || len(a.Docs) != len(b.Docs) {
				t.Fatalf("sequence %d differs", i)
			}
			for j := range a.Docs {
				if !bytes.Equal(a.Docs[j], b.Docs[j]) {
					t.Fatalf("sequence %d document %d differs", i, j)
				}
			}
		}
	}
}

// fuzzMaxSize is small so the fuzzer spends its time on decoding, and so a
// bomb shows up at once.
const fuzzMaxSize = 1 << 12

// addCompressedSeeds adds payloads of c compressing each seed message, with
// their true size and with sizes that are off.
func addCompressedSeeds(f *testing.F, c Compressor) {
	for i, m := range seedMessages(f) {
		cm, err := Compress(nil, m, c, i%10)
		if err != nil {
			f.Fatal(err)
		}
		payload := cm[HeaderLen+compressedFixed:]
		size := int32(len(m) - HeaderLen)
		op := int32(binary.LittleEndian.Uint32(m[12:]))
		f.Add(payload, size, op, int32(i))
		if i == 0 {
			f.Add(payload, size+1, op, int32(i))
			f.Add(payload, size-1, op, int32(i))
			f.Add(payload, int32(fuzzMaxSize+1), op, int32(i))
			f.Add(payload[:len(payload)/2], size, op, int32(i))
		}
	}
	f.Add([]byte{}, int32(0), int32(OpMsg), int32(0))
}

// fuzzDecompress builds an OP_COMPRESSED message around the fuzzer's
// payload and header values, decompresses it, and checks the result against
// reference, a direct decoding with the compressor library.
func fuzzDecompress(t *testing.T, c Compressor, payload []byte, size, op, reqID int32, reference func([]byte, int) ([]byte, bool)) {
	msg := compressedMsg(reqID, reqID^0x5a5a, OpCode(op), size, byte(c), payload)
	out, err := Decompress(nil, msg, fuzzMaxSize)
	if err != nil {
		var we *Error
		if !errors.As(err, &we) {
			t.Fatalf("Decompress: %v (%T) is not *Error", err, err)
		}
		return
	}
	if len(out) != HeaderLen+int(size) {
		t.Fatalf("Decompress produced %d bytes, declared %d", len(out), HeaderLen+int(size))
	}
	hd, err := ParseHeader(out)
	if err != nil || int(hd.Length) != len(out) || hd.OpCode != OpCode(op) || hd.RequestID != reqID || hd.ResponseTo != reqID^0x5a5a {
		t.Fatalf("rebuilt header %+v, %v", hd, err)
	}
	if want, ok := reference(payload, int(size)); ok && !bytes.Equal(out[HeaderLen:], want) {
		t.Fatalf("Decompress disagrees with the library:\n got %x\nwant %x", out[HeaderLen:], want)
	}
}

func FuzzDecompressSnappy(f *testing.F) {
	addCompressedSeeds(f, CompressorSnappy)
	f.Fuzz(func(t *testing.T, payload []byte, size, op, reqID int32) {
		fuzzDecompress(t, CompressorSnappy, payload, size, op, reqID, func(p []byte, _ int) ([]byte, bool) {
			got, err := snappy.Decode(nil, p)
			return got, err == nil
		})
	})
}

func FuzzDecompressZlib(f *testing.F) {
	addCompressedSeeds(f, CompressorZlib)
	f.Fuzz(func(t *testing.T, payload []byte, size, op, reqID int32) {
		fuzzDecompress(t, CompressorZlib, payload, size, op, reqID, func(p []byte, n int) ([]byte, bool) {
			zr, err := zlib.NewReader(bytes.NewReader(p))
			if err != nil {
				return nil, false
			}
			got, err := io.ReadAll(io.LimitReader(zr, int64(n)+1))
			return got, err == nil
		})
	})
}

func FuzzDecompressZstd(f *testing.F) {
	addCompressedSeeds(f, CompressorZstd)
	ref, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(fuzzMaxSize))
	if err != nil {
		f.Fatal(err)
	}
	defer ref.Close()
	f.Fuzz(func(t *testing.T, payload []byte, size, op, reqID int32) {
		fuzzDecompress(t, CompressorZstd, payload, size, op, reqID, func(p []byte, _ int) ([]byte, bool) {
			got, err := ref.DecodeAll(p, nil)
			return got, err == nil
		})
	})
}
