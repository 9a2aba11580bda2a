package auth

import (
	"context"
	"testing"
)

// BenchmarkSCRAMSHA256 runs a whole SCRAM-SHA-256 conversation (client and
// fake server) with the key cache warm and cold. The difference is what the
// cache saves each new connection: the client's PBKDF2.
func BenchmarkSCRAMSHA256(b *testing.B) {
	srv := newFakeServer(b)
	srv.storedIterations = 15000 // the server's default, so a miss costs what it does in production
	srv.addUser("admin", "user", "pencil", "pencil", MechanismSCRAMSHA256)
	cred := &Credential{Mechanism: MechanismSCRAMSHA256, Username: "user", Password: "pencil"}
	ctx := context.Background()
	for _, hit := range []bool{true, false} {
		name := "cache-miss"
		if hit {
			name = "cache-hit"
		}
		b.Run(name, func(b *testing.B) {
			cfg, derivations := testConfig("")
			b.ReportAllocs()
			for b.Loop() {
				if !hit {
					cfg.cache = newKeyCache(keyCacheSize)
				}
				conv, err := start(cred, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := conv.Authenticate(ctx, srv, srv.hello(helloFor(b, conv))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(derivations.Load())/float64(b.N), "pbkdf2/op")
		})
	}
}
