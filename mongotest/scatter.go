package mongotest

import (
	"encoding/binary"
	"net"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// A big getMore batch is written without copying its documents into a
// reply buffer: the reply body is a list of pieces, small ones (the
// document and array starts, each document's element header, the cursor's
// id and ns, appendOK's ok and $clusterTime) in one scratch buffer, and
// the batch's documents themselves, and writeScatter hands them to
// writev after the OP_MSG header. Every length prefix is computed up
// front from the pieces' sizes.
//
// This is only safe because the documents cannot change before the write
// ends. The store never modifies a stored document's bytes: an insert
// stores a copy, and an update or replace stores a new copy and swaps the
// record's pointer to it (store.Collection.Modify), so the bytes a batch
// took stay as they were, even if the document is updated or deleted
// meanwhile. A batch of a cursor computed up front (a sort, an aggregate)
// holds documents the cursor made and dropped when it handed them out.
// The write also happens before the connection reads its next request, so
// the connection's scratch buffer holding the small pieces is not reused
// under it.
//
// Only handleMsg asks for it (Request.scatterOK), and only for a reply
// that is neither compressed nor checksummed; dispatch falls back to the
// contiguous reply when a fail point applied, the handler failed or the
// reply would start an exhaust stream, and dispatch's other callers (the
// exhaust loop, OP_QUERY, the benchmarks) always get the contiguous reply.

// minScatterDoc is the size from which a document is its own piece; a
// smaller one is copied after its element header, so a batch of tiny
// documents is not a million pieces of a few bytes.
const minScatterDoc = 512

// cursorBatch is a cursor reply's batch, {cursor: {<key>: docs, id, ns}},
// before it is encoded.
type cursorBatch struct {
	key  string // "nextBatch" or "firstBatch"
	docs []bson.Raw
	id   int64
	ns   string
}

// appendReply returns the batch as a reply document, built in one
// allocation with room for appendOK's fields.
func (b *cursorBatch) appendReply() bson.Raw {
	start, dst := bson.AppendDocumentStart(make([]byte, 0, cursorReplySize(b.docs, b.ns)))
	dst = appendCursorReply(dst, b.key, b.docs, b.id, b.ns)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// scatterReply is a reply body as pieces: bufs[0] is left for the OP_MSG
// header, the rest concatenated are the body, of size bytes.
type scatterReply struct {
	bufs net.Buffers
	size int
}

// scatter lays out b's reply, with appendOK's tail for a successful
// command without fail point, as pieces. The small pieces go into the
// connection's body scratch buffer, the list into its iov buffer.
func (c *Conn) scatter(r *Request, b *cursorBatch) *scatterReply {
	// First pass: the small bytes, in order, documents under
	// minScatterDoc included.
	small := c.body[:0]
	ds, small := bson.AppendDocumentStart(small)
	cs, small := bson.AppendDocumentElementStart(small, "cursor")
	as, small := bson.AppendArrayElementStart(small, b.key)
	prefixEnd := len(small)
	big := 0 // bytes of the documents that are pieces of their own
	for i, d := range b.docs {
		small = append(small, byte(bson.TypeEmbeddedDocument))
		small = strconv.AppendInt(small, int64(i), 10)
		small = append(small, 0)
		if len(d) < minScatterDoc {
			small = append(small, d...)
		} else {
			big += len(d)
		}
	}
	small = append(small, 0) // the array's end
	arrayEnd := len(small)
	small = bson.AppendInt64Element(small, "id", b.id)
	small = bson.AppendStringElement(small, "ns", b.ns)
	small = append(small, 0) // the cursor document's end
	cursorEnd := len(small)
	small = c.appendOKTail(small, r, false, false, nil, nil)
	small = append(small, 0) // the reply's end
	// Each length covers its document's small bytes plus the big
	// documents inside it, which all are in the array.
	binary.LittleEndian.PutUint32(small[as:], uint32(arrayEnd-as+big))
	binary.LittleEndian.PutUint32(small[cs:], uint32(cursorEnd-cs+big))
	binary.LittleEndian.PutUint32(small[ds:], uint32(len(small)-ds+big))
	if cap(small) <= maxKeptBuffer {
		c.body = small[:0]
	}

	// Second pass: the pieces. small no longer grows, so slices of it
	// stay valid.
	bufs := append(c.iov[:0], nil)
	run, off := 0, prefixEnd
	for i, d := range b.docs {
		off += 2 + decimalLen(i)
		if len(d) < minScatterDoc {
			off += len(d)
			continue
		}
		bufs = append(bufs, small[run:off], d)
		run = off
	}
	bufs = append(bufs, small[run:])
	if cap(bufs)*24 <= maxKeptBuffer {
		c.iov = bufs[:0]
	}
	return &scatterReply{bufs: bufs, size: len(small) + big}
}

// decimalLen is the length of i (≥ 0) in decimal, as an array key.
func decimalLen(i int) int {
	n := 1
	for i >= 10 {
		i /= 10
		n++
	}
	return n
}

// writeScatter writes sc as one OP_MSG reply (no flags) and returns its
// requestID.
func (c *Conn) writeScatter(sc *scatterReply, responseTo int32) (int32, error) {
	if err := c.delay(); err != nil {
		return 0, err
	}
	id := c.s.nextRequestID()
	var h [wire.HeaderLen + 5]byte
	_, hb := wire.AppendHeaderStart(h[:0], id, responseTo, wire.OpMsg)
	hb = wire.AppendMsgFlags(hb, 0)
	hb = append(hb, 0)
	binary.LittleEndian.PutUint32(hb, uint32(len(hb)+sc.size))
	c.s.scatterWrites.Add(1)
	if c.nc == nil {
		return id, nil
	}
	sc.bufs[0] = hb
	n := len(sc.bufs)
	bufs := sc.bufs
	// WriteTo uses writev on a TCP connection, splitting the list at the
	// system's limit; it consumes bufs as it goes.
	_, err := bufs.WriteTo(c.nc)
	// Drop the references to the documents the list held.
	clear(sc.bufs[:n])
	if err != nil {
		return id, writeError{err}
	}
	return id, nil
}
