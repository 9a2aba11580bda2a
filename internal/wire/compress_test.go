package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/mongoscope/mongoscope/bson"
)

var allCompressors = []Compressor{CompressorNoop, CompressorSnappy, CompressorZlib, CompressorZstd}

// bigMsg builds an OP_MSG with n documents of compressible text.
func bigMsg(t testing.TB, n int) []byte {
	t.Helper()
	docs := make([]bson.Raw, n)
	for i := range docs {
		s, d := bson.AppendDocumentStart(nil)
		d = bson.AppendInt32Element(d, "_id", int32(i))
		d = bson.AppendStringElement(d, "text", strings.Repeat("the quick brown fox ", 5))
		d, err := bson.AppendDocumentEnd(d, s)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = d
	}
	return AppendMsg(nil, 42, 41, 0, h(t, insertDocHex), Sequence{"documents", docs})
}

// compressedMsg builds an OP_COMPRESSED message field by field.
func compressedMsg(reqID, respTo int32, orig OpCode, size int32, c byte, payload []byte) []byte {
	start, b := AppendHeaderStart(nil, reqID, respTo, OpCompressed)
	b = binary.LittleEndian.AppendUint32(b, uint32(orig))
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = append(b, c)
	b = append(b, payload...)
	return FinishMessage(b, start, false)
}

func TestCompressRoundTrip(t *testing.T) {
	msgs := map[string][]byte{
		"hello":   h(t, helloMsgHex),
		"insert":  h(t, insertMsgHex),
		"query":   h(t, queryMsgHex),
		"reply":   h(t, replyMsgHex),
		"big":     bigMsg(t, 500),
		"header":  h(t, "10000000 01000000 02000000 dd070000"), // nothing after the header
		"checked": AppendMsg(nil, 3, 4, ChecksumPresent, h(t, helloDocHex)),
	}
	type variant struct {
		c     Compressor
		level int
	}
	variants := []variant{{CompressorNoop, 0}, {CompressorSnappy, 0}, {CompressorZstd, 0}}
	for level := -1; level <= 9; level++ {
		variants = append(variants, variant{CompressorZlib, level})
	}
	for name, msg := range msgs {
		for _, v := range variants {
			cm, err := Compress([]byte("x"), msg, v.c, v.level)
			if err != nil {
				t.Fatalf("%s %v/%d: Compress: %v", name, v.c, v.level, err)
			}
			cm = cm[1:]
			hd, err := ParseHeader(cm)
			if err != nil || int(hd.Length) != len(cm) || hd.OpCode != OpCompressed ||
				hd.RequestID != int32(binary.LittleEndian.Uint32(msg[4:])) ||
				hd.ResponseTo != int32(binary.LittleEndian.Uint32(msg[8:])) {
				t.Fatalf("%s %v: header %+v, %v", name, v.c, hd, err)
			}
			if got := binary.LittleEndian.Uint32(cm[16:]); got != binary.LittleEndian.Uint32(msg[12:]) {
				t.Fatalf("%s %v: originalOpcode %d", name, v.c, got)
			}
			if got := int(binary.LittleEndian.Uint32(cm[20:])); got != len(msg)-HeaderLen {
				t.Fatalf("%s %v: uncompressedSize %d", name, v.c, got)
			}
			if Compressor(cm[24]) != v.c {
				t.Fatalf("%s %v: compressorId %d", name, v.c, cm[24])
			}
			if name == "big" && v.c != CompressorNoop && !(v.c == CompressorZlib && v.level == 0) && len(cm) > len(msg)/2 {
				t.Errorf("%s %v/%d: %d bytes compressed to %d", name, v.c, v.level, len(msg), len(cm))
			}
			out, err := Decompress([]byte("y"), cm, len(msg))
			if err != nil {
				t.Fatalf("%s %v/%d: Decompress: %v", name, v.c, v.level, err)
			}
			if !bytes.Equal(out[1:], msg) || out[0] != 'y' {
				t.Fatalf("%s %v/%d: round trip changed the message", name, v.c, v.level)
			}
		}
	}
}

