package conn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// Interop with FerretDB v1, a real third-party server, started by make
// test (tools/ferretdb.sh) and found through MONGOSCOPE_FERRETDB_URI and
// MONGOSCOPE_FERRETDB_AUTH_URI. Outside make test the tests skip unless
// MONGOSCOPE_REQUIRE_FERRETDB=1, which make test sets so a server that
// failed to start fails the run instead of skipping.

func ferretURI(t *testing.T, env string) *connstring.ConnString {
	t.Helper()
	uri := os.Getenv(env)
	if uri == "" {
		if os.Getenv("MONGOSCOPE_REQUIRE_FERRETDB") == "1" {
			t.Fatalf("%s is not set but MONGOSCOPE_REQUIRE_FERRETDB=1", env)
		}
		t.Skipf("%s is not set; make test starts FerretDB and sets it", env)
	}
	cs, err := connstring.Parse(uri)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return cs
}

func ferretDial(t *testing.T, cfg Config) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial %s: %v", cfg.Address, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func run(t *testing.T, c *Conn, db string, d bson.D, seqs ...wire.Sequence) bson.Raw {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.Command(ctx, &Request{DB: db, Command: doc(t, d), Sequences: seqs})
	if err != nil {
		t.Fatalf("%s: %v", d[0].Key, err)
	}
	defer r.Release()
	return append(bson.Raw(nil), r.Body...)
}

