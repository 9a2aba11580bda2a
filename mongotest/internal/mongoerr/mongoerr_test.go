package mongoerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestError(t *testing.T) {
	e := New(DuplicateKey, "E11000 duplicate key error collection: %s", "db.c")
	if e.CodeName != "DuplicateKey" || e.Error() != "DuplicateKey (11000): E11000 duplicate key error collection: db.c" {
		t.Errorf("%#v", e)
	}
	if CodeName(123456) != "Location123456" {
		t.Errorf("unknown code name %q", CodeName(123456))
	}
	wrapped := fmt.Errorf("context: %w", e)
	if As(wrapped) != e {
		t.Error("As lost the wrapped *Error")
	}
	if got := As(errors.New("boom")); got.Code != InternalError || got.Message != "boom" {
		t.Errorf("As(plain) = %#v", got)
	}
	for code, name := range names {
		if CodeName(code) != name {
			t.Errorf("code %d", code)
		}
	}
}
