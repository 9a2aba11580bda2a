package bson

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// The ObjectID specification's test plan: the timestamp field is an
// unsigned 32-bit count of seconds.
func TestObjectIDTimestampUnsigned(t *testing.T) {
	tests := []struct {
		hex  string
		want string
	}{
		{"000000000000000000000000", "1970-01-01T00:00:00Z"},
		{"7FFFFFFF0000000000000000", "2038-01-19T03:14:07Z"},
		{"800000000000000000000000", "2038-01-19T03:14:08Z"},
		{"FFFFFFFF0000000000000000", "2106-02-07T06:28:15Z"},
	}
	for _, tt := range tests {
		id, err := ObjectIDFromHex(tt.hex)
		if err != nil {
			t.Fatalf("ObjectIDFromHex(%q): %v", tt.hex, err)
		}
		got := id.Timestamp()
		if s := got.Format(time.RFC3339); s != tt.want {
			t.Errorf("%s.Timestamp() = %s, want %s", tt.hex, s, tt.want)
		}
		if got.Location() != time.UTC {
			t.Errorf("%s.Timestamp() location = %v, want UTC", tt.hex, got.Location())
		}
		// And the other direction: generating from that time writes the
		// same four bytes.
		gen := NewObjectIDFromTimestamp(got)
		if !strings.EqualFold(gen.Hex()[:8], tt.hex[:8]) {
			t.Errorf("NewObjectIDFromTimestamp(%s) timestamp bytes = %s, want %s", tt.want, gen.Hex()[:8], tt.hex[:8])
		}
	}
}

// The specification's test plan: the counter wraps from 0xFFFFFF to 0.
func TestObjectIDCounterWraps(t *testing.T) {
	tests := []struct {
		counter uint32
		want    string
	}{
		{0, "000000"},
		{1, "000001"},
		{0xFFFFFE, "fffffe"},
		{0xFFFFFF, "ffffff"},
		{0x1000000, "000000"},
		{0x1000001, "000001"},
		{0xFFFFFFFF, "ffffff"},
	}
	for _, tt := range tests {
		id := makeObjectID(0, tt.counter)
		if got := id.Hex()[18:]; got != tt.want {
			t.Errorf("makeObjectID(0, %#x) counter = %s, want %s", tt.counter, got, tt.want)
		}
	}

	// Through the real counter: store the last value before the wrap and
	// check that two consecutive ids carry ffffff then 000000.
	saved := objectIDCounter.Load()
	defer objectIDCounter.Store(saved)
	objectIDCounter.Store(0xFFFFFF)
	a, b := NewObjectID(), NewObjectID()
	if a.Hex()[18:] != "ffffff" || b.Hex()[18:] != "000000" {
		t.Errorf("consecutive ids across the wrap have counters %s, %s; want ffffff, 000000", a.Hex()[18:], b.Hex()[18:])
	}
}

func TestObjectIDGeneration(t *testing.T) {
	before := time.Now().Truncate(time.Second)
	a := NewObjectID()
	b := NewObjectID()
	after := time.Now()
	if a == b {
		t.Fatalf("two NewObjectID calls returned the same id %v", a)
	}
	if ts := a.Timestamp(); ts.Before(before) || ts.After(after) {
		t.Errorf("timestamp %v is not between %v and %v", ts, before, after)
	}
	if string(a[4:9]) != string(objectIDProcessUnique[:]) || string(b[4:9]) != string(a[4:9]) {
		t.Errorf("process-unique bytes differ: %x and %x, want %x", a[4:9], b[4:9], objectIDProcessUnique)
	}
	ca := uint32(a[9])<<16 | uint32(a[10])<<8 | uint32(a[11])
	cb := uint32(b[9])<<16 | uint32(b[10])<<8 | uint32(b[11])
	// Usually cb == ca+1, but a test running in parallel may take counter
	// values between the two calls; the counter must still have advanced.
	if cb == ca {
		t.Errorf("counter did not advance: %06x then %06x", ca, cb)
	}
	if a.IsZero() || !NilObjectID.IsZero() {
		t.Errorf("IsZero: generated id %v reports %v, NilObjectID reports %v", a, a.IsZero(), NilObjectID.IsZero())
	}
}

func TestObjectIDConcurrentUnique(t *testing.T) {
	const goroutines, each = 8, 2000
	var mu sync.Mutex
	seen := make(map[ObjectID]bool, goroutines*each)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]ObjectID, each)
			for i := range ids {
				ids[i] = NewObjectID()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if seen[id] {
					t.Errorf("duplicate id %v", id)
				}
				seen[id] = true
			}
		}()
	}
	wg.Wait()
	if len(seen) != goroutines*each {
		t.Errorf("got %d distinct ids, want %d", len(seen), goroutines*each)
	}
}

func TestObjectIDNoAllocs(t *testing.T) {
	var sink ObjectID
	if n := testing.AllocsPerRun(1000, func() { sink = NewObjectID() }); n != 0 {
		t.Errorf("NewObjectID allocates %v times per call, want 0", n)
	}
	_ = sink
}

