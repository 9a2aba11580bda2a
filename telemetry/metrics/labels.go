package metrics

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

// Other is the label value that stands for every value past a cap: a
// database and collection beyond MaxNamespaces, a command or operation
// name beyond maxNames, an error code beyond maxCodes.
const Other = "_other"

// The error_code values of errors that carry no server code.
const (
	CodeTimeout  = "timeout"  // a deadline or time limit ran out (timeoutMS, the context's, serverSelectionTimeoutMS, waitQueueTimeoutMS, socketTimeoutMS)
	CodeNetwork  = "network"  // the server could not be reached or the exchange failed
	CodeCanceled = "canceled" // the context was canceled
	CodeClient   = "client"   // any other error the driver raised (arguments, sessions, a closed client...)
)

// Caps of the label sets that come from names the application chooses.
const (
	maxNames   = 100 // distinct operation and command names (runCommand's names are the caller's)
	maxCodes   = 100 // distinct server error codes
	maxServers = 256 // distinct server addresses
)

// interner keeps up to max distinct label values and returns the stored
// copy of each, so that a value read from a command's bytes costs no
// allocation once seen. Past max it returns Other. Values are made valid
// UTF-8, which Prometheus requires of label values.
//
// The map is copied on write: a lookup is an atomic load and a map read,
// with no lock whose counter every core would write; the writes are
// bounded by max.
type interner struct {
	m   atomic.Pointer[map[string]string]
	mu  sync.Mutex // serializes adds
	max int
}

func newInterner(max int) *interner {
	in := &interner{max: max}
	m := make(map[string]string)
	in.m.Store(&m)
	return in
}

// bytes returns the label value for b.
func (in *interner) bytes(b []byte) string {
	m := *in.m.Load()
	if s, ok := m[string(b)]; ok { // no allocation for the lookup
		return s
	}
	if len(m) >= in.max { // past the cap, without the lock
		return Other
	}
	return in.add(string(b))
}

// str returns the label value for s.
func (in *interner) str(s string) string {
	m := *in.m.Load()
	if v, ok := m[s]; ok {
		return v
	}
	if len(m) >= in.max {
		return Other
	}
	return in.add(s)
}

func (in *interner) add(s string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	m := *in.m.Load()
	if v, ok := m[s]; ok {
		return v
	}
	if len(m) >= in.max {
		return Other
	}
	v := s
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	next := make(map[string]string, len(m)+1)
	for k, x := range m {
		next[k] = x
	}
	next[s] = v
	in.m.Store(&next)
	return v
}

// ns is a database and collection label pair.
type ns struct{ db, coll string }

var otherNS = &ns{Other, Other}

// namespaces keeps up to max distinct (database, collection) pairs; past
// max every new pair is (Other, Other). A cap below 0 keeps none.
//
// Lookups read an immutable map through an atomic pointer, without a
// lock. Since max is the application's (MaxNamespaces), new pairs are not
// copied into it one by one, which would cost O(max²): they wait in dirty,
// under mu, and are merged in when the lookups that had to take the lock
// reach an eighth of the pairs, so that a merge's copying is paid for by
// as many locked lookups, and when the cap is reached.
type namespaces struct {
	read atomic.Pointer[map[string]*ns]
	full atomic.Bool // the cap is reached, and every pair is in read

	mu     sync.Mutex
	dirty  map[string]*ns // pairs not yet in read
	misses int            // locked lookups since the last merge
	max    int
}

func newNamespaces(max int) *namespaces {
	n := &namespaces{max: max, dirty: make(map[string]*ns)}
	m := make(map[string]*ns)
	n.read.Store(&m)
	if max <= 0 {
		n.full.Store(true)
	}
	return n
}

