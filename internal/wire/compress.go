package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
)

// Compressor is an OP_COMPRESSED compressorId.
type Compressor uint8

// The compressor IDs OP_COMPRESSED.md assigns; 4-255 are reserved.
const (
	CompressorNoop   Compressor = 0
	CompressorSnappy Compressor = 1
	CompressorZlib   Compressor = 2
	CompressorZstd   Compressor = 3
)

// String returns the compressor's handshake name ("snappy"), or
// "compressor(n)" for a reserved ID.
func (c Compressor) String() string {
	switch c {
	case CompressorNoop:
		return "noop"
	case CompressorSnappy:
		return "snappy"
	case CompressorZlib:
		return "zlib"
	case CompressorZstd:
		return "zstd"
	}
	return "compressor(" + itoa(int(c)) + ")"
}

// CompressorByName returns the compressor with the given handshake name:
// "noop", "snappy", "zlib" or "zstd", lower case as the handshake sends them.
func CompressorByName(name string) (Compressor, bool) {
	switch name {
	case "noop":
		return CompressorNoop, true
	case "snappy":
		return CompressorSnappy, true
	case "zlib":
		return CompressorZlib, true
	case "zstd":
		return CompressorZstd, true
	}
	return 0, false
}

// Compressible reports whether a command may be sent compressed. The
// handshake and authentication commands OP_COMPRESSED.md lists must not be.
// Command names are case-sensitive, except that the legacy hello is listed
// in both casings the server accepts ("isMaster" and "ismaster").
func Compressible(commandName string) bool {
	switch commandName {
	case "hello", "isMaster", "ismaster", "saslStart", "saslContinue", "getnonce",
		"authenticate", "createUser", "updateUser", "copydbSaslStart", "copydbgetnonce", "copydb":
		return false
	}
	return true
}

// compressedFixed is the size of OP_COMPRESSED's fields after the header:
// originalOpcode, uncompressedSize and compressorId.
const compressedFixed = 4 + 4 + 1

// Compress wraps a whole uncompressed message in a whole OP_COMPRESSED
// message appended to dst, keeping its requestID and responseTo and recording
// its opcode as originalOpcode. zlibLevel (-1 to 9) applies to zlib only.
func Compress(dst, msg []byte, c Compressor, zlibLevel int) ([]byte, error) {
	const op = "OP_COMPRESSED"
	h, err := ParseHeader(msg)
	if err != nil {
		e := err.(*Error)
		e.Op = op
		return dst, e
	}
	if int(h.Length) != len(msg) {
		return dst, errorf(op, 0, nil, "messageLength is "+itoa(int(h.Length))+
			" but "+itoa(len(msg))+" bytes are given")
	}
	if h.OpCode == OpCompressed {
		return dst, errorf(op, 12, nil, "message is already OP_COMPRESSED")
	}
	if c == CompressorZlib && (zlibLevel < -1 || zlibLevel > 9) {
		return dst, errorf("encode", -1, nil, "zlibCompressionLevel "+itoa(zlibLevel)+" is outside -1..9")
	}
	orig := len(dst)
	body := msg[HeaderLen:]
	start, dst := AppendHeaderStart(dst, h.RequestID, h.ResponseTo, OpCompressed)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.OpCode))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, byte(c))
	switch c {
	case CompressorNoop:
		dst = append(dst, body...)
	case CompressorSnappy:
		n := snappy.MaxEncodedLen(len(body))
		if n < 0 {
			return dst[:orig], errorf(op, -1, ErrTooLarge, "message is too large for snappy")
		}
		dst = grow(dst, n)
		enc := snappy.Encode(dst[len(dst):len(dst)+n], body)
		dst = dst[:len(dst)+len(enc)]
	case CompressorZlib:
		dst, err = zlibCompress(dst, body, zlibLevel)
		if err != nil {
			return dst[:orig], errorf(op, -1, err, "zlib")
		}
	case CompressorZstd:
		enc, err := zstdEncoder()
		if err != nil {
			return dst[:orig], errorf(op, -1, err, "zstd encoder")
		}
		dst = enc.EncodeAll(body, dst)
	default:
		return dst[:orig], errorf(op, -1, nil, "compressor id "+itoa(int(c))+" is unknown")
	}
	return FinishMessage(dst, start, false), nil
}