// objectIDChildEnv makes the test binary, run as a child process, print one
// new ObjectID and exit; see TestObjectIDNewProcess.
const objectIDChildEnv = "MONGOSCOPE_OBJECTID_CHILD"

// The specification's test plan asks that a new process gets a different
// process-unique value. Go cannot fork a running process, so the check
// starts a fresh copy of the test binary, the "similar process creation
// operation" Go programs have.
func TestObjectIDNewProcess(t *testing.T) {
	if os.Getenv(objectIDChildEnv) == "1" {
		fmt.Println("OID=" + NewObjectID().Hex())
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("starts a child process; skipped in -short mode")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	parent := NewObjectID()
	for i := 0; i < 2; i++ {
		cmd := exec.Command(exe, "-test.run=^TestObjectIDNewProcess$")
		cmd.Env = append(os.Environ(), objectIDChildEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		s := string(out)
		i := strings.Index(s, "OID=")
		if i < 0 || len(s) < i+4+24 {
			t.Fatalf("child printed no id: %q", s)
		}
		child, err := ObjectIDFromHex(s[i+4 : i+4+24])
		if err != nil {
			t.Fatalf("child printed a bad id: %v", err)
		}
		if string(child[4:9]) == string(parent[4:9]) {
			t.Errorf("child process has the parent's process-unique value %x", parent[4:9])
		}
	}
}

func TestObjectIDFromHex(t *testing.T) {
	tests := []struct {
		in      string
		want    string // Hex() of the result; "" for an error
		wantPos int
		wantMsg string
	}{
		{in: "60a6fe9a54f4180c86309efa", want: "60a6fe9a54f4180c86309efa"},
		{in: "60A6FE9A54F4180C86309EFA", want: "60a6fe9a54f4180c86309efa"},
		{in: "000000000000000000000000", want: "000000000000000000000000"},
		{in: "", wantPos: -1, wantMsg: "length is 0 characters, want 24"},
		{in: "60a6fe9a54f4180c86309ef", wantPos: -1, wantMsg: "length is 23"},
		{in: "60a6fe9a54f4180c86309efa0", wantPos: -1, wantMsg: "length is 25"},
		{in: "g0a6fe9a54f4180c86309efa", wantPos: 0, wantMsg: "'g' is not a hexadecimal digit"},
		{in: "60a6fe9a54f4180c86309efz", wantPos: 23, wantMsg: "'z' is not a hexadecimal digit"},
		{in: "60a6fe9a54f4180c8630 efa", wantPos: 20, wantMsg: "' ' is not"},
		{in: "60a6fe9a54f4180c86309e\xc3\xa9", wantPos: 22, wantMsg: "byte 0xc3 is not"},
		{in: "0x0a6fe9a54f4180c86309efa", wantPos: -1, wantMsg: "length is 25"},
		{in: strings.Repeat("z", 1000), wantPos: -1, wantMsg: "length is 1000"},
	}
	for _, tt := range tests {
		id, err := ObjectIDFromHex(tt.in)
		if tt.want != "" {
			if err != nil || id.Hex() != tt.want {
				t.Errorf("ObjectIDFromHex(%q) = %v, %v; want %s", tt.in, id, err, tt.want)
			}
			continue
		}
		var he *ObjectIDHexError
		if !errors.As(err, &he) {
			t.Errorf("ObjectIDFromHex(%q) error = %v (%T), want *ObjectIDHexError", tt.in, err, err)
			continue
		}
		if he.Pos != tt.wantPos || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("ObjectIDFromHex(%q) error = %q at pos %d, want pos %d and %q", tt.in, err, he.Pos, tt.wantPos, tt.wantMsg)
		}
		if len(err.Error()) > 200 {
			t.Errorf("ObjectIDFromHex error for a %d-byte input is %d bytes long; inputs must be shortened", len(tt.in), len(err.Error()))
		}
		if id != NilObjectID {
			t.Errorf("ObjectIDFromHex(%q) returned %v with an error, want NilObjectID", tt.in, id)
		}
	}
}

func TestObjectIDFormatting(t *testing.T) {
	id, err := ObjectIDFromHex("60a6fe9a54f4180c86309efa")
	if err != nil {
		t.Fatal(err)
	}
	if got := id.String(); got != `ObjectID("60a6fe9a54f4180c86309efa")` {
		t.Errorf("String() = %s", got)
	}
	if got := fmt.Sprint(id); got != `ObjectID("60a6fe9a54f4180c86309efa")` {
		t.Errorf("fmt.Sprint = %s", got)
	}
	txt, err := id.MarshalText()
	if err != nil || string(txt) != "60a6fe9a54f4180c86309efa" {
		t.Errorf("MarshalText = %s, %v", txt, err)
	}
	var back ObjectID
	if err := back.UnmarshalText(txt); err != nil || back != id {
		t.Errorf("UnmarshalText round trip = %v, %v", back, err)
	}
	if err := back.UnmarshalText([]byte("nope")); err == nil {
		t.Error("UnmarshalText(nope) succeeded")
	}
	if err := back.UnmarshalText(nil); err == nil {
		t.Error("UnmarshalText(empty) succeeded")
	}
}

func TestObjectIDJSON(t *testing.T) {
	type doc struct {
		ID  ObjectID  `json:"id"`
		Ptr *ObjectID `json:"ptr"`
	}
	id, _ := ObjectIDFromHex("60a6fe9a54f4180c86309efa")
	out, err := json.Marshal(doc{ID: id, Ptr: &id})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"60a6fe9a54f4180c86309efa","ptr":"60a6fe9a54f4180c86309efa"}`; string(out) != want {
		t.Errorf("json.Marshal = %s, want %s", out, want)
	}
	tests := []struct {
		in      string
		want    ObjectID
		wantErr bool
	}{
		{in: `"60a6fe9a54f4180c86309efa"`, want: id},
		{in: `"\u00360a6fe9a54f4180c86309efa"`, want: id}, // escaped '6'
		{in: `null`, want: NilObjectID},
		{in: `"60a6"`, wantErr: true},
		{in: `42`, wantErr: true},
		{in: `{"$oid":"60a6fe9a54f4180c86309efa"}`, wantErr: true},
		{in: `"`, wantErr: true},
	}
	for _, tt := range tests {
		var got ObjectID
		err := got.UnmarshalJSON([]byte(tt.in))
		if tt.wantErr {
			var he *ObjectIDHexError
			if !errors.As(err, &he) {
				t.Errorf("UnmarshalJSON(%s) error = %v, want *ObjectIDHexError", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("UnmarshalJSON(%s) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	var d doc
	if err := json.Unmarshal(out, &d); err != nil || d.ID != id || d.Ptr == nil || *d.Ptr != id {
		t.Errorf("json.Unmarshal round trip = %+v, %v", d, err)
	}
}

func TestObjectIDCompare(t *testing.T) {
	early := makeObjectID(100, 5)
	late := makeObjectID(101, 0)
	sameSecond := makeObjectID(100, 6)
	tests := []struct {
		a, b ObjectID
		want int
	}{
		{early, late, -1},
		{late, early, 1},
		{early, early, 0},
		{early, sameSecond, -1},
		{NilObjectID, early, -1},
		// Timestamps past 2038 still sort after earlier ones: unsigned.
		{makeObjectID(0x7FFFFFFF, 0), makeObjectID(0x80000000, 0), -1},
	}
	for _, tt := range tests {
		if got := tt.a.Compare(tt.b); got != tt.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func ExampleNewObjectID() {
	id := NewObjectID()
	// The first four bytes are the creation time in seconds.
	fmt.Println(time.Since(id.Timestamp()) < time.Minute)
	fmt.Println(len(id.Hex()))
	// Output:
	// true
	// 24
}

func ExampleObjectIDFromHex() {
	id, err := ObjectIDFromHex("60a6fe9a54f4180c86309efa")
	if err != nil {
		panic(err)
	}
	fmt.Println(id)
	fmt.Println(id.Timestamp())

	_, err = ObjectIDFromHex("60a6fe9a54f4180c86309efg")
	fmt.Println(err)
	// Output:
	// ObjectID("60a6fe9a54f4180c86309efa")
	// 2021-05-21 00:28:10 +0000 UTC
	// bson: invalid ObjectID hex "60a6fe9a54f4180c86309efg": byte 23: 'g' is not a hexadecimal digit
}

func BenchmarkNewObjectID(b *testing.B) {
	b.ReportAllocs()
	var id ObjectID
	for i := 0; i < b.N; i++ {
		id = NewObjectID()
	}
	_ = id
}

func FuzzObjectIDFromHex(f *testing.F) {
	for _, s := range []string{"60a6fe9a54f4180c86309efa", "60A6FE9A54F4180C86309EFA", "", "zz", "000000000000000000000000", "60a6fe9a54f4180c86309ef\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ObjectIDFromHex(s)
		if err != nil {
			var he *ObjectIDHexError
			if !errors.As(err, &he) {
				t.Fatalf("error %v is %T, want *ObjectIDHexError", err, err)
			}
			if he.Pos >= len(s) || (he.Pos < 0 && len(s) == 24) {
				t.Fatalf("error position %d is wrong for input of length %d", he.Pos, len(s))
			}
			if id != NilObjectID {
				t.Fatalf("error with non-nil id %v", id)
			}
			return
		}
		// Success means exactly 24 hex digits, and the id prints back as
		// the same digits in lower case.
		if len(s) != 24 || id.Hex() != strings.ToLower(s) {
			t.Fatalf("ObjectIDFromHex(%q) = %s", s, id.Hex())
		}
		again, err := ObjectIDFromHex(id.Hex())
		if err != nil || again != id {
			t.Fatalf("round trip of %s = %v, %v", id.Hex(), again, err)
		}
	})
}
