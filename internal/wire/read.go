package wire

import (
	"encoding/binary"
	"io"
	"sync"
)

// Buffer holds one whole message read by ReadMessage. Its storage comes
// from a pool; call Release when B is no longer used.
type Buffer struct {
	B []byte

	released bool
}

// maxPooledBuffer is the largest buffer kept for reuse: keeping rare
// multi-megabyte replies alive in the pool would pin that memory.
const maxPooledBuffer = 1 << 20

// firstChunk is how much is allocated before a message's bytes arrive;
// beyond it the buffer grows as data comes in, so a peer that announces a
// large message and sends nothing costs little memory.
const firstChunk = 64 << 10

var bufferPool = sync.Pool{New: func() any { return &Buffer{B: make([]byte, 0, 4096)} }}

// Release returns b to the pool; b and b.B must not be used afterwards.
// Buffers larger than 1 MiB are dropped rather than pooled. Releasing nil or
// releasing twice does nothing.
func (b *Buffer) Release() {
	if b == nil || b.released {
		return
	}
	b.released = true
	if cap(b.B) > maxPooledBuffer {
		b.B = nil
		return
	}
	b.B = b.B[:0]
	bufferPool.Put(b)
}

// ReadMessage reads one whole message from r into a pooled Buffer. It reads
// the header, checks HeaderLen <= messageLength <= maxSize (a maxSize of zero
// or less means DefaultMaxMessageSize), then reads the rest. A clean end of
// input before the first byte is an *Error wrapping io.EOF; one inside the
// message wraps io.ErrUnexpectedEOF.
func ReadMessage(r io.Reader, maxSize int) (*Buffer, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	b := bufferPool.Get().(*Buffer)
	b.released = false
	buf := b.B[:HeaderLen]
	if n, err := io.ReadFull(r, buf); err != nil {
		b.Release()
		return nil, errorf("read", n, err, "reading the message header")
	}
	length := int(int32(binary.LittleEndian.Uint32(buf)))
	if length < HeaderLen {
		b.Release()
		return nil, errorf("read", 0, nil, "messageLength "+itoa(length)+" is below the 16-byte header")
	}
	if length > maxSize {
		b.Release()
		return nil, errorf("read", 0, ErrTooLarge, "messageLength "+itoa(length)+
			" exceeds the limit of "+itoa(maxSize))
	}
	for len(buf) < length {
		if cap(buf) == len(buf) {
			// Grow by doubling, starting at firstChunk, never past length.
			c := max(2*cap(buf), firstChunk)
			c = min(c, length)
			nb := make([]byte, len(buf), c)
			copy(nb, buf)
			buf = nb
		}
		want := min(cap(buf), length)
		n, err := io.ReadFull(r, buf[len(buf):want])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			b.B = buf
			b.Release()
			return nil, errorf("read", len(buf), err, "reading "+itoa(length)+"-byte message")
		}
	}
	b.B = buf
	return b, nil
}
