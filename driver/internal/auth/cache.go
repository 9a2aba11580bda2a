package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"
)

// config holds what tests replace: the client nonce, the key cache and the
// key derivation. Production code uses defaultConfig.
type config struct {
	nonce  func() (string, error)
	cache  *keyCache
	derive func(newHash func() hash.Hash, password string, salt []byte, iterations int) ([]byte, error)
}

var defaultConfig = &config{nonce: randomNonce, cache: processCache, derive: pbkdf2Derive}

// processCache is shared by every connection of every client in the
// process, as the spec asks, so reconnects skip PBKDF2.
var processCache = newKeyCache(keyCacheSize)

// keyCacheSize bounds the cache. An application has a handful of
// credentials, each with one salt per user, so this is generous.
const keyCacheSize = 64

// randomNonce returns 24 random bytes in base64: printable and free of
// commas, as RFC 5802 requires.
func randomNonce() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}

// pbkdf2Derive is Hi() from RFC 5802: PBKDF2 with the mechanism's HMAC,
// producing one hash-sized block.
func pbkdf2Derive(newHash func() hash.Hash, password string, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(newHash, password, salt, iterations, newHash().Size())
}

// keys returns the SCRAM ClientKey and ServerKey for the password, salt and
// iteration count, from the cache when an earlier conversation derived
// them.
func (c *config) keys(mechanism string, newHash func() hash.Hash, password string, salt []byte, iterations int) (clientKey, serverKey []byte, _ *Error) {
	id := c.cache.id(mechanism, password, salt, iterations)
	if ck, sk, ok := c.cache.get(id); ok {
		return ck, sk, nil
	}
	salted, err := c.derive(newHash, password, salt, iterations)
	if err != nil {
		// The cause is dropped: it could in principle describe its input.
		return nil, nil, fail("deriving the SCRAM salted password failed", nil)
	}
	ck := hmacSum(newHash, salted, "Client Key")
	sk := hmacSum(newHash, salted, "Server Key")
	clear(salted)
	c.cache.put(id, ck, sk)
	return ck, sk, nil
}

func hmacSum(newHash func() hash.Hash, key []byte, data string) []byte {
	m := hmac.New(newHash, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// keyCache maps (mechanism, password, salt, iteration count) to the SCRAM
// client and server keys. Entries are found by a keyed hash of those
// inputs, so the cache holds no password, not even an unsalted hash of one.
// When full it forgets the oldest entry.
type keyCache struct {
	mu      sync.Mutex
	secret  [32]byte // keys the entry id hash; random per cache
	entries map[[32]byte]cachedKeys
	order   [][32]byte // insertion order, for eviction
	max     int
}

type cachedKeys struct{ clientKey, serverKey []byte }

func newKeyCache(max int) *keyCache {
	c := &keyCache{entries: make(map[[32]byte]cachedKeys), max: max}
	_, _ = rand.Read(c.secret[:]) // never fails since Go 1.24
	return c
}

// id hashes the entry's inputs with lengths, so no two inputs collide by
// concatenation.
func (c *keyCache) id(mechanism, password string, salt []byte, iterations int) [32]byte {
	m := hmac.New(sha256.New, c.secret[:])
	var n [8]byte
	for _, part := range [...][]byte{[]byte(mechanism), []byte(password), salt} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		m.Write(n[:])
		m.Write(part)
	}
	binary.BigEndian.PutUint64(n[:], uint64(iterations))
	m.Write(n[:])
	var id [32]byte
	m.Sum(id[:0])
	return id
}

// get returns copies, so a caller cannot change what the next one sees.
func (c *keyCache) get(id [32]byte) (clientKey, serverKey []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return nil, nil, false
	}
	return append([]byte(nil), e.clientKey...), append([]byte(nil), e.serverKey...), true
}

func (c *keyCache) put(id [32]byte, clientKey, serverKey []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[id]; ok {
		return
	}
	for len(c.order) >= c.max && len(c.order) > 0 {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[id] = cachedKeys{append([]byte(nil), clientKey...), append([]byte(nil), serverKey...)}
	c.order = append(c.order, id)
}

// len reports the number of entries (for tests).
func (c *keyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
