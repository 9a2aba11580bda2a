package operation

import (
	"github.com/mongoscope/mongoscope/bson"
)

// Command builds a command document by appending: the command's name and
// value first, then its options, each left out when unset. It is the one
// builder every operation of the driver uses.
type Command struct {
	b  []byte
	st int
}

// NewCommand starts a command whose first element is name: value.
func NewCommand(name string, value bson.RawValue, sizeHint int) *Command {
	// Small enough to be inlined, so that the Command of a builder chain
	// can stay on the caller's stack.
	c := &Command{}
	c.startValue(name, value, sizeHint)
	return c
}

func (c *Command) startValue(name string, value bson.RawValue, sizeHint int) {
	c.st, c.b = bson.AppendDocumentStart(make([]byte, 0, 64+sizeHint))
	c.b = bson.AppendValueElement(c.b, name, value)
}

// NewCollectionCommand starts a command whose first element is name:
// collection, as most commands are.
func NewCollectionCommand(name, collection string, sizeHint int) *Command {
	c := &Command{}
	c.startString(name, collection, sizeHint)
	return c
}

func (c *Command) startString(name, collection string, sizeHint int) {
	c.st, c.b = bson.AppendDocumentStart(make([]byte, 0, 64+len(collection)+sizeHint))
	c.b = bson.AppendStringElement(c.b, name, collection)
}

// Value appends key: v unless v is unset (the zero RawValue).
func (c *Command) Value(key string, v bson.RawValue) *Command {
	if v.Type != 0 {
		c.b = bson.AppendValueElement(c.b, key, v)
	}
	return c
}

// Doc appends key: doc unless doc is nil.
func (c *Command) Doc(key string, doc bson.Raw) *Command {
	if doc != nil {
		c.b = bson.AppendDocumentElement(c.b, key, doc)
	}
	return c
}

// Array appends key: the array of docs.
func (c *Command) Array(key string, docs []bson.Raw) *Command {
	st, b := bson.AppendArrayElementStart(c.b, key)
	for i, d := range docs {
		b = bson.AppendDocumentElement(b, bson.ArrayKey(i), d)
	}
	c.b, _ = bson.AppendDocumentEnd(b, st)
	return c
}

// Int64 appends key: v unless v is nil.
func (c *Command) Int64(key string, v *int64) *Command {
	if v != nil {
		c.b = bson.AppendInt64Element(c.b, key, *v)
	}
	return c
}

// Int32 appends key: v unless v is nil.
func (c *Command) Int32(key string, v *int32) *Command {
	if v != nil {
		c.b = bson.AppendInt32Element(c.b, key, *v)
	}
	return c
}

// Bool appends key: v unless v is nil.
func (c *Command) Bool(key string, v *bool) *Command {
	if v != nil {
		c.b = bson.AppendBooleanElement(c.b, key, *v)
	}
	return c
}

// True appends key: true when set.
func (c *Command) True(key string, set bool) *Command {
	if set {
		c.b = bson.AppendBooleanElement(c.b, key, true)
	}
	return c
}

// String appends key: v unless v is empty.
func (c *Command) String(key, v string) *Command {
	if v != "" {
		c.b = bson.AppendStringElement(c.b, key, v)
	}
	return c
}

// Build ends the document and returns it.
func (c *Command) Build() bson.Raw {
	b, _ := bson.AppendDocumentEnd(c.b, c.st)
	c.b = nil
	return b
}
