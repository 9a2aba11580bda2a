package wire

import (
	"bytes"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func BenchmarkAppendMsg(b *testing.B) {
	m, err := ParseMsg(bigMsg(b, 100))
	if err != nil {
		b.Fatal(err)
	}
	for _, sum := range []bool{false, true} {
		name := "plain"
		flags := Flags(0)
		if sum {
			name, flags = "checksum", ChecksumPresent
		}
		b.Run(name, func(b *testing.B) {
			buf := AppendMsg(nil, 1, 0, flags, m.Body, m.Sequences...)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendMsg(buf[:0], 1, 0, flags, m.Body, m.Sequences...)
			}
		})
	}
}

func BenchmarkParseMsg(b *testing.B) {
	for _, tt := range []struct {
		name string
		msg  []byte
	}{
		{"hello", h(b, helloMsgHex)},
		{"insert100", bigMsg(b, 100)},
		{"insert100checksum", func() []byte {
			m, _ := ParseMsg(bigMsg(b, 100))
			return AppendMsg(nil, 1, 0, ChecksumPresent, m.Body, m.Sequences...)
		}()},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseMsg(tt.msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCompress(b *testing.B) {
	msg := bigMsg(b, 100)
	for _, c := range allCompressors {
		b.Run(c.String(), func(b *testing.B) {
			buf, err := Compress(nil, msg, c, -1)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if buf, err = Compress(buf[:0], msg, c, -1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	msg := bigMsg(b, 100)
	for _, c := range allCompressors {
		b.Run(c.String(), func(b *testing.B) {
			cm, err := Compress(nil, msg, c, -1)
			if err != nil {
				b.Fatal(err)
			}
			out, err := Decompress(nil, cm, len(msg))
			if err != nil || !bytes.Equal(out, msg) {
				b.Fatal("round trip failed", err)
			}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if out, err = Decompress(out[:0], cm, len(msg)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadMessage(b *testing.B) {
	msg := bigMsg(b, 100)
	r := bytes.NewReader(msg)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(msg)
		buf, err := ReadMessage(r, DefaultMaxMessageSize)
		if err != nil {
			b.Fatal(err)
		}
		buf.Release()
	}
}

func BenchmarkSplitBatch(b *testing.B) {
	docs := make([]bson.Raw, 1000)
	for i := range docs {
		docs[i] = make(bson.Raw, 100+i%50)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SplitBatch(docs, 200, Limits{MaxMessageSize: 48_000}); err != nil {
			b.Fatal(err)
		}
	}
}
