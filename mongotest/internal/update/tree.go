package update

import (
	"github.com/mongoscope/mongoscope/bson"
)

// mnode is a document, array or value being updated. Nodes are expanded
// from the raw bytes only along the paths an update touches; everything
// else is copied back unchanged.
type mnode struct {
	raw      bson.RawValue
	expanded bool
	isArr    bool
	keys     []string // document field names; unused for arrays
	kids     []*mnode
}

func newNode(v bson.RawValue) *mnode { return &mnode{raw: v} }

func (n *mnode) isContainer() bool {
	if n.expanded {
		return true
	}
	return n.raw.Type == bson.TypeEmbeddedDocument || n.raw.Type == bson.TypeArray
}

// expand turns a document or array value into child nodes.
func (n *mnode) expand() {
	if n.expanded {
		return
	}
	n.expanded = true
	n.isArr = n.raw.Type == bson.TypeArray
	it := bson.Raw(n.raw.Value).Iter()
	for it.Next() {
		if !n.isArr {
			n.keys = append(n.keys, it.Key())
		}
		n.kids = append(n.kids, newNode(it.Value()))
	}
}

// field returns the index of the child named key, or -1.
func (n *mnode) field(key string) int {
	for i, k := range n.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// value returns the node's current value, encoding it if it was expanded.
func (n *mnode) value() bson.RawValue {
	if !n.expanded {
		return n.raw
	}
	t := bson.TypeEmbeddedDocument
	if n.isArr {
		t = bson.TypeArray
	}
	start, b := bson.AppendDocumentStart(nil)
	b = n.appendFields(b)
	b, _ = bson.AppendDocumentEnd(b, start)
	return bson.RawValue{Type: t, Value: b}
}

func (n *mnode) appendFields(dst []byte) []byte {
	for i, k := range n.kids {
		key := ""
		if n.isArr {
			key = bson.ArrayKey(i)
		} else {
			key = n.keys[i]
		}
		dst = k.appendElement(dst, key)
	}
	return dst
}

func (n *mnode) appendElement(dst []byte, key string) []byte {
	if !n.expanded {
		return bson.AppendValueElement(dst, key, n.raw)
	}
	var start int
	if n.isArr {
		start, dst = bson.AppendArrayElementStart(dst, key)
	} else {
		start, dst = bson.AppendDocumentElementStart(dst, key)
	}
	dst = n.appendFields(dst)
	// The length cannot overflow for documents read from valid input plus
	// an update; the overall size is checked by the caller.
	out, err := bson.AppendDocumentEnd(dst, start)
	if err != nil {
		return dst
	}
	return out
}

// setKid sets the value of child i.
func (n *mnode) setKid(i int, v bson.RawValue) { n.kids[i] = newNode(v) }

// add appends a field (documents) or pads and sets an index (arrays),
// returning the new child's index.
func (n *mnode) add(key string, idx int, v bson.RawValue) int {
	if n.isArr {
		for len(n.kids) < idx {
			n.kids = append(n.kids, newNode(bson.RawValue{Type: bson.TypeNull}))
		}
		if idx < len(n.kids) {
			n.kids[idx] = newNode(v)
			return idx
		}
		n.kids = append(n.kids, newNode(v))
		return len(n.kids) - 1
	}
	n.keys = append(n.keys, key)
	n.kids = append(n.kids, newNode(v))
	return len(n.kids) - 1
}

// remove deletes a document field, or sets an array element to null as
// $unset does.
func (n *mnode) remove(i int) {
	if n.isArr {
		n.kids[i] = newNode(bson.RawValue{Type: bson.TypeNull})
		return
	}
	n.keys = append(n.keys[:i], n.keys[i+1:]...)
	n.kids = append(n.kids[:i], n.kids[i+1:]...)
}

var emptyDoc = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: []byte{5, 0, 0, 0, 0}}
