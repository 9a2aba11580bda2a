package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"hash"
	"slices"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// TestConversations runs whole handshakes against the fake SCRAM server.
func TestConversations(t *testing.T) {
	tests := []struct {
		name    string
		cred    Credential
		setup   func(s *fakeServer)
		wantErr string // "" for success
		// wantCommands are the commands sent after hello.
		wantCommands []string
		// wantMech is the mechanism the conversation used.
		wantMech string
	}{
		{
			name:         "SCRAM-SHA-256 full exchange",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
		{
			name:         "SCRAM-SHA-1 full exchange",
			cred:         Credential{Mechanism: MechanismSCRAMSHA1, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantMech:     MechanismSCRAMSHA1,
		},
		{
			name:         "SCRAM-SHA-256 with a server that does not skip the empty exchange",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.speculative = false; s.ignoreSkipEmpty = true },
			wantCommands: []string{"saslStart", "saslContinue", "saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
		{
			name:         "SCRAM-SHA-1 speculative with a server that does not skip the empty exchange",
			cred:         Credential{Mechanism: MechanismSCRAMSHA1, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.ignoreSkipEmpty = true },
			wantCommands: []string{"saslContinue", "saslContinue"},
			wantMech:     MechanismSCRAMSHA1,
		},
		{
			name:         "SCRAM-SHA-256 speculative",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"},
			wantCommands: []string{"saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
		{
			name:         "SCRAM-SHA-1 speculative",
			cred:         Credential{Mechanism: MechanismSCRAMSHA1, Username: "sha1", Password: "pw"},
			wantCommands: []string{"saslContinue"},
			wantMech:     MechanismSCRAMSHA1,
		},
		{
			name:         "negotiated, speculative SCRAM-SHA-256 accepted",
			cred:         Credential{Username: "both", Password: "pw"},
			wantCommands: []string{"saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
		{
			name:         "negotiated, both listed, no speculative reply: SCRAM-SHA-256",
			cred:         Credential{Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
		{
			name: "negotiated, only SCRAM-SHA-1 listed: SCRAM-SHA-1",
			cred: Credential{Username: "sha1", Password: "pw"},
			// The speculative SCRAM-SHA-256 saslStart fails on the server
			// for this user, so the hello reply has no speculative answer.
			wantCommands: []string{"saslStart", "saslContinue"},
			wantMech:     MechanismSCRAMSHA1,
		},
		{
			name:         "negotiated, saslSupportedMechs absent: SCRAM-SHA-1",
			cred:         Credential{Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.speculative = false; s.noSupportedMech = true },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantMech:     MechanismSCRAMSHA1,
		},
		{
			name:         "negotiated, SCRAM-SHA-256 only user",
			cred:         Credential{Username: "sha256", Password: "pw"},
			setup:        func(s *fakeServer) { s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
		{
			name:         "negotiated, unknown user fails as an authentication error",
			cred:         Credential{Username: "nobody", Password: "pw"},
			wantCommands: []string{"saslStart"},
			wantErr:      `auth: SCRAM-SHA-1 for user "nobody" on db "admin": the server rejected saslStart: server error 18`,
		},
		{
			name:         "explicit SCRAM-SHA-256 for a SCRAM-SHA-1 only user",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "sha1", Password: "pw"},
			wantCommands: []string{"saslStart"},
			wantErr:      "server error 18",
		},
		{
			name:         "explicit SCRAM-SHA-1 for a SCRAM-SHA-256 only user",
			cred:         Credential{Mechanism: MechanismSCRAMSHA1, Username: "sha256", Password: "pw"},
			wantCommands: []string{"saslStart"},
			wantErr:      "server error 18",
		},
		{
			name:         "wrong password",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "wrong"},
			setup:        func(s *fakeServer) { s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantErr:      `auth: SCRAM-SHA-256 for user "both" on db "admin": the server rejected saslContinue: server error 18: Authentication failed.`,
		},
		{
			name:         "wrong password after a speculative start",
			cred:         Credential{Username: "both", Password: "wrong"},
			wantCommands: []string{"saslContinue"},
			wantErr:      "the server rejected saslContinue: server error 18",
		},
		{
			name:         "wrong server signature",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.badSignature = true },
			wantCommands: []string{"saslContinue"},
			wantErr:      "server signature does not match",
		},
		{
			name:         "wrong server signature, SCRAM-SHA-1, old server",
			cred:         Credential{Mechanism: MechanismSCRAMSHA1, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.badSignature = true; s.ignoreSkipEmpty = true; s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantErr:      "server signature does not match",
		},
		{
			name:         "server nonce does not extend ours",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.badNonce = true; s.speculative = false },
			wantCommands: []string{"saslStart"},
			wantErr:      "server nonce does not extend the client nonce",
		},
		{
			name:     "server nonce does not extend ours, speculative",
			cred:     Credential{Username: "both", Password: "pw"},
			setup:    func(s *fakeServer) { s.badNonce = true },
			wantErr:  "server nonce does not extend the client nonce",
			wantMech: MechanismSCRAMSHA256,
		},
		{
			name:         "iteration count below 4096",
			cred:         Credential{Mechanism: MechanismSCRAMSHA1, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.iterations = 4095; s.speculative = false },
			wantCommands: []string{"saslStart"},
			wantErr:      "iteration count 4095 is below the minimum of 4096",
		},
		{
			name:         "iteration count 4096 is enough",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"},
			setup:        func(s *fakeServer) { s.iterations = 4096; s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			// The server derived its keys with its own count, so the proof
			// fails; what matters is that the client went on to send it.
			wantErr: "server error 18",
		},
		{
			name:         "user in another database",
			cred:         Credential{Mechanism: MechanismSCRAMSHA256, Source: "app", Username: "appuser", Password: "pw"},
			wantCommands: []string{"saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
		{
			name:         "username with = and ,",
			cred:         Credential{Username: "a=b,c", Password: "pw"},
			setup:        func(s *fakeServer) { s.speculative = false },
			wantCommands: []string{"saslStart", "saslContinue"},
			wantMech:     MechanismSCRAMSHA256,
		},
	}
	// Users are derived once; each case gets a fresh server sharing them.
	base := newFakeServer(t)
	base.addUser("admin", "both", "pw", "pw", MechanismSCRAMSHA1, MechanismSCRAMSHA256)
	base.addUser("admin", "sha1", "pw", "pw", MechanismSCRAMSHA1)
	base.addUser("admin", "sha256", "pw", "pw", MechanismSCRAMSHA256)
	base.addUser("admin", "a=b,c", "pw", "pw", MechanismSCRAMSHA256)
	base.addUser("app", "appuser", "pw", "pw", MechanismSCRAMSHA256)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.users = base.users
			if tc.setup != nil {
				tc.setup(srv)
			}
			cfg, _ := testConfig("")
			conv, serr := start(&tc.cred, cfg)
			if serr != nil {
				t.Fatal(serr)
			}
			err := handshake(t, conv, srv)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("handshake: %v", err)
				}
			} else {
				var ae *Error
				if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("handshake: %v; want an *Error containing %q", err, tc.wantErr)
				}
				if ae.Username != tc.cred.Username || ae.Source != tc.cred.source(ae.Mechanism) {
					t.Errorf("error names user %q on %q", ae.Username, ae.Source)
				}
				if tc.wantMech != "" && ae.Mechanism != tc.wantMech {
					t.Errorf("error names mechanism %q, want %q", ae.Mechanism, tc.wantMech)
				}
				var se *serverError
				if strings.Contains(tc.wantErr, "server error") && !errors.As(err, &se) {
					t.Errorf("the server's error is not reachable with errors.As: %#v", err)
				}
			}
			if tc.wantCommands != nil && !slices.Equal(srv.commands, tc.wantCommands) {
				t.Errorf("commands = %q, want %q", srv.commands, tc.wantCommands)
			}
			if tc.wantErr == "" && tc.wantMech != "" && len(srv.proofs) > 0 {
				// The proof's length tells the hash the client used.
				want := 32
				if tc.wantMech == MechanismSCRAMSHA1 {
					want = 20
				}
				if got := len(srv.proofs[len(srv.proofs)-1]); got != want {
					t.Errorf("proof of %d bytes; want %s (%d)", got, tc.wantMech, want)
				}
			}
		})
	}
}

// TestHelloFields checks what each credential adds to hello.
func TestHelloFields(t *testing.T) {
	const nonce = "fyko+d2lbbFgONRv9qkxdawL"
	tests := []struct {
		name      string
		cred      Credential
		wantMechs string // saslSupportedMechs, "" for absent
		wantSpec  bson.D // speculativeAuthenticate, nil for absent
	}{
		{
			name:      "negotiated",
			cred:      Credential{Username: "user", Password: "pencil"},
			wantMechs: "admin.user",
			wantSpec:  scramSpeculative(MechanismSCRAMSHA256, "n,,n=user,r="+nonce, "admin"),
		},
		{
			name:      "negotiated, username not prepared",
			cred:      Credential{Username: "\u2168", Password: "pencil", Source: "db"},
			wantMechs: "db.\u2168",
			wantSpec:  scramSpeculative(MechanismSCRAMSHA256, "n,,n=\u2168,r="+nonce, "db"),
		},
		{
			name:      "negotiated, password SASLprep rejects: no speculation",
			cred:      Credential{Username: "user", Password: "bell\u0007"},
			wantMechs: "admin.user",
		},
		{
			name:     "SCRAM-SHA-1",
			cred:     Credential{Mechanism: MechanismSCRAMSHA1, Username: "user", Password: "pencil", Source: "src"},
			wantSpec: scramSpeculative(MechanismSCRAMSHA1, "n,,n=user,r="+nonce, "src"),
		},
		{
			name:     "SCRAM-SHA-256",
			cred:     Credential{Mechanism: MechanismSCRAMSHA256, Username: "user", Password: "pencil"},
			wantSpec: scramSpeculative(MechanismSCRAMSHA256, "n,,n=user,r="+nonce, "admin"),
		},
		{
			name: "PLAIN",
			cred: Credential{Mechanism: MechanismPLAIN, Username: "user", Password: "pencil"},
		},
		{
			name:     "MONGODB-X509 with username",
			cred:     Credential{Mechanism: MechanismX509, Username: "CN=client,O=MongoDB"},
			wantSpec: bson.D{{Key: "authenticate", Value: int32(1)}, {Key: "mechanism", Value: "MONGODB-X509"}, {Key: "user", Value: "CN=client,O=MongoDB"}},
		},
		{
			name:     "MONGODB-X509 without username",
			cred:     Credential{Mechanism: MechanismX509},
			wantSpec: bson.D{{Key: "authenticate", Value: int32(1)}, {Key: "mechanism", Value: "MONGODB-X509"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := testConfig(nonce)
			conv, err := start(&tc.cred, cfg)
			if err != nil {
				t.Fatal(err)
			}
			hello := helloFor(t, conv)
			mechs, hasMechs := hello.Lookup("saslSupportedMechs").StringValueOK()
			if hasMechs != (tc.wantMechs != "") || mechs != tc.wantMechs {
				t.Errorf("saslSupportedMechs = %q (present %v), want %q", mechs, hasMechs, tc.wantMechs)
			}
			spec, hasSpec := hello.Lookup("speculativeAuthenticate").DocumentOK()
			if tc.wantSpec == nil {
				if hasSpec {
					t.Errorf("speculativeAuthenticate = %v, want none", spec)
				}
				return
			}
			want, merr := bson.Marshal(tc.wantSpec)
			if merr != nil {
				t.Fatal(merr)
			}
			if !bytes.Equal(spec, want) {
				t.Errorf("speculativeAuthenticate =\n%v\nwant\n%v", spec, bson.Raw(want))
			}
		})
	}
}

func scramSpeculative(mech, payload, db string) bson.D {
	return bson.D{
		{Key: "saslStart", Value: int32(1)},
		{Key: "mechanism", Value: mech},
		{Key: "payload", Value: bson.Binary{Data: []byte(payload)}},
		{Key: "autoAuthorize", Value: int32(1)},
		{Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}},
		{Key: "db", Value: db},
	}
}

// scriptStep is one command a scriptedRunner expects and its answer.
type scriptStep struct {
	db    string
	cmd   bson.D // the exact command expected
	reply bson.D
	err   error
}

// scriptedRunner checks each command byte for byte against a script.
type scriptedRunner struct {
	t     *testing.T
	steps []scriptStep
	n     int
}

func (r *scriptedRunner) RunCommand(_ context.Context, db string, cmd bson.Raw) (bson.Raw, error) {
	r.t.Helper()
	if r.n >= len(r.steps) {
		r.t.Fatalf("unexpected command %v", cmd)
	}
	st := r.steps[r.n]
	r.n++
	want, err := bson.Marshal(st.cmd)
	if err != nil {
		r.t.Fatal(err)
	}
	if db != st.db || !bytes.Equal(cmd, want) {
		r.t.Fatalf("command %d on %q =\n%v\nwant on %q\n%v", r.n, db, cmd, st.db, bson.Raw(want))
	}
	if st.err != nil {
		return nil, st.err
	}
	reply, err := bson.Marshal(st.reply)
	if err != nil {
		r.t.Fatal(err)
	}
	return reply, nil
}

func (r *scriptedRunner) done() {
	r.t.Helper()
	if r.n != len(r.steps) {
		r.t.Fatalf("%d of %d scripted commands sent", r.n, len(r.steps))
	}
}

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAuthSpecWireConversations replays the auth spec's MongoDB
// conversations: the payloads are the spec's BinData, byte for byte.
func TestAuthSpecWireConversations(t *testing.T) {
	saslStart := func(mech, payload string) bson.D {
		return bson.D{
			{Key: "saslStart", Value: int32(1)},
			{Key: "mechanism", Value: mech},
			{Key: "payload", Value: bson.Binary{Data: b64(t, payload)}},
			{Key: "autoAuthorize", Value: int32(1)},
			{Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}},
		}
	}
	cont := func(payload string) bson.D {
		return bson.D{
			{Key: "saslContinue", Value: int32(1)},
			{Key: "conversationId", Value: int32(1)},
			{Key: "payload", Value: bson.Binary{Data: b64(t, payload)}},
		}
	}
	reply := func(done bool, payload string) bson.D {
		return bson.D{
			{Key: "conversationId", Value: int32(1)},
			{Key: "payload", Value: bson.Binary{Data: b64(t, payload)}},
			{Key: "done", Value: done},
			{Key: "ok", Value: 1.0},
		}
	}
	tests := []struct {
		name, mech, nonce string
		steps             []scriptStep
	}{
		{
			name: "SCRAM-SHA-1", mech: MechanismSCRAMSHA1, nonce: "fyko+d2lbbFgONRv9qkxdawL",
			steps: []scriptStep{
				{db: "admin", cmd: saslStart(MechanismSCRAMSHA1, "biwsbj11c2VyLHI9ZnlrbytkMmxiYkZnT05Sdjlxa3hkYXdM"),
					reply: reply(false, "cj1meWtvK2QybGJiRmdPTlJ2OXFreGRhd0xIbytWZ2s3cXZVT0tVd3VXTElXZzRsLzlTcmFHTUhFRSxzPXJROVpZM01udEJldVAzRTFURFZDNHc9PSxpPTEwMDAw")},
				{db: "admin", cmd: cont("Yz1iaXdzLHI9ZnlrbytkMmxiYkZnT05Sdjlxa3hkYXdMSG8rVmdrN3F2VU9LVXd1V0xJV2c0bC85U3JhR01IRUUscD1NQzJUOEJ2Ym1XUmNrRHc4b1dsNUlWZ2h3Q1k9"),
					reply: reply(true, "dj1VTVdlSTI1SkQxeU5ZWlJNcFo0Vkh2aFo5ZTA9")},
			},
		},
		{
			name: "SCRAM-SHA-1, the longer conversation", mech: MechanismSCRAMSHA1, nonce: "fyko+d2lbbFgONRv9qkxdawL",
			steps: []scriptStep{
				{db: "admin", cmd: saslStart(MechanismSCRAMSHA1, "biwsbj11c2VyLHI9ZnlrbytkMmxiYkZnT05Sdjlxa3hkYXdM"),
					reply: reply(false, "cj1meWtvK2QybGJiRmdPTlJ2OXFreGRhd0xIbytWZ2s3cXZVT0tVd3VXTElXZzRsLzlTcmFHTUhFRSxzPXJROVpZM01udEJldVAzRTFURFZDNHc9PSxpPTEwMDAw")},
				{db: "admin", cmd: cont("Yz1iaXdzLHI9ZnlrbytkMmxiYkZnT05Sdjlxa3hkYXdMSG8rVmdrN3F2VU9LVXd1V0xJV2c0bC85U3JhR01IRUUscD1NQzJUOEJ2Ym1XUmNrRHc4b1dsNUlWZ2h3Q1k9"),
					reply: reply(false, "dj1VTVdlSTI1SkQxeU5ZWlJNcFo0Vkh2aFo5ZTA9")},
				{db: "admin", cmd: cont(""), reply: reply(true, "")},
			},
		},
		{
			name: "SCRAM-SHA-256", mech: MechanismSCRAMSHA256, nonce: "rOprNGfwEbeRWgbNEkqO",
			steps: []scriptStep{
				{db: "admin", cmd: saslStart(MechanismSCRAMSHA256, "biwsbj11c2VyLHI9ck9wck5HZndFYmVSV2diTkVrcU8="),
					reply: reply(false, "cj1yT3ByTkdmd0ViZVJXZ2JORWtxTyVodllEcFdVYTJSYVRDQWZ1eEZJbGopaE5sRiRrMCxzPVcyMlphSjBTTlk3c29Fc1VFamI2Z1E9PSxpPTQwOTY=")},
				{db: "admin", cmd: cont("Yz1iaXdzLHI9ck9wck5HZndFYmVSV2diTkVrcU8laHZZRHBXVWEyUmFUQ0FmdXhGSWxqKWhObEYkazAscD1kSHpiWmFwV0lrNGpVaE4rVXRlOXl0YWc5empmTUhnc3FtbWl6N0FuZFZRPQ=="),
					reply: reply(true, "dj02cnJpVFJCaTIzV3BSUi93dHVwK21NaFVaVW4vZEI1bkxUSlJzamw5NUc0PQ==")},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := testConfig(tc.nonce)
			conv, err := start(&Credential{Mechanism: tc.mech, Username: "user", Password: "pencil"}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := &scriptedRunner{t: t, steps: tc.steps}
			if err := conv.Authenticate(context.Background(), r, nil); err != nil {
				t.Fatal(err)
			}
			r.done()
		})
	}
}

func TestPLAIN(t *testing.T) {
	plainStart := func(payload string) bson.D {
		return bson.D{
			{Key: "saslStart", Value: int32(1)},
			{Key: "mechanism", Value: "PLAIN"},
			{Key: "payload", Value: bson.Binary{Data: []byte(payload)}},
			{Key: "autoAuthorize", Value: int32(1)},
			{Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}},
		}
	}
	okReply := bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: bson.Binary{}}, {Key: "done", Value: true}, {Key: "ok", Value: 1.0}}
	tests := []struct {
		name    string
		cred    Credential
		steps   []scriptStep
		wantErr string
	}{
		{
			name:  "spec example, default source",
			cred:  Credential{Mechanism: MechanismPLAIN, Username: "user", Password: "pencil"},
			steps: []scriptStep{{db: "$external", cmd: plainStart("\x00user\x00pencil"), reply: okReply}},
		},
		{
			// The spec's payload BinData(0, "AHVzZXIAcGVuY2ls") decoded.
			name:  "spec BinData, database source",
			cred:  Credential{Mechanism: "plain", Username: "user", Password: "pencil", Source: "ldap"},
			steps: []scriptStep{{db: "ldap", cmd: plainStart(string(b64(t, "AHVzZXIAcGVuY2ls"))), reply: okReply}},
		},
		{
			name:  "empty password given",
			cred:  Credential{Mechanism: MechanismPLAIN, Username: "user", PasswordSet: true},
			steps: []scriptStep{{db: "$external", cmd: plainStart("\x00user\x00"), reply: okReply}},
		},
		{
			name:    "rejected",
			cred:    Credential{Mechanism: MechanismPLAIN, Username: "user", Password: "pencil"},
			steps:   []scriptStep{{db: "$external", cmd: plainStart("\x00user\x00pencil"), err: errAuthFailed()}},
			wantErr: `auth: PLAIN for user "user" on db "$external": the server rejected saslStart: server error 18`,
		},
		{
			name: "server wants another round",
			cred: Credential{Mechanism: MechanismPLAIN, Username: "user", Password: "pencil"},
			steps: []scriptStep{
				{db: "$external", cmd: plainStart("\x00user\x00pencil"), reply: bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: bson.Binary{}}, {Key: "done", Value: false}, {Key: "ok", Value: 1.0}}},
				{db: "$external", cmd: bson.D{{Key: "saslContinue", Value: int32(1)}, {Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: bson.Binary{Data: []byte{}}}}, reply: okReply},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conv, err := Start(&tc.cred)
			if err != nil {
				t.Fatal(err)
			}
			bare, _ := bson.Marshal(bson.D{{Key: "hello", Value: int32(1)}})
			if hello := helloFor(t, conv); !bytes.Equal(hello, bare) {
				t.Errorf("PLAIN added hello fields: %v", hello)
			}
			r := &scriptedRunner{t: t, steps: tc.steps}
			err = conv.Authenticate(context.Background(), r, nil)
			r.done()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *serverError
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !errors.As(err, &se) {
				t.Fatalf("err = %v, want %q wrapping the server error", err, tc.wantErr)
			}
		})
	}
}

func TestX509(t *testing.T) {
	const subject = "C=IS,ST=Reykjavik,L=Reykjavik,O=MongoDB,OU=Drivers,CN=client"
	authCmd := func(user string) bson.D {
		d := bson.D{{Key: "authenticate", Value: int32(1)}, {Key: "mechanism", Value: "MONGODB-X509"}}
		if user != "" {
			d = append(d, bson.E{Key: "user", Value: user})
		}
		return d
	}
	okReply := bson.D{{Key: "dbname", Value: "$external"}, {Key: "user", Value: subject}, {Key: "ok", Value: 1.0}}
	specHello := func() bson.Raw {
		b, _ := bson.Marshal(bson.D{{Key: "ok", Value: 1.0}, {Key: "speculativeAuthenticate", Value: bson.D{{Key: "dbname", Value: "$external"}, {Key: "user", Value: subject}}}})
		return b
	}
	tests := []struct {
		name        string
		cred        Credential
		speculative bool // hello reply carries the speculative answer
		steps       []scriptStep
		wantErr     string
	}{
		{name: "without username", cred: Credential{Mechanism: MechanismX509},
			steps: []scriptStep{{db: "$external", cmd: authCmd(""), reply: okReply}}},
		{name: "with username", cred: Credential{Mechanism: MechanismX509, Username: subject},
			steps: []scriptStep{{db: "$external", cmd: authCmd(subject), reply: okReply}}},
		{name: "explicit $external", cred: Credential{Mechanism: MechanismX509, Source: "$external"},
			steps: []scriptStep{{db: "$external", cmd: authCmd(""), reply: okReply}}},
		{name: "speculative, without username", cred: Credential{Mechanism: MechanismX509}, speculative: true},
		{name: "speculative, with username", cred: Credential{Mechanism: MechanismX509, Username: subject}, speculative: true},
		{name: "rejected", cred: Credential{Mechanism: MechanismX509, Username: subject},
			steps:   []scriptStep{{db: "$external", cmd: authCmd(subject), err: errAuthFailed()}},
			wantErr: `auth: MONGODB-X509 for user "` + subject + `" on db "$external": the server rejected the authenticate command: server error 18`},
		{name: "ok:0 let through by the runner", cred: Credential{Mechanism: MechanismX509},
			steps:   []scriptStep{{db: "$external", cmd: authCmd(""), reply: bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "no"}}}},
			wantErr: `the server replied ok:0: "no"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conv, err := Start(&tc.cred)
			if err != nil {
				t.Fatal(err)
			}
			helloFor(t, conv)
			var hello bson.Raw
			if tc.speculative {
				hello = specHello()
			}
			r := &scriptedRunner{t: t, steps: tc.steps}
			err = conv.Authenticate(context.Background(), r, hello)
			r.done()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}

	// A speculative answer to a hello that carried no speculative command
	// is not taken as authentication.
	conv, _ := Start(&Credential{Mechanism: MechanismX509})
	r := &scriptedRunner{t: t, steps: []scriptStep{{db: "$external", cmd: authCmd(""), reply: okReply}}}
	if err := conv.Authenticate(context.Background(), r, specHello()); err != nil {
		t.Fatal(err)
	}
	r.done()
}

// TestSASLReplyErrors feeds malformed replies to the SASL loop.
func TestSASLReplyErrors(t *testing.T) {
	const nonce = "rOprNGfwEbeRWgbNEkqO"
	serverFirst := []byte("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
	verifier := []byte("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
	doc := func(d bson.D) bson.Raw { b, _ := bson.Marshal(d); return b }
	sasl := func(done bool, payload []byte) bson.Raw {
		return doc(bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: done}, {Key: "payload", Value: bson.Binary{Data: payload}}, {Key: "ok", Value: 1.0}})
	}
	tests := []struct {
		name    string
		replies []bson.Raw
		wantErr string
	}{
		{"done with the server-first message", []bson.Raw{sasl(true, serverFirst)}, "ended the conversation before proving"},
		{"done without a server-final message", []bson.Raw{sasl(false, serverFirst), sasl(true, nil)}, "no server signature (v=)"},
		{"never done", []bson.Raw{sasl(false, serverFirst), sasl(false, verifier), sasl(false, nil)}, "did not end the conversation"},
		{"no conversationId", []bson.Raw{doc(bson.D{{Key: "done", Value: false}, {Key: "payload", Value: bson.Binary{}}})}, "no conversationId"},
		{"string conversationId", []bson.Raw{doc(bson.D{{Key: "conversationId", Value: "1"}, {Key: "payload", Value: bson.Binary{}}})}, "conversationId is string"},
		{"no payload", []bson.Raw{doc(bson.D{{Key: "conversationId", Value: int32(1)}})}, "no payload"},
		{"string payload", []bson.Raw{doc(bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: string(serverFirst)}})}, "payload is string, want binary"},
		{"int done", []bson.Raw{doc(bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: bson.Binary{Data: serverFirst}}, {Key: "done", Value: int32(1)}})}, "done is 32-bit integer, want a boolean"},
		{"ok:0", []bson.Raw{doc(bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "bad"}})}, `ok:0: "bad"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := testConfig(nonce)
			conv, err := start(&Credential{Mechanism: MechanismSCRAMSHA256, Username: "user", Password: "pencil"}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := &replayRunner{replies: tc.replies}
			err2 := conv.Authenticate(context.Background(), r, nil)
			var ae *Error
			if err2 == nil || !errors.As(err2, &ae) || !strings.Contains(err2.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want an *Error with %q", err2, tc.wantErr)
			}
		})
	}
}