// TestDecompressHandBuilt decodes payloads written by hand from each
// format's spec, so decoding does not only agree with our own encoder.
func TestDecompressHandBuilt(t *testing.T) {
	msg := h(t, helloMsgHex)
	body := msg[HeaderLen:] // 36 bytes
	// Snappy block: varint length 36, one literal of 36 bytes (tag (36-1)<<2).
	snappyPayload := append([]byte{0x24, 35 << 2}, body...)
	// zlib: CMF 0x78 FLG 0x01, one final stored block (BFINAL=1, BTYPE=00),
	// LEN 36, NLEN ^36, the bytes, then Adler-32 big-endian.
	zlibPayload := []byte{0x78, 0x01, 0x01, 0x24, 0x00, 0xdb, 0xff}
	zlibPayload = append(zlibPayload, body...)
	zlibPayload = binary.BigEndian.AppendUint32(zlibPayload, adler32.Checksum(body))
	// zstd: magic, descriptor 0x20 (single segment, 1-byte content size),
	// content size 36, one last raw block of 36 bytes (header 1|0<<1|36<<3).
	zstdPayload := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x24, 0x21, 0x01, 0x00}
	zstdPayload = append(zstdPayload, body...)

	for _, tt := range []struct {
		c       Compressor
		payload []byte
	}{
		{CompressorNoop, body},
		{CompressorSnappy, snappyPayload},
		{CompressorZlib, zlibPayload},
		{CompressorZstd, zstdPayload},
	} {
		cm := compressedMsg(1, 0, OpMsg, 36, byte(tt.c), tt.payload)
		out, err := Decompress(nil, cm, 36)
		if err != nil {
			t.Fatalf("%v: %v", tt.c, err)
		}
		if !bytes.Equal(out, msg) {
			t.Fatalf("%v:\n got %x\nwant %x", tt.c, out, msg)
		}
	}
	// The noop encoding is exact: header (length 61, opCode 2012),
	// originalOpcode 2013, uncompressedSize 36, compressorId 0, body.
	want := append(h(t, "3d000000 01000000 00000000 dc070000 dd070000 24000000 00"), body...)
	if got, err := Compress(nil, msg, CompressorNoop, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Compress(noop) = %x, %v\nwant %x", got, err, want)
	}
}

func TestDecompressErrors(t *testing.T) {
	msg := h(t, helloMsgHex)
	body := msg[HeaderLen:]
	payloads := map[Compressor][]byte{}
	for _, c := range allCompressors {
		cm, err := Compress(nil, msg, c, 6)
		if err != nil {
			t.Fatal(err)
		}
		payloads[c] = cm[HeaderLen+compressedFixed:]
	}
	type tc struct {
		name string
		msg  []byte
		max  int
		want string
		is   error
	}
	tests := []tc{
		{"unknown compressor", compressedMsg(1, 0, OpMsg, 36, 4, body), 100,
			"wire: OP_COMPRESSED at byte 24: compressor id 4 is unknown", nil},
		{"reserved compressor 255", compressedMsg(1, 0, OpMsg, 36, 255, body), 100,
			"wire: OP_COMPRESSED at byte 24: compressor id 255 is unknown", nil},
		{"over maxSize", compressedMsg(1, 0, OpMsg, 36, 0, body), 35,
			"wire: OP_COMPRESSED at byte 20: uncompressedSize 36 exceeds the limit of 35", ErrTooLarge},
		{"negative size", compressedMsg(1, 0, OpMsg, -1, 0, body), 100,
			"wire: OP_COMPRESSED at byte 20: uncompressedSize -1 is negative", nil},
		{"nested OP_COMPRESSED", compressedMsg(1, 0, OpCompressed, 36, 0, body), 100,
			"wire: OP_COMPRESSED at byte 16: originalOpcode is OP_COMPRESSED", nil},
		{"not OP_COMPRESSED", msg, 100, "wire: OP_COMPRESSED at byte 12: opCode is OP_MSG, want OP_COMPRESSED", nil},
		{"short fixed part", withLength(h(t, "00000000 01000000 00000000 dc070000 dd070000 2400")), 100,
			"wire: OP_COMPRESSED at byte 22: originalOpcode, uncompressedSize and compressorId need 9 bytes, have 6", ErrTruncated},
		{"wrong length field", append(compressedMsg(1, 0, OpMsg, 36, 0, body), 0), 100,
			"wire: OP_COMPRESSED at byte 61: messageLength is 61 but 62 bytes are present", nil},
	}
	for _, c := range allCompressors {
		for _, size := range []int32{35, 37, 0, 1000} {
			tests = append(tests, tc{c.String() + " size mismatch " + itoa(int(size)),
				compressedMsg(1, 0, OpMsg, size, byte(c), payloads[c]), 2000, "wire: OP_COMPRESSED at byte 25: ", nil})
		}
		tests = append(tests, tc{c.String() + " empty payload",
			compressedMsg(1, 0, OpMsg, 36, byte(c), nil), 2000, "wire: OP_COMPRESSED at byte 25: ", nil})
		if c != CompressorNoop {
			tests = append(tests, tc{c.String() + " garbage payload",
				compressedMsg(1, 0, OpMsg, 36, byte(c), bytes.Repeat([]byte{0xff}, 40)), 2000, "wire: OP_COMPRESSED at byte 25: ", nil})
		}
	}
	tests = append(tests,
		tc{"zlib trailing bytes", compressedMsg(1, 0, OpMsg, 36, 2, append(append([]byte(nil), payloads[CompressorZlib]...), 1, 2)), 100,
			"wire: OP_COMPRESSED at byte 25: zlib payload: bytes follow the end of the zlib stream", nil},
		tc{"snappy decoded length mismatch", compressedMsg(1, 0, OpMsg, 20, 1, payloads[CompressorSnappy]), 100,
			"wire: OP_COMPRESSED at byte 25: snappy payload decodes to 36 bytes, uncompressedSize is 20", nil},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := Decompress(dst, tt.msg, tt.max)
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("Decompress = %v (%T), want *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error\n got %q\nwant %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.is)
			}
			if string(out) != "keep" {
				t.Fatalf("failed Decompress returned %q, want dst unchanged", out)
			}
		})
	}
}