// get returns the labels of db and coll (a string or bytes, read from a
// command): coll is passed as bytes, without a copy.
func (n *namespaces) get(db string, coll []byte) *ns {
	var buf [192]byte
	k := append(append(append(buf[:0], db...), 0), coll...)
	if v, ok := (*n.read.Load())[string(k)]; ok {
		return v
	}
	if n.full.Load() { // past the cap, without the lock
		return otherNS
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	m := *n.read.Load()
	if v, ok := m[string(k)]; ok {
		return v
	}
	if v, ok := n.dirty[string(k)]; ok {
		if n.misses++; n.misses > len(m)/8 {
			n.merge(m)
		}
		return v
	}
	if len(m)+len(n.dirty) >= n.max {
		return otherNS
	}
	v := &ns{db: strings.ToValidUTF8(db, "\uFFFD"), coll: strings.ToValidUTF8(string(coll), "\uFFFD")}
	n.dirty[string(k)] = v
	if len(m)+len(n.dirty) >= n.max {
		n.merge(m)
		n.full.Store(true)
	}
	return v
}

// merge replaces read (m) by read and dirty; n.mu is held.
func (n *namespaces) merge(m map[string]*ns) {
	next := make(map[string]*ns, len(m)+len(n.dirty))
	for k, v := range m {
		next[k] = v
	}
	for k, v := range n.dirty {
		next[k] = v
	}
	n.read.Store(&next)
	clear(n.dirty)
	n.misses = 0
}

// getString is get for a collection name held in a string.
func (n *namespaces) getString(db, coll string) *ns {
	var buf [96]byte
	return n.get(db, append(buf[:0], coll...))
}

// codes keeps the label values of server error codes.
type codes struct {
	mu sync.RWMutex
	m  map[int32]string
}

func (c *codes) get(code int32) string {
	c.mu.RLock()
	s, ok := c.m[code]
	c.mu.RUnlock()
	if ok {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[code]; ok {
		return s
	}
	if len(c.m) >= maxCodes {
		return Other
	}
	s = strconv.FormatInt(int64(code), 10)
	c.m[code] = s
	return s
}

// errorCode is the error_code label of err: "" for nil, the server's code
// when err carries one, else CodeTimeout, CodeNetwork, CodeCanceled or
// CodeClient.
func (m *Metrics) errorCode(err error) string {
	if err == nil {
		return ""
	}
	if c, ok := event.ServerErrorCode(err); ok {
		return m.codes.get(c)
	}
	var t interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &t) && t.Timeout() {
		return CodeTimeout
	}
	if event.IsNetworkError(err) {
		return CodeNetwork
	}
	if errors.Is(err, context.Canceled) {
		return CodeCanceled
	}
	return CodeClient
}

// failureCode is errorCode for an event that reports a failure: never "".
func (m *Metrics) failureCode(err error) string {
	if err == nil {
		return CodeClient
	}
	return m.errorCode(err)
}

// address returns the server label of host and port, as the pools and
// SDAM spell addresses: "host:port", "[ipv6]:port", or a Unix socket's
// path alone (port 0).
func (m *Metrics) address(host string, port int) string {
	var buf [96]byte
	b := buf[:0]
	switch {
	case port == 0:
		b = append(b, host...)
	case strings.IndexByte(host, ':') >= 0:
		b = append(append(append(b, '['), host...), ']', ':')
		b = strconv.AppendInt(b, int64(port), 10)
	default:
		b = append(append(b, host...), ':')
		b = strconv.AppendInt(b, int64(port), 10)
	}
	return m.servers.bytes(b)
}

// principalCommands are the commands whose first element names a user or
// a role, not a collection: that name is never a label value.
var principalCommands = map[string]bool{
	"createUser": true, "updateUser": true, "dropUser": true, "usersInfo": true,
	"grantRolesToUser": true, "revokeRolesFromUser": true,
	"createRole": true, "updateRole": true, "dropRole": true, "rolesInfo": true,
	"grantRolesToRole": true, "revokeRolesFromRole": true,
	"grantPrivilegesToRole": true, "revokePrivilegesFromRole": true,
	"authenticate": true, "saslStart": true, "saslContinue": true, "logout": true,
}

// collectionOf returns the collection a command names, without a copy:
// the value of its first element when that is a string (find: "c"), or a
// getMore's collection field. It returns nil when there is none, and for
// the user and role management commands, whose first element is a user's
// or a role's name.
func collectionOf(name string, cmd bson.Raw) []byte {
	if len(cmd) <= 5 || principalCommands[name] {
		return nil
	}
	it := cmd.Iter()
	if !it.Next() {
		return nil
	}
	if s := stringBytes(it.Value()); s != nil || name != "getMore" {
		return s
	}
	for it.Next() {
		if string(it.KeyBytes()) == "collection" {
			return stringBytes(it.Value())
		}
	}
	return nil
}

// stringBytes returns the bytes of a BSON string value, nil for any other
// value or a malformed one.
func stringBytes(v bson.RawValue) []byte {
	if v.Type != bson.TypeString || len(v.Value) < 5 {
		return nil
	}
	n := int(uint32(v.Value[0]) | uint32(v.Value[1])<<8 | uint32(v.Value[2])<<16 | uint32(v.Value[3])<<24)
	if n < 1 || n != len(v.Value)-4 || v.Value[len(v.Value)-1] != 0 {
		return nil
	}
	return v.Value[4 : len(v.Value)-1]
}