// replayRunner answers commands with canned replies, then with an error.
type replayRunner struct {
	replies []bson.Raw
	n       int
}

func (r *replayRunner) RunCommand(context.Context, string, bson.Raw) (bson.Raw, error) {
	if r.n >= len(r.replies) {
		return nil, errors.New("no more replies")
	}
	r.n++
	return r.replies[r.n-1], nil
}

func TestSpeculativeReplyNotADocument(t *testing.T) {
	cfg, _ := testConfig("")
	conv, _ := start(&Credential{Username: "u", Password: "p"}, cfg)
	helloFor(t, conv)
	hello, _ := bson.Marshal(bson.D{{Key: "ok", Value: 1.0}, {Key: "speculativeAuthenticate", Value: "x"}})
	err := conv.Authenticate(context.Background(), &replayRunner{}, hello)
	if err == nil || !strings.Contains(err.Error(), "speculativeAuthenticate is string, want a document") {
		t.Fatalf("err = %v", err)
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	conv, _ := Start(&Credential{Username: "u", Password: "p"})
	err := conv.Authenticate(ctx, &replayRunner{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestKeyCache checks that a second conversation with the same password,
// salt and iteration count skips PBKDF2, and that the cache stays bounded.
func TestKeyCache(t *testing.T) {
	srv := newFakeServer(t)
	srv.speculative = false
	srv.addUser("admin", "both", "pw", "pw", MechanismSCRAMSHA1, MechanismSCRAMSHA256)
	srv.addUser("admin", "other", "pw2", "pw2", MechanismSCRAMSHA256)
	cfg, derivations := testConfig("")
	run := func(c Credential) {
		t.Helper()
		conv, err := start(&c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := handshake(t, conv, srv); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		cred Credential
		want int64 // PBKDF2 runs so far
	}{
		{Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"}, 1},
		{Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"}, 1},
		{Credential{Username: "both", Password: "pw"}, 1}, // negotiated to the same keys
		{Credential{Mechanism: MechanismSCRAMSHA1, Username: "both", Password: "pw"}, 2},
		{Credential{Mechanism: MechanismSCRAMSHA1, Username: "both", Password: "pw"}, 2},
		{Credential{Mechanism: MechanismSCRAMSHA256, Username: "other", Password: "pw2"}, 3},
		{Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "pw"}, 3},
	}
	for i, st := range steps {
		run(st.cred)
		if got := derivations.Load(); got != st.want {
			t.Fatalf("step %d: %d PBKDF2 runs, want %d", i, got, st.want)
		}
	}

	// A wrong password must not hit the right password's entry.
	conv, _ := start(&Credential{Mechanism: MechanismSCRAMSHA256, Username: "both", Password: "nope"}, cfg)
	if err := handshake(t, conv, srv); err == nil {
		t.Fatal("wrong password accepted")
	}
	if got := derivations.Load(); got != 4 {
		t.Fatalf("%d PBKDF2 runs after a wrong password, want 4", got)
	}

	small := newKeyCache(3)
	for i := 0; i < 10; i++ {
		small.put(small.id("m", "pw", []byte{byte(i)}, 4096), []byte{1}, []byte{2})
		if n := small.len(); n > 3 {
			t.Fatalf("cache holds %d entries, limit 3", n)
		}
	}
	if _, _, ok := small.get(small.id("m", "pw", []byte{9}, 4096)); !ok {
		t.Fatal("newest entry evicted")
	}
	if _, _, ok := small.get(small.id("m", "pw", []byte{0}, 4096)); ok {
		t.Fatal("oldest entry kept")
	}
	// Entry ids keep the inputs apart.
	if small.id("ab", "c", nil, 1) == small.id("a", "bc", nil, 1) || small.id("m", "p", nil, 4096) == small.id("m", "p", nil, 4097) {
		t.Fatal("entry ids collide")
	}
	// get hands out copies.
	ck, _, _ := small.get(small.id("m", "pw", []byte{9}, 4096))
	ck[0] = 99
	if ck2, _, _ := small.get(small.id("m", "pw", []byte{9}, 4096)); ck2[0] != 1 {
		t.Fatal("cache entry changed through a returned slice")
	}
}

func TestDeriveFailure(t *testing.T) {
	cfg, _ := testConfig("rOprNGfwEbeRWgbNEkqO")
	cfg.derive = func(func() hash.Hash, string, []byte, int) ([]byte, error) {
		return nil, errors.New("derivation refused")
	}
	c := newSCRAMClient(MechanismSCRAMSHA256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO", cfg)
	c.start()
	_, err := c.next([]byte("r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"))
	if err == nil || !strings.Contains(err.Error(), "deriving the SCRAM salted password failed") {
		t.Fatalf("err = %v", err)
	}
}