// Decompress unwraps a whole OP_COMPRESSED message and appends the whole
// original message to dst, its header rebuilt from originalOpcode, requestID
// and responseTo. maxSize caps uncompressedSize (the message without its
// header); at most that many bytes are allocated for the output, whatever
// the payload says, and the decompressor must produce exactly
// uncompressedSize bytes.
func Decompress(dst, msg []byte, maxSize int) ([]byte, error) {
	const op = "OP_COMPRESSED"
	h, err := parseHeaderFor(op, msg, OpCompressed)
	if err != nil {
		return dst, err
	}
	if len(msg) < HeaderLen+compressedFixed {
		return dst, errorf(op, len(msg), ErrTruncated, "originalOpcode, uncompressedSize and compressorId need 9 bytes, have "+
			itoa(len(msg)-HeaderLen))
	}
	origOp := OpCode(binary.LittleEndian.Uint32(msg[HeaderLen:]))
	size := int(int32(binary.LittleEndian.Uint32(msg[HeaderLen+4:])))
	c := Compressor(msg[HeaderLen+8])
	payload := msg[HeaderLen+compressedFixed:]
	const payloadOff = HeaderLen + compressedFixed
	if origOp == OpCompressed {
		return dst, errorf(op, HeaderLen, nil, "originalOpcode is OP_COMPRESSED")
	}
	if size < 0 {
		return dst, errorf(op, HeaderLen+4, nil, "uncompressedSize "+itoa(size)+" is negative")
	}
	if size > maxSize {
		return dst, errorf(op, HeaderLen+4, ErrTooLarge, "uncompressedSize "+itoa(size)+
			" exceeds the limit of "+itoa(maxSize))
	}
	if c > CompressorZstd {
		return dst, errorf(op, HeaderLen+8, nil, "compressor id "+itoa(int(c))+" is unknown")
	}
	if size > maxInt32-HeaderLen {
		return dst, errorf(op, HeaderLen+4, ErrTooLarge, "uncompressedSize "+itoa(size)+" leaves no room for a header")
	}
	// Sizes known before decoding are checked before anything is allocated.
	switch c {
	case CompressorNoop:
		if len(payload) != size {
			return dst, errorf(op, payloadOff, nil, "noop payload has "+itoa(len(payload))+
				" bytes, uncompressedSize is "+itoa(size))
		}
	case CompressorSnappy:
		dl, err := snappy.DecodedLen(payload)
		if err != nil {
			return dst, errorf(op, payloadOff, err, "snappy payload is corrupt")
		}
		if dl != size {
			return dst, errorf(op, payloadOff, nil, "snappy payload decodes to "+itoa(dl)+
				" bytes, uncompressedSize is "+itoa(size))
		}
	}
	orig := len(dst)
	start, dst := AppendHeaderStart(dst, h.RequestID, h.ResponseTo, origOp)
	// Reserve exactly the declared size: no decompressor below may write
	// past it, which is what stops a decompression bomb.
	dst = grow(dst, size)
	out := dst[len(dst) : len(dst)+size]
	var n int
	switch c {
	case CompressorNoop:
		n = copy(out, payload)
	case CompressorSnappy:
		got, err := snappy.Decode(out, payload)
		if err != nil {
			return dst[:orig], errorf(op, payloadOff, err, "snappy payload is corrupt")
		}
		if len(got) > 0 && &got[0] != &out[0] {
			// snappy only uses out when it is large enough, which it is;
			// copy anyway rather than rely on that.
			copy(out, got)
		}
		n = len(got)
	case CompressorZlib:
		n, err = zlibDecompress(out, payload)
		if err != nil {
			return dst[:orig], errorf(op, payloadOff, err, "zlib payload")
		}
	case CompressorZstd:
		dec, err := zstdDecoder()
		if err != nil {
			return dst[:orig], errorf(op, payloadOff, err, "zstd decoder")
		}
		// With WithDecodeAllCapLimit the decoder writes at most cap(out)
		// bytes, so a bomb fails here instead of growing the buffer.
		got, err := dec.DecodeAll(payload, out[:0:size])
		if err != nil {
			return dst[:orig], errorf(op, payloadOff, err, "zstd payload")
		}
		if len(got) > size {
			return dst[:orig], errorf(op, payloadOff, nil, "zstd payload decodes to more than uncompressedSize "+itoa(size))
		}
		if len(got) > 0 && &got[0] != &out[0] {
			copy(out, got)
		}
		n = len(got)
	}
	if n != size {
		return dst[:orig], errorf(op, payloadOff, nil, c.String()+" payload decodes to "+itoa(n)+
			" bytes, uncompressedSize is "+itoa(size))
	}
	dst = dst[:len(dst)+size]
	// Only the length is patched: FinishMessage would touch an OP_MSG's
	// checksumPresent flag, and the original bytes must come back as sent.
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst, nil
}

