package wire

import "github.com/mongoscope/mongoscope/bson"

// Server defaults for Limits' zero fields.
const (
	DefaultMaxBatchCount   = 100_000
	DefaultMaxDocumentSize = 16 * 1024 * 1024
)

// Limits are the server's size limits from its hello reply. A zero field
// means the server default: maxWriteBatchSize 100000, maxBsonObjectSize
// 16 MiB, maxMessageSizeBytes 48000000.
type Limits struct {
	MaxBatchCount   int // maxWriteBatchSize
	MaxDocumentSize int // maxBsonObjectSize
	MaxMessageSize  int // maxMessageSizeBytes
}

func (l Limits) withDefaults() Limits {
	if l.MaxBatchCount <= 0 {
		l.MaxBatchCount = DefaultMaxBatchCount
	}
	if l.MaxDocumentSize <= 0 {
		l.MaxDocumentSize = DefaultMaxDocumentSize
	}
	if l.MaxMessageSize <= 0 {
		l.MaxMessageSize = DefaultMaxMessageSize
	}
	return l
}

// SplitBatch returns how many of docs, from the start, fit in one message
// whose fixed part (header, flags, body, sequence header, checksum) takes
// overhead bytes: no more than MaxBatchCount documents, none larger than
// MaxDocumentSize, and overhead plus their sizes within MaxMessageSize. A
// later document that is too large ends the batch before it, so the next
// call reports it. The result is at least 1 when docs is not empty; when
// docs[0] itself is too large for a document or for any message, the error
// is an *Error wrapping ErrTooLarge that names the sizes.
func SplitBatch(docs []bson.Raw, overhead int, l Limits) (int, error) {
	const op = "batch"
	l = l.withDefaults()
	if overhead < 0 {
		return 0, errorf(op, -1, nil, "overhead "+itoa(overhead)+" is negative")
	}
	if len(docs) == 0 {
		return 0, nil
	}
	if n := len(docs[0]); n > l.MaxDocumentSize {
		return 0, errorf(op, -1, ErrTooLarge, "document 0 is "+itoa(n)+
			" bytes, over maxBsonObjectSize "+itoa(l.MaxDocumentSize))
	}
	if n := len(docs[0]); n > l.MaxMessageSize-overhead {
		return 0, errorf(op, -1, ErrTooLarge, "document 0 is "+itoa(n)+" bytes and the rest of the message "+
			itoa(overhead)+", over maxMessageSizeBytes "+itoa(l.MaxMessageSize))
	}
	size := overhead + len(docs[0])
	count := 1
	for _, d := range docs[1:] {
		if count == l.MaxBatchCount || len(d) > l.MaxDocumentSize || len(d) > l.MaxMessageSize-size {
			break
		}
		size += len(d)
		count++
	}
	return count, nil
}
