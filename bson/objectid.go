package bson

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"
)

// NilObjectID is the zero ObjectID. Servers never generate it, so it serves
// as "no id".
var NilObjectID ObjectID

// objectIDProcessUnique is the 5-byte value the ObjectID specification
// requires to be random, unique to the machine and process, and generated
// once per process. Go cannot fork a running process, so once per process is
// exactly once.
var objectIDProcessUnique = func() [5]byte {
	var b [5]byte
	// crypto/rand.Read never fails: it crashes the program when the OS
	// cannot supply randomness, which is the right outcome for an id source.
	_, _ = rand.Read(b[:])
	return b
}()

// objectIDCounter holds the next 3-byte counter value in its low 24 bits. It
// starts at a random value, as the specification requires; the bits above
// 24 are masked off when an id is built, so the counter wraps from 0xFFFFFF
// to 0 without a compare-and-swap loop.
var objectIDCounter = func() *atomic.Uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	c := new(atomic.Uint32)
	c.Store(binary.BigEndian.Uint32(b[:]) & 0xFFFFFF)
	return c
}()

// NewObjectID returns a new ObjectID built from the current time, the
// process-unique random value and the next counter value. It is safe for
// concurrent use and does not allocate.
func NewObjectID() ObjectID {
	return NewObjectIDFromTimestamp(time.Now())
}

// NewObjectIDFromTimestamp returns a new ObjectID whose timestamp is t and
// whose other fields are generated as NewObjectID generates them, so every
// call returns a distinct id. The timestamp field holds t's seconds since the
// Unix epoch as an unsigned 32-bit number: times before 1970 or after
// 2106-02-07T06:28:15Z wrap modulo 2^32, as in every MongoDB driver.
func NewObjectIDFromTimestamp(t time.Time) ObjectID {
	// Add returns the incremented value; subtracting one makes the first id
	// use the random starting value itself.
	return makeObjectID(uint32(t.Unix()), objectIDCounter.Add(1)-1)
}

// makeObjectID assembles an id from its timestamp and counter; only the low
// 24 bits of counter are used, which is what makes the counter wrap.
func makeObjectID(seconds, counter uint32) ObjectID {
	var id ObjectID
	binary.BigEndian.PutUint32(id[0:4], seconds)
	copy(id[4:9], objectIDProcessUnique[:])
	id[9] = byte(counter >> 16)
	id[10] = byte(counter >> 8)
	id[11] = byte(counter)
	return id
}

// ObjectIDHexError reports a string that is not the 24-digit hexadecimal
// form of an ObjectID.
type ObjectIDHexError struct {
	Input  string // the rejected input, shortened when very long
	Pos    int    // byte offset of the first bad character, or -1 when the length is wrong
	Reason string
}

// Error describes the problem, naming the input and where it went wrong.
func (e *ObjectIDHexError) Error() string {
	s := "bson: invalid ObjectID hex " + strconv.Quote(e.Input) + ": "
	if e.Pos >= 0 {
		s += "byte " + strconv.Itoa(e.Pos) + ": "
	}
	return s + e.Reason
}

// oidMaxQuoted bounds how much of a rejected input an error message
// repeats, so that an attacker-sized string does not become a log-sized
// message.
const oidMaxQuoted = 64

func oidShortInput(s string) string {
	if len(s) <= oidMaxQuoted {
		return s
	}
	return s[:oidMaxQuoted] + "..."
}

// ObjectIDFromHex parses the 24-digit hexadecimal form of an ObjectID (upper
// or lower case). The error is an *ObjectIDHexError.
func ObjectIDFromHex(s string) (ObjectID, error) {
	var id ObjectID
	if len(s) != 2*len(id) {
		return NilObjectID, &ObjectIDHexError{Input: oidShortInput(s), Pos: -1,
			Reason: "length is " + strconv.Itoa(len(s)) + " characters, want 24"}
	}
	for i := 0; i < len(id); i++ {
		hi, ok1 := oidHexNibble(s[2*i])
		lo, ok2 := oidHexNibble(s[2*i+1])
		if !ok1 || !ok2 {
			p := 2 * i
			if ok1 {
				p++
			}
			return NilObjectID, &ObjectIDHexError{Input: oidShortInput(s), Pos: p,
				Reason: oidDescribeByte(s[p]) + " is not a hexadecimal digit"}
		}
		id[i] = hi<<4 | lo
	}
	return id, nil
}

// oidDescribeByte names a byte for an error message: printable ASCII as a
// quoted character, anything else (including parts of multi-byte UTF-8) by
// its value, so the message never shows a misleading character.
func oidDescribeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + hex.EncodeToString([]byte{c})
}

// oidHexNibble decodes one hexadecimal digit.
func oidHexNibble(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Hex returns the 24-digit lower-case hexadecimal form of id.
func (id ObjectID) Hex() string {
	var buf [24]byte
	hex.Encode(buf[:], id[:])
	return string(buf[:])
}

// String returns id as ObjectID("hex"), the form the MongoDB shell prints.
func (id ObjectID) String() string {
	var buf [len(`ObjectID("")`) + 24]byte
	b := append(buf[:0], `ObjectID("`...)
	b = hex.AppendEncode(b, id[:])
	b = append(b, `")`...)
	return string(b)
}

// Timestamp returns the time encoded in id's first four bytes, read as an
// unsigned 32-bit count of seconds since the Unix epoch, in UTC.
func (id ObjectID) Timestamp() time.Time {
	return time.Unix(int64(binary.BigEndian.Uint32(id[0:4])), 0).UTC()
}

// IsZero reports whether id is NilObjectID.
func (id ObjectID) IsZero() bool { return id == NilObjectID }

// Compare returns -1, 0 or +1 as id orders before, equal to, or after other.
// The order is the server's: byte-wise, so ids sort by creation time first.
func (id ObjectID) Compare(other ObjectID) int {
	return bytes.Compare(id[:], other[:])
}

// MarshalText returns the 24-digit hexadecimal form of id.
func (id ObjectID) MarshalText() ([]byte, error) {
	return hex.AppendEncode(make([]byte, 0, 24), id[:]), nil
}

// UnmarshalText parses the 24-digit hexadecimal form of an ObjectID. The
// error is an *ObjectIDHexError; an empty text is an error too, because
// silently reading it as NilObjectID would hide a missing value.
func (id *ObjectID) UnmarshalText(text []byte) error {
	v, err := ObjectIDFromHex(string(text))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// MarshalJSON returns id as a JSON string of 24 hexadecimal digits.
func (id ObjectID) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 26)
	b = append(b, '"')
	b = hex.AppendEncode(b, id[:])
	return append(b, '"'), nil
}

// UnmarshalJSON reads a JSON string of 24 hexadecimal digits. A JSON null
// leaves id unchanged, as encoding/json does for other types.
func (id *ObjectID) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	if len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"' && bytes.IndexByte(data, '\\') < 0 {
		return id.UnmarshalText(data[1 : len(data)-1])
	}
	// Escaped or malformed: let encoding/json decide what the string is.
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return &ObjectIDHexError{Input: oidShortInput(string(data)), Pos: -1,
			Reason: "JSON value is not a string"}
	}
	return id.UnmarshalText([]byte(s))
}