func TestFerretDBHandshakeAndCRUD(t *testing.T) {
	cs := ferretURI(t, "MONGOSCOPE_FERRETDB_URI")
	md, err := handshake.Metadata(handshake.Options{AppName: "mongoscope-interop"})
	if err != nil {
		t.Fatal(err)
	}
	c := ferretDial(t, Config{Address: cs.Hosts[0], Metadata: md,
		Handshake: handshake.Options{AppName: "mongoscope-interop", Compressors: []string{"zstd", "snappy", "zlib"}}, ZlibLevel: -1})
	h := c.Hello()
	if !h.IsWritablePrimary || h.MaxWireVersion < MinWireVersion || h.MaxBSONObjectSize <= 0 || h.MaxWriteBatchSize <= 0 {
		t.Errorf("hello from FerretDB read as %+v", h)
	}
	t.Logf("FerretDB hello: maxWireVersion %d, compression %v, connectionId %d, helloOk %v", h.MaxWireVersion, h.Compression, h.ConnectionID, h.HelloOK)
	if len(h.Compression) == 0 && c.Compressor() != wire.CompressorNoop {
		t.Errorf("compressor %v negotiated with a server that offers none", c.Compressor())
	}

	// The Stable API hello goes over OP_MSG hello; FerretDB accepts it.
	strict := false
	ferretDial(t, Config{Address: cs.Hosts[0], Metadata: md, Handshake: handshake.Options{ServerAPI: &handshake.ServerAPI{Version: "1", Strict: &strict}}})

	db := fmt.Sprintf("mongoscope_conn_%d", time.Now().UnixNano())
	defer func() { run(t, c, db, bson.D{{Key: "dropDatabase", Value: int32(1)}}) }()

	// Insert 250 documents, split into batches by a small maxWriteBatchSize
	// to exercise SplitBatch against a real server.
	var docs []bson.Raw
	for i := 0; i < 250; i++ {
		docs = append(docs, doc(t, bson.D{{Key: "_id", Value: int32(i)}, {Key: "name", Value: fmt.Sprintf("doc-%03d", i)}, {Key: "even", Value: i%2 == 0}}))
	}
	cmd := doc(t, bson.D{{Key: "insert", Value: "things"}, {Key: "ordered", Value: true}})
	limits := wire.Limits{MaxBatchCount: 100, MaxDocumentSize: int(h.MaxBSONObjectSize), MaxMessageSize: int(h.MaxMessageSizeBytes)}
	total, batches := 0, 0
	for rest := docs; len(rest) > 0; {
		n, err := wire.SplitBatch(rest, 16+4+1+len(cmd)+len(db)+12+1+4+len("documents")+1, limits)
		if err != nil {
			t.Fatal(err)
		}
		reply := run(t, c, db, bson.D{{Key: "insert", Value: "things"}, {Key: "ordered", Value: true}}, wire.Sequence{Identifier: "documents", Docs: rest[:n]})
		total += int(reply.Lookup("n").Int32())
		batches++
		rest = rest[n:]
	}
	if total != 250 || batches != 3 {
		t.Errorf("inserted %d in %d batches, want 250 in 3", total, batches)
	}

	// A duplicate key comes back in writeErrors with ok:1.
	reply := run(t, c, db, bson.D{{Key: "insert", Value: "things"}}, wire.Sequence{Identifier: "documents", Docs: docs[:1]})
	if we, ok := reply.Lookup("writeErrors").ArrayOK(); !ok || we.Lookup("0", "code").Int32() != 11000 {
		t.Errorf("duplicate insert reply %v", reply)
	}

	// find with a small batch, then getMore to the end, then killCursors on
	// a second cursor.
	first := run(t, c, db, bson.D{{Key: "find", Value: "things"}, {Key: "filter", Value: bson.D{{Key: "even", Value: true}}},
		{Key: "sort", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "batchSize", Value: int32(50)}})
	id := first.Lookup("cursor", "id").Int64()
	seen := countArray(first.Lookup("cursor", "firstBatch").Array())
	for id != 0 {
		more := run(t, c, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "things"}, {Key: "batchSize", Value: int32(50)}})
		seen += countArray(more.Lookup("cursor", "nextBatch").Array())
		id = more.Lookup("cursor", "id").Int64()
	}
	if seen != 125 {
		t.Errorf("find returned %d documents, want 125", seen)
	}
	second := run(t, c, db, bson.D{{Key: "find", Value: "things"}, {Key: "batchSize", Value: int32(2)}})
	if id := second.Lookup("cursor", "id").Int64(); id != 0 {
		killed := run(t, c, db, bson.D{{Key: "killCursors", Value: "things"}, {Key: "cursors", Value: []int64{id}}})
		if countArray(killed.Lookup("cursorsKilled").Array()) != 1 {
			t.Errorf("killCursors reply %v", killed)
		}
	}

	// An unacknowledged write (moreToCome). FerretDB v1 answers it anyway,
	// which mongod never does; the stray reply answers the insert, not the
	// next command, so the connection must refuse it by its responseTo and
	// close rather than hand it to the wrong caller. The write itself lands.
	ctx := context.Background()
	extra := doc(t, bson.D{{Key: "_id", Value: int32(1000)}})
	if _, err := c.Command(ctx, &Request{DB: db, Command: doc(t, bson.D{{Key: "insert", Value: "things"},
		{Key: "writeConcern", Value: bson.D{{Key: "w", Value: int32(0)}}}}), MoreToCome: true,
		Sequences: []wire.Sequence{{Identifier: "documents", Docs: []bson.Raw{extra}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Command(ctx, &Request{DB: db, Command: doc(t, bson.D{{Key: "count", Value: "things"}})})
	var ne *NetworkError
	if err == nil {
		t.Log("FerretDB no longer answers moreToCome requests")
	} else if !errors.As(err, &ne) || !strings.Contains(err.Error(), "answers request") || !c.Closed() {
		t.Fatalf("the reply to an unacknowledged write: %v", err)
	} else {
		c = ferretDial(t, Config{Address: cs.Hosts[0], Metadata: md})
	}
	count := run(t, c, db, bson.D{{Key: "count", Value: "things"}})
	if n, _ := count.Lookup("n").AsInt64OK(); n != 251 {
		t.Errorf("count after the unacknowledged insert: %v", count)
	}

	// delete, with its statements as a document sequence.
	del := run(t, c, db, bson.D{{Key: "delete", Value: "things"}}, wire.Sequence{Identifier: "deletes",
		Docs: []bson.Raw{doc(t, bson.D{{Key: "q", Value: bson.D{{Key: "even", Value: false}}}, {Key: "limit", Value: int32(0)}})}})
	if del.Lookup("n").Int32() != 125 {
		t.Errorf("delete reply %v", del)
	}

	// An unknown command is a typed server error; the connection survives.
	_, err = c.Command(ctx, &Request{DB: db, Command: doc(t, bson.D{{Key: "noSuchCommand", Value: int32(1)}})})
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Code != 59 || ce.CodeName != "CommandNotFound" || c.Closed() {
		t.Errorf("unknown command: %#v (closed %v)", err, c.Closed())
	}
	run(t, c, "admin", bson.D{{Key: "ping", Value: int32(1)}})
}

func countArray(a bson.Raw) int {
	n := 0
	it := a.Iter()
	for it.Next() {
		n++
	}
	return n
}

// SCRAM against FerretDB's authentication: both mechanisms, negotiation,
// speculative authentication, and a wrong password.
func TestFerretDBSCRAM(t *testing.T) {
	cs := ferretURI(t, "MONGOSCOPE_FERRETDB_AUTH_URI")
	md := testMetadata(t)
	source := "admin"
	if cs.AuthSource != "" {
		source = cs.AuthSource
	}
	for _, mech := range []string{"", "SCRAM-SHA-256", "SCRAM-SHA-1"} {
		t.Run("mechanism="+mech, func(t *testing.T) {
			cred := &auth.Credential{Mechanism: mech, Source: source, Username: cs.Username, Password: string(cs.Password), PasswordSet: true}
			c := ferretDial(t, Config{Address: cs.Hosts[0], Metadata: md, Credential: cred})
			st := run(t, c, "admin", bson.D{{Key: "connectionStatus", Value: int32(1)}})
			users := st.Lookup("authInfo", "authenticatedUsers").Array()
			if users.Lookup("0", "user").StringValue() != cs.Username {
				t.Errorf("connectionStatus after authentication: %v", st)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		cred := &auth.Credential{Mechanism: "SCRAM-SHA-256", Source: source, Username: cs.Username, Password: "not-" + string(cs.Password), PasswordSet: true}
		_, err := Dial(context.Background(), Config{Address: cs.Hosts[0], Metadata: md, Credential: cred, ConnectTimeout: 10 * time.Second})
		var he *HandshakeError
		if !errors.As(err, &he) || he.Stage != "auth" {
			t.Fatalf("Dial with a wrong password: %v", err)
		}
		if strings.Contains(err.Error(), string(cs.Password)) || strings.Contains(fmt.Sprintf("%+v %#v", err, cred), string(cs.Password)) {
			t.Errorf("the error or credential shows the password: %v", err)
		}
	})
}