// TestDecompressCorrupted flips every byte of each compressed payload (and
// the size fields) and checks Decompress never panics, errors with *Error,
// or produces exactly the declared size.
func TestDecompressCorrupted(t *testing.T) {
	for _, c := range allCompressors {
		cm, err := Compress(nil, bigMsg(t, 20), c, -1)
		if err != nil {
			t.Fatal(err)
		}
		for i := HeaderLen; i < len(cm); i++ {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				bad := append([]byte(nil), cm...)
				bad[i] ^= x
				out, err := Decompress(nil, bad, 1<<16)
				if err != nil {
					var we *Error
					if !errors.As(err, &we) {
						t.Fatalf("%v byte %d: %v (%T)", c, i, err, err)
					}
					continue
				}
				if want := HeaderLen + int(binary.LittleEndian.Uint32(bad[20:])); len(out) != want {
					t.Fatalf("%v byte %d: %d bytes, declared %d", c, i, len(out), want)
				}
			}
		}
	}
}

// TestDecompressionBomb sends 8 MiB of zeros compressed into a few KiB and
// declares a small size: Decompress must fail without allocating anywhere
// near the real output.
func TestDecompressionBomb(t *testing.T) {
	const real = 8 << 20
	zeros := make([]byte, real)
	var streamed bytes.Buffer
	zw, err := zstd.NewWriter(&streamed, zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(false))
	if err != nil {
		t.Fatal(err)
	}
	// Streamed in pieces, so the frame declares no content size.
	for i := 0; i < real; i += 1 << 16 {
		if _, err := zw.Write(zeros[i : i+1<<16]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	bombs := map[string][]byte{}
	for _, c := range []Compressor{CompressorSnappy, CompressorZlib, CompressorZstd} {
		body := append(make([]byte, 0, HeaderLen+real), h(t, "10000000 01000000 00000000 dd070000")...)
		body = withLength(append(body, zeros...))
		cm, err := Compress(nil, body, c, 9)
		if err != nil {
			t.Fatal(err)
		}
		bombs[c.String()] = cm[HeaderLen+compressedFixed:]
	}
	bombs["zstd-no-content-size"] = streamed.Bytes()
	ids := map[string]byte{"snappy": 1, "zlib": 2, "zstd": 3, "zstd-no-content-size": 3}

	const maxSize = 64 << 10
	for name, payload := range bombs {
		for _, declared := range []int32{1000, maxSize} {
			cm := compressedMsg(1, 0, OpMsg, declared, ids[name], payload)
			// Warm up pools and the shared decoders first so only the
			// per-call cost is measured.
			_, _ = Decompress(nil, cm, maxSize)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Decompress(nil, cm, maxSize)
			runtime.ReadMemStats(&after)
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("%s declared %d: %v, want *Error", name, declared, err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("%s declared %d: allocated %d bytes for a %d-byte limit", name, declared, alloc, maxSize)
			}
		}
		// Over maxSize the declared size alone is refused.
		cm := compressedMsg(1, 0, OpMsg, real, ids[name], payload)
		if _, err := Decompress(nil, cm, maxSize); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s declared %d: %v, want ErrTooLarge", name, real, err)
		}
	}
}

func TestCompressErrors(t *testing.T) {
	msg := h(t, helloMsgHex)
	cm, _ := Compress(nil, msg, CompressorNoop, 0)
	tests := []struct {
		name  string
		msg   []byte
		c     Compressor
		level int
		want  string
	}{
		{"zlib level 10", msg, CompressorZlib, 10, "wire: encode: zlibCompressionLevel 10 is outside -1..9"},
		{"zlib level -2", msg, CompressorZlib, -2, "wire: encode: zlibCompressionLevel -2 is outside -1..9"},
		{"unknown compressor", msg, 7, 0, "wire: OP_COMPRESSED: compressor id 7 is unknown"},
		{"already compressed", cm, CompressorSnappy, 0, "wire: OP_COMPRESSED at byte 12: message is already OP_COMPRESSED"},
		{"short", msg[:10], CompressorSnappy, 0, "wire: OP_COMPRESSED at byte 10: header needs 16 bytes, have 10"},
		{"length mismatch", msg[:40], CompressorSnappy, 0, "wire: OP_COMPRESSED at byte 0: messageLength is 52 but 40 bytes are given"},
	}
	for _, tt := range tests {
		dst := []byte("keep")
		out, err := Compress(dst, tt.msg, tt.c, tt.level)
		var we *Error
		if !errors.As(err, &we) || err.Error() != tt.want {
			t.Errorf("%s: Compress = %v, want %q", tt.name, err, tt.want)
		}
		if string(out) != "keep" {
			t.Errorf("%s: failed Compress returned %q", tt.name, out)
		}
	}
	// The zlib level is ignored by the other compressors.
	if _, err := Compress(nil, msg, CompressorSnappy, 42); err != nil {
		t.Errorf("snappy with zlib level 42: %v", err)
	}
}

// TestCompressConcurrent exercises the shared zstd coder and the zlib pools
// from several goroutines; run with -race.
func TestCompressConcurrent(t *testing.T) {
	msg := bigMsg(t, 50)
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(allCompressors))
	for g := 0; g < 8; g++ {
		for _, c := range allCompressors {
			wg.Add(1)
			go func(c Compressor) {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					cm, err := Compress(nil, msg, c, i%10)
					if err == nil {
						var out []byte
						out, err = Decompress(nil, cm, len(msg))
						if err == nil && !bytes.Equal(out, msg) {
							err = errors.New(c.String() + ": round trip changed the message")
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}(c)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSnappyIsBlockFormat checks the payload is the snappy block format the
// spec names (readable by snappy.Decode), not the framing format.
func TestSnappyIsBlockFormat(t *testing.T) {
	msg := bigMsg(t, 10)
	cm, err := Compress(nil, msg, CompressorSnappy, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := snappy.Decode(nil, cm[HeaderLen+compressedFixed:])
	if err != nil || !bytes.Equal(got, msg[HeaderLen:]) {
		t.Fatalf("snappy.Decode of payload: %v", err)
	}
}

// TestNoGoroutines checks that the shared zstd coders and the zlib pools
// start no goroutines, so nothing in this package needs closing.
func TestNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	msg := bigMsg(t, 50)
	for _, c := range allCompressors {
		cm, err := Compress(nil, msg, c, -1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decompress(nil, cm, len(msg)); err != nil {
			t.Fatal(err)
		}
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before compressing, %d after", before, after)
	}
}
