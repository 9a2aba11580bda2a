package conn

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// A code that does not fit a server error code is reported as such, not
// cut down to another code.
func TestReplyErrorCodeOutOfRange(t *testing.T) {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "ok", 0)
	b = bson.AppendInt64Element(b, "code", 1<<32+11000)
	b = bson.AppendStringElement(b, "errmsg", "boom")
	b, _ = bson.AppendDocumentEnd(b, st)
	var ce *CommandError
	if !errors.As(ReplyError(b), &ce) {
		t.Fatal("no CommandError")
	}
	if ce.Code != 0 || !strings.Contains(ce.Message, "out of range: 4294978296") || !strings.Contains(ce.Message, "boom") {
		t.Fatalf("code %d message %q", ce.Code, ce.Message)
	}
}
