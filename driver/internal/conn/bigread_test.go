package conn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// A big reply (over bigReply) that arrives in pieces, with pauses between
// them, is read whole, with or without a Spinner polling between pieces;
// one cut short reports how far it got, as io.ErrUnexpectedEOF.
func TestBigReplyInPieces(t *testing.T) {
	body := doc(t, bson.D{{Key: "pad", Value: strings.Repeat("p", 3<<20)}, {Key: "ok", Value: 1.0}})
	for _, tc := range []struct {
		name  string
		spin  *Spinner
		short bool
	}{
		{"no spinner", nil, false},
		{"spinner 50µs", NewSpinner(50 * time.Microsecond), false},
		{"spinner 1s", NewSpinner(time.Second), false},
		{"no spinner, cut short", nil, true},
		{"spinner, cut short", NewSpinner(time.Second), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := opMsg(101, 2, 0, body, false)
			sent := len(msg)
			if tc.short {
				sent = len(msg) / 2
			}
			addr := serve(t, "tcp", func(s *scriptConn) {
				s.handshake(t, nil)
				if s.read() == nil {
					return
				}
				for off := 0; off < sent; off += 64 << 10 {
					s.write(msg[off:min(off+64<<10, sent)])
					time.Sleep(200 * time.Microsecond)
				}
			})
			c := dialScripted(t, addr, func(cfg *Config) { cfg.Spin = tc.spin })
			r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
			if tc.short {
				var we *wire.Error
				if !errors.As(err, &we) || !errors.Is(err, io.ErrUnexpectedEOF) || we.Offset != sent {
					t.Fatalf("err = %v; want a wire.Error at offset %d with io.ErrUnexpectedEOF", err, sent)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			if !bytes.Equal(r.Body, body) {
				t.Fatalf("body of %d bytes differs from the %d sent", len(r.Body), len(body))
			}
		})
	}
}