const maxInt32 = 1<<31 - 1

// grow makes room for n more bytes after len(dst) without changing len.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	out := make([]byte, len(dst), len(dst)+n)
	copy(out, dst)
	return out
}

// sliceWriter is an io.Writer that appends to b.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// zlibWriters pools writers per level (index level+1): a zlib writer holds
// several hundred KiB of state that is expensive to build per message.
var zlibWriters [11]sync.Pool

type pooledZlibWriter struct {
	zw *zlib.Writer
	sw sliceWriter
}

func zlibCompress(dst, src []byte, level int) ([]byte, error) {
	p := &zlibWriters[level+1]
	w, _ := p.Get().(*pooledZlibWriter)
	if w == nil {
		w = &pooledZlibWriter{}
		zw, err := zlib.NewWriterLevel(&w.sw, level)
		if err != nil {
			return dst, err
		}
		w.zw = zw
	}
	w.sw.b = dst
	w.zw.Reset(&w.sw)
	_, err := w.zw.Write(src)
	if err == nil {
		err = w.zw.Close()
	}
	out := w.sw.b
	w.sw.b = nil
	p.Put(w)
	return out, err
}

var errZlibTrailing = errors.New("bytes follow the end of the zlib stream")

// zlibReaders pools decompressors; a flate reader carries a 32 KiB window.
var zlibReaders sync.Pool

type pooledZlibReader struct {
	zr io.ReadCloser
	br bytes.Reader
}

// zlibDecompress fills out from the zlib stream in src and returns how many
// bytes it wrote. It reads at most len(out)+1 bytes, the extra byte only to
// tell a stream longer than declared from one of the right size.
func zlibDecompress(out, src []byte) (int, error) {
	r, _ := zlibReaders.Get().(*pooledZlibReader)
	if r == nil {
		r = &pooledZlibReader{}
	}
	r.br.Reset(src)
	var err error
	if r.zr == nil {
		r.zr, err = zlib.NewReader(&r.br)
	} else {
		err = r.zr.(zlib.Resetter).Reset(&r.br, nil)
	}
	if err != nil {
		// A reader whose Reset failed still works for a later Reset, but
		// one that was never made must not be pooled as nil-safe.
		if r.zr != nil {
			zlibReaders.Put(r)
		}
		return 0, err
	}
	defer zlibReaders.Put(r)
	n, eof := 0, false
	for !eof && n < len(out) {
		m, err := r.zr.Read(out[n:])
		n += m
		if err == io.EOF {
			// The stream ended and its Adler-32 checked out.
			eof = true
		} else if err != nil {
			return n, err
		}
	}
	// A full buffer must coincide with the end of the stream: read on
	// (one byte is enough to tell a longer stream) until EOF, which also
	// verifies the Adler-32 trailer.
	var one [1]byte
	for !eof {
		m, err := r.zr.Read(one[:])
		if m > 0 {
			return n + m, nil // longer than declared; the caller reports it
		}
		if err == io.EOF {
			eof = true
		} else if err != nil {
			return n, err
		}
	}
	if r.br.Len() != 0 {
		return n, errZlibTrailing
	}
	return n, nil
}

var (
	zstdEncOnce sync.Once
	zstdEnc     *zstd.Encoder
	zstdEncErr  error
	zstdDecOnce sync.Once
	zstdDec     *zstd.Decoder
	zstdDecErr  error
)

// zstdEncoder returns the shared encoder, built on first use. EncodeAll is
// safe for concurrent use and starts no goroutines.
func zstdEncoder() (*zstd.Encoder, error) {
	zstdEncOnce.Do(func() {
		zstdEnc, zstdEncErr = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithZeroFrames(true))
	})
	return zstdEnc, zstdEncErr
}

// zstdDecoder returns the shared decoder, built on first use. DecodeAll is
// safe for concurrent use (up to min(4, GOMAXPROCS) at once, the library's
// default); a nil input reader means no goroutines. The cap limit makes
// DecodeAll refuse output beyond cap(dst), and the memory cap bounds
// everything else, since no message exceeds an int32 length.
func zstdDecoder() (*zstd.Decoder, error) {
	zstdDecOnce.Do(func() {
		zstdDec, zstdDecErr = zstd.NewReader(nil,
			zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(maxInt32))
	})
	return zstdDec, zstdDecErr
}
