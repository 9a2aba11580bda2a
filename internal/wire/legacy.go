package wire

import (
	"encoding/binary"

	"github.com/mongoscope/mongoscope/bson"
)

// Query is an OP_QUERY. The driver sends one only for a legacy hello to a
// server that asked for it; mongotest reads them from old clients.
type Query struct {
	Flags                int32
	FullCollectionName   string // "admin.$cmd" for commands
	NumberToSkip         int32
	NumberToReturn       int32
	Query                bson.Raw
	ReturnFieldsSelector bson.Raw // optional; empty when absent
}

// AppendQuery appends a whole OP_QUERY with responseTo 0. An empty q.Query
// is written as the empty document, since the field is required; an empty
// ReturnFieldsSelector is left out. FullCollectionName must not contain a
// NUL byte.
func AppendQuery(dst []byte, requestID int32, q Query) []byte {
	start, dst := AppendHeaderStart(dst, requestID, 0, OpQuery)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(q.Flags))
	dst = append(dst, q.FullCollectionName...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(q.NumberToSkip))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(q.NumberToReturn))
	if len(q.Query) == 0 {
		dst = append(dst, 5, 0, 0, 0, 0)
	} else {
		dst = append(dst, q.Query...)
	}
	dst = append(dst, q.ReturnFieldsSelector...)
	return FinishMessage(dst, start, false)
}

// ParseQuery decodes one whole OP_QUERY, header included. The documents
// alias msg and are validated; trailing bytes are an error.
func ParseQuery(msg []byte) (Query, error) {
	const op = "OP_QUERY"
	var q Query
	if _, err := parseHeaderFor(op, msg, OpQuery); err != nil {
		return q, err
	}
	pos := HeaderLen
	if len(msg)-pos < 4 {
		return q, errorf(op, pos, ErrTruncated, "flags needs 4 bytes, have "+itoa(len(msg)-pos))
	}
	q.Flags = int32(binary.LittleEndian.Uint32(msg[pos:]))
	pos += 4
	name, next, ok := cstring(msg, pos)
	if !ok {
		return q, errorf(op, pos, ErrTruncated, "fullCollectionName has no NUL terminator")
	}
	q.FullCollectionName = name
	pos = next
	if len(msg)-pos < 8 {
		return q, errorf(op, pos, ErrTruncated,
			"numberToSkip and numberToReturn need 8 bytes, have "+itoa(len(msg)-pos))
	}
	q.NumberToSkip = int32(binary.LittleEndian.Uint32(msg[pos:]))
	q.NumberToReturn = int32(binary.LittleEndian.Uint32(msg[pos+4:]))
	pos += 8
	doc, err := docAt(op, msg, pos, len(msg), docName{what: "query document", index: -1})
	if err != nil {
		return q, err
	}
	q.Query = doc
	pos += len(doc)
	if pos < len(msg) {
		sel, err := docAt(op, msg, pos, len(msg), docName{what: "returnFieldsSelector document", index: -1})
		if err != nil {
			return q, err
		}
		q.ReturnFieldsSelector = sel
		pos += len(sel)
	}
	if pos != len(msg) {
		return q, errorf(op, pos, nil, itoa(len(msg)-pos)+" trailing bytes after returnFieldsSelector")
	}
	return q, nil
}

// Reply is an OP_REPLY, the answer to an OP_QUERY.
type Reply struct {
	ResponseFlags  int32
	CursorID       int64
	StartingFrom   int32
	NumberReturned int32 // AppendReply writes len(Documents); ParseReply checks it
	Documents      []bson.Raw
}

// AppendReply appends a whole OP_REPLY. numberReturned is written as
// len(r.Documents) so the count and the documents cannot disagree.
func AppendReply(dst []byte, requestID, responseTo int32, r Reply) []byte {
	start, dst := AppendHeaderStart(dst, requestID, responseTo, OpReply)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(r.ResponseFlags))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.CursorID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(r.StartingFrom))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.Documents)))
	for _, d := range r.Documents {
		dst = append(dst, d...)
	}
	return FinishMessage(dst, start, false)
}

// replyFixed is the size of OP_REPLY's fields before the documents.
const replyFixed = 4 + 8 + 4 + 4

// ParseReply decodes one whole OP_REPLY, header included. The documents
// must exactly fill the message and their count must equal numberReturned.
// They alias msg and are validated.
func ParseReply(msg []byte) (Reply, error) {
	const op = "OP_REPLY"
	var r Reply
	if _, err := parseHeaderFor(op, msg, OpReply); err != nil {
		return r, err
	}
	pos := HeaderLen
	if len(msg)-pos < replyFixed {
		return r, errorf(op, len(msg), ErrTruncated,
			"responseFlags, cursorID, startingFrom and numberReturned need 20 bytes, have "+itoa(len(msg)-pos))
	}
	r.ResponseFlags = int32(binary.LittleEndian.Uint32(msg[pos:]))
	r.CursorID = int64(binary.LittleEndian.Uint64(msg[pos+4:]))
	r.StartingFrom = int32(binary.LittleEndian.Uint32(msg[pos+12:]))
	r.NumberReturned = int32(binary.LittleEndian.Uint32(msg[pos+16:]))
	if r.NumberReturned < 0 {
		return r, errorf(op, pos+16, nil, "numberReturned "+itoa(int(r.NumberReturned))+" is negative")
	}
	pos += replyFixed
	// Every document takes at least 5 bytes, which bounds the count before
	// trusting numberReturned for an allocation.
	if int(r.NumberReturned) > (len(msg)-pos)/5 {
		return r, errorf(op, HeaderLen+16, ErrTruncated, "numberReturned "+itoa(int(r.NumberReturned))+
			" documents cannot fit in the "+itoa(len(msg)-pos)+" bytes left")
	}
	if r.NumberReturned > 0 {
		r.Documents = make([]bson.Raw, 0, r.NumberReturned)
	}
	for pos < len(msg) {
		i := len(r.Documents)
		if i == int(r.NumberReturned) {
			return r, errorf(op, pos, nil, itoa(len(msg)-pos)+" bytes follow the "+itoa(i)+" documents numberReturned declares")
		}
		doc, err := docAt(op, msg, pos, len(msg), docName{what: "document", index: i})
		if err != nil {
			return r, err
		}
		r.Documents = append(r.Documents, doc)
		pos += len(doc)
	}
	if len(r.Documents) != int(r.NumberReturned) {
		return r, errorf(op, pos, ErrTruncated, "numberReturned is "+itoa(int(r.NumberReturned))+
			" but the message holds "+itoa(len(r.Documents))+" documents")
	}
	return r, nil
}
