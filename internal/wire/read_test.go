package wire

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestReadMessage(t *testing.T) {
	hello := h(t, helloMsgHex)
	insert := h(t, insertMsgHex)
	stream := append(append([]byte(nil), hello...), insert...)
	for name, r := range map[string]io.Reader{
		"whole":    bytes.NewReader(stream),
		"one byte": iotest.OneByteReader(bytes.NewReader(stream)),
		"half":     iotest.HalfReader(bytes.NewReader(stream)),
	} {
		for _, want := range [][]byte{hello, insert} {
			b, err := ReadMessage(r, 1000)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(b.B, want) {
				t.Fatalf("%s: got %x, want %x", name, b.B, want)
			}
			b.Release()
			b.Release() // a second Release is a no-op
		}
		_, err := ReadMessage(r, 1000)
		var we *Error
		if !errors.Is(err, io.EOF) || !errors.As(err, &we) {
			t.Fatalf("%s at end: %v, want *Error wrapping io.EOF", name, err)
		}
	}
	var nilBuf *Buffer
	nilBuf.Release()
}

func TestReadMessageLarge(t *testing.T) {
	msg := bigMsg(t, 20000) // a few MiB
	if len(msg) < 2<<20 {
		t.Fatalf("test message is only %d bytes", len(msg))
	}
	b, err := ReadMessage(iotest.HalfReader(bytes.NewReader(msg)), 0) // 0: default cap
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.B, msg) {
		t.Fatal("large message changed")
	}
	b.Release()
	if b.B != nil {
		t.Fatal("a buffer over 1 MiB was kept for the pool")
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadMessageErrors(t *testing.T) {
	hello := h(t, helloMsgHex)
	boom := errors.New("connection reset")
	tests := []struct {
		name string
		r    io.Reader
		max  int
		want string
		is   error
	}{
		{"partial header", bytes.NewReader(hello[:7]), 1000,
			"wire: read at byte 7: reading the message header: unexpected EOF", io.ErrUnexpectedEOF},
		{"partial body", bytes.NewReader(hello[:40]), 1000,
			"wire: read at byte 40: reading 52-byte message: unexpected EOF", io.ErrUnexpectedEOF},
		{"over maxSize", bytes.NewReader(hello), 51,
			"wire: read at byte 0: messageLength 52 exceeds the limit of 51", ErrTooLarge},
		{"over default", bytes.NewReader(h(t, "01e1f505 00000000 00000000 dd070000")), 0,
			"wire: read at byte 0: messageLength 100000001 exceeds the limit of 48000000", ErrTooLarge},
		{"length below header", bytes.NewReader(h(t, "0f000000 00000000 00000000 dd070000 00")), 1000,
			"wire: read at byte 0: messageLength 15 is below the 16-byte header", nil},
		{"negative length", bytes.NewReader(h(t, "ffffffff 00000000 00000000 dd070000")), 1000,
			"wire: read at byte 0: messageLength -1 is below the 16-byte header", nil},
		{"reader error", failingReader{boom}, 1000, "wire: read at byte 0: reading the message header: connection reset", boom},
		{"reader error mid-message", io.MultiReader(bytes.NewReader(hello[:30]), failingReader{boom}), 1000,
			"wire: read at byte 30: reading 52-byte message: connection reset", boom},
	}
	for _, tt := range tests {
		b, err := ReadMessage(tt.r, tt.max)
		var we *Error
		if b != nil || !errors.As(err, &we) || err.Error() != tt.want {
			t.Errorf("%s: ReadMessage = %v, %v; want %q", tt.name, b, err, tt.want)
			continue
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: errors.Is(%v, %v) = false", tt.name, err, tt.is)
		}
	}
}

// TestReadMessageAnnouncedSize checks that a peer announcing a large
// message but sending little makes ReadMessage allocate for what arrived,
// not for what was announced.
func TestReadMessageAnnouncedSize(t *testing.T) {
	hdr := h(t, "00d20102 00000000 00000000 dd070000") // 34,722,304 bytes announced
	in := append(hdr, make([]byte, 1000)...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadMessage(bytes.NewReader(in), DefaultMaxMessageSize)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadMessage = %v, want unexpected EOF", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("allocated %d bytes for a 1016-byte stream", alloc)
	}
}
