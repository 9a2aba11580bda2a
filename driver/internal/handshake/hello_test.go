package handshake

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func testMetadata(t testing.TB) bson.Raw {
	t.Helper()
	md, err := buildMetadata(Options{AppName: "app", Getenv: envOf(nil), FileExists: noFile}, testHost)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func marshal(t testing.TB, d bson.D) []byte {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendHello(t *testing.T) {
	md := testMetadata(t)
	yes, no := true, false
	saslExtra := func(dst []byte) []byte {
		dst = bson.AppendStringElement(dst, "saslSupportedMechs", "admin.user")
		return bson.AppendDocumentElement(dst, "speculativeAuthenticate", marshal(t, bson.D{{Key: "saslStart", Value: int32(1)}}))
	}
	// head is what every handshake starts with after the command name.
	head := func(cmd string) bson.D {
		return bson.D{{Key: cmd, Value: int32(1)}, {Key: "helloOk", Value: true}, {Key: "backpressure", Value: "2"}, {Key: "client", Value: md}}
	}
	tests := []struct {
		name   string
		opts   Options
		legacy bool
		msg    bool // AppendHandshakeMsg rather than AppendHello
		extra  func([]byte) []byte
		want   bson.D
	}{
		{name: "hello, minimal", want: append(head("hello"), bson.E{Key: "$db", Value: "admin"})},
		{name: "legacy, minimal", legacy: true, want: head("isMaster")},
		{
			name:  "hello, every field",
			opts:  Options{Compressors: []string{"zstd", "snappy", "zlib"}, LoadBalanced: true, ServerAPI: &ServerAPI{Version: "1", Strict: &yes, DeprecationErrors: &no}},
			extra: saslExtra,
			want: append(head("hello"),
				bson.E{Key: "compression", Value: bson.A{"zstd", "snappy", "zlib"}},
				bson.E{Key: "loadBalanced", Value: true},
				bson.E{Key: "saslSupportedMechs", Value: "admin.user"},
				bson.E{Key: "speculativeAuthenticate", Value: bson.D{{Key: "saslStart", Value: int32(1)}}},
				bson.E{Key: "apiVersion", Value: "1"},
				bson.E{Key: "apiStrict", Value: true},
				bson.E{Key: "apiDeprecationErrors", Value: false},
				bson.E{Key: "$db", Value: "admin"}),
		},
		{
			name: "hello, server API version only",
			opts: Options{ServerAPI: &ServerAPI{Version: "1"}},
			want: append(head("hello"), bson.E{Key: "apiVersion", Value: "1"}, bson.E{Key: "$db", Value: "admin"}),
		},
		{
			name:   "legacy with compression and auth",
			opts:   Options{Compressors: []string{"snappy"}},
			legacy: true,
			extra:  saslExtra,
			want: append(head("isMaster"),
				bson.E{Key: "compression", Value: bson.A{"snappy"}},
				bson.E{Key: "saslSupportedMechs", Value: "admin.user"},
				bson.E{Key: "speculativeAuthenticate", Value: bson.D{{Key: "saslStart", Value: int32(1)}}}),
		},
		{name: "empty compressor list omitted", opts: Options{Compressors: []string{}}, want: append(head("hello"), bson.E{Key: "$db", Value: "admin"})},
		{name: "OP_MSG handshake, no API, not load balanced: legacy hello", msg: true, want: append(head("isMaster"), bson.E{Key: "$db", Value: "admin"})},
		{
			name: "OP_MSG handshake, load balanced: hello",
			opts: Options{LoadBalanced: true},
			msg:  true,
			want: append(head("hello"), bson.E{Key: "loadBalanced", Value: true}, bson.E{Key: "$db", Value: "admin"}),
		},
		{
			name: "OP_MSG handshake, server API: hello",
			opts: Options{ServerAPI: &ServerAPI{Version: "1", DeprecationErrors: &yes}},
			msg:  true,
			want: append(head("hello"), bson.E{Key: "apiVersion", Value: "1"}, bson.E{Key: "apiDeprecationErrors", Value: true}, bson.E{Key: "$db", Value: "admin"}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("wire header")
			var got []byte
			var err error
			if tc.msg {
				got, err = AppendHandshakeMsg(bytes.Clone(prefix), md, tc.opts, tc.extra)
			} else {
				got, err = AppendHello(bytes.Clone(prefix), md, tc.opts, tc.legacy, tc.extra)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(got, prefix) {
				t.Fatal("dst prefix was overwritten")
			}
			want := marshal(t, tc.want)
			if !bytes.Equal(got[len(prefix):], want) {
				t.Fatalf("command\n got %v\nwant %v", bson.Raw(got[len(prefix):]), bson.Raw(want))
			}
			// Prose Test 9: every handshake carries backpressure "2" as a string.
			if v := bson.Raw(got[len(prefix):]).Lookup("backpressure"); v.Type != bson.TypeString || v.StringValue() != "2" {
				t.Fatalf("backpressure = %v", v)
			}
		})
	}
	t.Logf("handshake prose Test 9 (backpressure \"2\"): %d commands checked", len(tests))
}

func TestAppendHelloWithoutMetadata(t *testing.T) {
	got, err := AppendHello(nil, nil, Options{}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := marshal(t, bson.D{{Key: "hello", Value: int32(1)}, {Key: "helloOk", Value: true}, {Key: "backpressure", Value: "2"}, {Key: "$db", Value: "admin"}})
	if !bytes.Equal(got, want) {
		t.Fatalf("got %v want %v", bson.Raw(got), bson.Raw(want))
	}
}

func TestAppendHelloErrors(t *testing.T) {
	md := testMetadata(t)
	tests := []struct {
		name     string
		metadata bson.Raw
		opts     Options
		legacy   bool
		extra    func([]byte) []byte
		field    string
	}{
		{name: "legacy with load balancing", metadata: md, opts: Options{LoadBalanced: true}, legacy: true, field: "LoadBalanced"},
		{name: "legacy with server API", metadata: md, opts: Options{ServerAPI: &ServerAPI{Version: "1"}}, legacy: true, field: "ServerAPI"},
		{name: "unknown API version", metadata: md, opts: Options{ServerAPI: &ServerAPI{Version: "2"}}, field: "ServerAPI.Version"},
		{name: "empty API version", metadata: md, opts: Options{ServerAPI: &ServerAPI{}}, field: "ServerAPI.Version"},
		{name: "metadata too short", metadata: bson.Raw{1, 2}, field: "metadata"},
		{name: "metadata length mismatch", metadata: append(bytes.Clone(md), 0), field: "metadata"},
		{name: "metadata not NUL-terminated", metadata: func() bson.Raw { b := bytes.Clone(md); b[len(b)-1] = 1; return b }(), field: "metadata"},
		{name: "extra truncates the buffer", metadata: md, extra: func([]byte) []byte { return nil }, field: "extra"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := AppendHello(dst, tc.metadata, tc.opts, tc.legacy, tc.extra)
			var he *Error
			if !errors.As(err, &he) || he.Field != tc.field {
				t.Fatalf("error %v, want *Error for %q", err, tc.field)
			}
			if string(got) != "keep" {
				t.Fatalf("dst changed on error: %q", got)
			}
		})
	}
}

func TestUseHello(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want bool
	}{
		{Options{}, false},
		{Options{Compressors: []string{"zstd"}, AppName: "x"}, false},
		{Options{LoadBalanced: true}, true},
		{Options{ServerAPI: &ServerAPI{Version: "1"}}, true},
	} {
		if got := UseHello(tc.o); got != tc.want {
			t.Errorf("UseHello(%+v) = %v", tc.o, got)
		}
	}
}

func TestNegotiateCompressor(t *testing.T) {
	for _, tc := range []struct {
		client, server []string
		want           string
	}{
		{nil, nil, ""},
		{[]string{"zstd"}, nil, ""},
		{nil, []string{"zstd"}, ""},
		{[]string{"zstd", "snappy"}, []string{"snappy", "zstd"}, "zstd"},
		{[]string{"zlib", "snappy"}, []string{"snappy"}, "snappy"},
		{[]string{"Snappy"}, []string{"snappy"}, ""},
		{[]string{"zlib"}, []string{"snappy", "zstd"}, ""},
	} {
		if got := NegotiateCompressor(tc.client, tc.server); got != tc.want {
			t.Errorf("NegotiateCompressor(%q, %q) = %q, want %q", tc.client, tc.server, got, tc.want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	inner := errors.New("inner")
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Field: "AppName", Reason: "too long"}, "handshake: AppName: too long"},
		{&Error{Reason: "reply is not valid BSON", Err: inner}, "handshake: reply is not valid BSON: inner"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if !errors.Is(&Error{Err: inner}, inner) {
		t.Error("Unwrap does not expose the cause")
	}
}

func BenchmarkAppendHello(b *testing.B) {
	md := testMetadata(b)
	o := Options{Compressors: []string{"zstd", "snappy"}, ServerAPI: &ServerAPI{Version: "1"}}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		out, err := AppendHello(buf[:0], md, o, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		buf = out
	}
}
