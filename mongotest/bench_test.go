package mongotest

import (
	"context"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// BenchmarkPing is one ping round trip over loopback TCP, client included.
func BenchmarkPing(b *testing.B) {
	s := NewServer(b, Options{CommandLogSize: -1})
	c := connect(b, s, clientOpts{})
	msg := wire.AppendMsg(nil, 1, 0, 0, marshal(b, d("ping", 1, "$db", "admin")))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.write(msg)
		buf, err := wire.ReadMessage(c.nc, 0)
		if err != nil {
			b.Fatal(err)
		}
		buf.Release()
	}
}

// BenchmarkDispatchPing runs one already-decoded request through dispatch,
// as the connection does after decoding: command log, fail points,
// handler, reply building. No network and no message framing.
func BenchmarkDispatchPing(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"log", Options{}},
		{"nolog", Options{CommandLogSize: -1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := newServer(tc.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.cancel()
			c := newConn(s, nil)
			body := marshal(b, d("ping", 1, "$db", "admin"))
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%DefaultCommandLogSize == 0 {
					s.ClearCommands()
				}
				r := &c.req
				*r = Request{DB: "admin", Name: "ping", Body: body, Conn: c}
				out, err := c.dispatch(ctx, r)
				if err != nil || len(out) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHandleMessage is a whole OP_MSG through decoding, dispatch and
// reply encoding, without the socket.
func BenchmarkHandleMessage(b *testing.B) {
	s, err := newServer(Options{CommandLogSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.cancel()
	c := newConn(s, nil)
	msg := wire.AppendMsg(nil, 1, 0, 0, marshal(b, d("ping", 1, "$db", "admin")))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.handleMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindOneByID is the server's own handling of a findOne by _id
// ({filter: {_id: X}, limit: 1, singleBatch: true}) on a 10,000-document
// collection: dispatch, handler, reply building; no network, no framing.
func BenchmarkFindOneByID(b *testing.B) {
	s, err := newServer(Options{CommandLogSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.cancel()
	coll, err := s.store.CollectionOrCreate("bench", "c")
	if err != nil {
		b.Fatal(err)
	}
	const n = 10_000
	for i := 0; i < n; i++ {
		doc := marshal(b, d("_id", int32(i), "name", "document", "n", int64(i), "tags", bson.A{"a", "b"}))
		if err := coll.Insert(doc); err != nil {
			b.Fatal(err)
		}
	}
	bodies := make([]bson.Raw, 64)
	for i := range bodies {
		bodies[i] = marshal(b, d("find", "c", "filter", d("_id", int32(i*151%n)), "limit", int32(1), "singleBatch", true, "$db", "bench"))
	}
	c := newConn(s, nil)
	ctx := context.Background()
	c.req = Request{DB: "bench", Name: "find", Body: bodies[1], Conn: c}
	out, err := c.dispatch(ctx, &c.req)
	if err != nil {
		b.Fatal(err)
	}
	if id, _ := bson.Raw(out).Lookup("cursor", "firstBatch", "0", "_id").Int32OK(); id != 151 {
		b.Fatalf("reply %s", bson.Raw(out))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := &c.req
		*r = Request{DB: "bench", Name: "find", Body: bodies[i%len(bodies)], Conn: c}
		out, err := c.dispatch(ctx, r)
		if err != nil || len(out) < 60 {
			b.Fatalf("%v %s", err, out)
		}
	}
}
