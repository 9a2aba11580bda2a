package wire

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// ParseMsgFraming accepts a body whose interior is malformed (its reader
// checks that) but refuses a body whose own framing is wrong, as ParseMsg
// does; ParseMsg refuses both.
func TestParseMsgFraming(t *testing.T) {
	doc, _ := bson.Marshal(bson.D{{Key: "s", Value: "ab"}})
	doc[len(doc)-3] = 0xff // not UTF-8
	msg := AppendMsg(nil, 1, 0, 0, doc)
	if _, err := ParseMsg(msg); err == nil {
		t.Fatal("ParseMsg accepted a body with invalid UTF-8")
	}
	m, err := ParseMsgFraming(msg)
	if err != nil || len(m.Body) != len(doc) {
		t.Fatalf("ParseMsgFraming: %v", err)
	}
	noNUL := append([]byte(nil), doc...)
	noNUL[len(noNUL)-1] = 1
	if _, err := ParseMsgFraming(AppendMsg(nil, 1, 0, 0, noNUL)); err == nil {
		t.Fatal("ParseMsgFraming accepted a body without its terminating NUL")
	}
	long := append([]byte(nil), doc...)
	long[0] += 50
	_, err = ParseMsgFraming(AppendMsg(nil, 1, 0, 0, long))
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("a body length past the message: %v", err)
	}
}
