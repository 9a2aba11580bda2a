package mongotest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

const secret = "pencil-Ⅸ-sEcReT" // not ASCII: SASLprep maps Ⅸ to IX

func authServer(t *testing.T) *Server {
	s := NewServer(t, Options{Auth: true})
	if err := s.AddUser("admin", "both", secret); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("app", "sha1,only=", secret, SCRAMSHA1); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("admin", "sha256", secret, SCRAMSHA256, SCRAMSHA256); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSCRAM(t *testing.T) {
	s := authServer(t)
	for _, tc := range []struct {
		db, user, mech string
		skipEmpty      bool
	}{
		{"admin", "both", SCRAMSHA256, true},
		{"admin", "both", SCRAMSHA1, true},
		{"admin", "both", SCRAMSHA256, false},
		{"app", "sha1,only=", SCRAMSHA1, false},
		{"admin", "sha256", SCRAMSHA256, true},
	} {
		t.Run(fmt.Sprintf("%s/%s/%v", tc.user, tc.mech, tc.skipEmpty), func(t *testing.T) {
			c := connect(t, s, clientOpts{})
			// Unauthorized until authenticated; the handshake commands work.
			_, err := c.run("admin", d("serverStatus", 1))
			if ce := asCmdError(t, err); ce.Code != 13 || ce.Message != "Command serverStatus requires authentication" {
				t.Error(ce)
			}
			for _, cmd := range []bson.D{d("ping", 1), d("buildInfo", 1), d("connectionStatus", 1), d("whatsmyuri", 1), d("endSessions", bson.A{})} {
				c.mustRun("admin", cmd)
			}
			if err := c.auth(tc.db, newSCRAMClient(tc.mech, tc.user, secret), tc.skipEmpty); err != nil {
				t.Fatal(err)
			}
			c.mustRun("admin", d("serverStatus", 1))
			st := c.mustRun("admin", d("connectionStatus", 1))
			if u, _ := st.LookupPath("authInfo.authenticatedUsers.0.user"); u.StringValue() != tc.user {
				t.Error(st)
			}
			if got := serverConn(t, s, c.id).Users(); len(got) != 1 || got[0] != (UserRef{DB: tc.db, User: tc.user}) {
				t.Errorf("Users %v", got)
			}
			c.mustRun(tc.db, d("logout", 1))
			if _, err := c.run("admin", d("serverStatus", 1)); asCmdError(t, err).Code != 13 {
				t.Error("authorized after logout")
			}
		})
	}
}

// SCRAM-SHA-256 passwords go through SASLprep on both sides, so an
// equivalent spelling authenticates; SCRAM-SHA-1 uses the raw digest.
func TestSCRAMSASLprep(t *testing.T) {
	s := authServer(t)
	c := connect(t, s, clientOpts{})
	if err := c.auth("admin", newSCRAMClient(SCRAMSHA256, "both", "pencil-IX-sEcReT"), true); err != nil {
		t.Error(err)
	}
	c = connect(t, s, clientOpts{})
	if err := c.auth("admin", newSCRAMClient(SCRAMSHA1, "both", "pencil-IX-sEcReT"), true); asCmdError(t, err).Code != 18 {
		t.Error(err)
	}
}

func TestSCRAMFailures(t *testing.T) {
	s := authServer(t)
	for _, tc := range []struct {
		name     string
		db, user string
		mech     string
		password string
		code     int32
	}{
		{"wrong password", "admin", "both", SCRAMSHA256, "nope", 18},
		{"wrong password sha1", "admin", "both", SCRAMSHA1, "nope", 18},
		{"unknown user", "admin", "ghost", SCRAMSHA256, secret, 18},
		{"wrong db", "app", "both", SCRAMSHA256, secret, 18},
		{"mechanism not registered", "app", "sha1,only=", SCRAMSHA256, secret, 334},
		{"unknown mechanism", "admin", "both", "PLAIN", secret, 334},
		// mongod accepts $external and answers PLAIN there (not enabled
		// by default) with MechanismUnavailable too, not
		// InvalidNamespace.
		{"PLAIN on $external", "$external", "both", "PLAIN", secret, 334},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, s, clientOpts{})
			err := c.auth(tc.db, newSCRAMClient(tc.mech, tc.user, tc.password), true)
			ce := asCmdError(t, err)
			if ce.Code != tc.code {
				t.Errorf("%v, want code %d", ce, tc.code)
			}
			if tc.code == 18 && ce.Message != "Authentication failed." {
				t.Error(ce.Message)
			}
			if _, err := c.run("admin", d("serverStatus", 1)); asCmdError(t, err).Code != 13 {
				t.Error("authorized after a failure")
			}
		})
	}
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		cmd  bson.D
		code int32
	}{
		{d("saslContinue", 1, "conversationId", 1, "payload", bson.Binary{}), 17},
		{d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: []byte("p=x,,n=a,r=b")}), 2},
		{d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: []byte("n,a=z,n=both,r=b")}), 2},
		{d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: []byte("n,,n=bo=th,r=b")}), 2},
		{d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: []byte("n,,r=b")}), 2},
		{d("saslStart", 1, "mechanism", SCRAMSHA256), 2},
		{d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", 5), 14},
	} {
		if _, err := c.run("admin", tc.cmd); asCmdError(t, err).Code != tc.code {
			t.Errorf("%v: %v, want %d", tc.cmd, err, tc.code)
		}
	}
	// A tampered final message, a wrong conversation id.
	sc := newSCRAMClient(SCRAMSHA256, "both", secret)
	r := c.mustRun("admin", d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: sc.first()}))
	final, _ := sc.final(r.Lookup("payload").Binary().Data)
	if _, err := c.run("admin", d("saslContinue", 1, "conversationId", 2, "payload", bson.Binary{Data: final})); asCmdError(t, err).Code != 17 {
		t.Error(err)
	}
	r = c.mustRun("admin", d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: sc.first()}))
	final, _ = sc.final(r.Lookup("payload").Binary().Data)
	bad := bytes.Replace(final, []byte("c=biws"), []byte("c=eSws"), 1)
	if _, err := c.run("admin", d("saslContinue", 1, "conversationId", 1, "payload", bson.Binary{Data: bad})); asCmdError(t, err).Code != 18 {
		t.Error(err)
	}
}

func TestSpeculativeAuthAndMechs(t *testing.T) {
	s := authServer(t)
	for _, mech := range []string{SCRAMSHA256, SCRAMSHA1} {
		t.Run(mech, func(t *testing.T) {
			sc := newSCRAMClient(mech, "both", secret)
			spec := d("saslStart", 1, "mechanism", mech, "payload", bson.Binary{Data: sc.first()}, "db", "admin", "options", d("skipEmptyExchange", true))
			c := connect(t, s, clientOpts{extra: d("saslSupportedMechs", "admin.both", "speculativeAuthenticate", spec)})
			if got := strings.Join(strs(c.hello, "saslSupportedMechs"), ","); got != "SCRAM-SHA-1,SCRAM-SHA-256" {
				t.Errorf("saslSupportedMechs %q", got)
			}
			sa, ok := c.hello.Lookup("speculativeAuthenticate").DocumentOK()
			if !ok {
				t.Fatalf("no speculativeAuthenticate in %v", c.hello)
			}
			if err := c.continueAuth("admin", sc, sa); err != nil {
				t.Fatal(err)
			}
			c.mustRun("admin", d("serverStatus", 1))
			// No saslStart went over the wire.
			for _, cmd := range s.CommandsOn(c.id) {
				if cmd.Name == "saslStart" {
					t.Error("saslStart sent")
				}
			}
		})
	}
	// A failed speculative attempt only leaves the field out; unknown
	// users get no saslSupportedMechs.
	sc := newSCRAMClient(SCRAMSHA256, "ghost", secret)
	c := connect(t, s, clientOpts{extra: d("saslSupportedMechs", "admin.ghost",
		"speculativeAuthenticate", d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: sc.first()}, "db", "admin"))})
	for _, f := range []string{"speculativeAuthenticate", "saslSupportedMechs"} {
		if c.hello.Lookup(f).Type != 0 {
			t.Errorf("%s present", f)
		}
	}
	c = connect(t, s, clientOpts{extra: d("saslSupportedMechs", "admin.sha256")})
	if got := strings.Join(strs(c.hello, "saslSupportedMechs"), ","); got != "SCRAM-SHA-256" {
		t.Errorf("saslSupportedMechs %q", got)
	}
	// An arbiter takes no authentication.
	arb := NewServer(t, Options{Topology: Topology{Role: RoleArbiter, SetName: "rs"}})
	arb.AddUser("admin", "both", secret)
	c = connect(t, arb, clientOpts{extra: d("saslSupportedMechs", "admin.both")})
	if c.hello.Lookup("saslSupportedMechs").Type != 0 {
		t.Error("arbiter lists mechanisms")
	}
}

// No password, proof, salted password or signature reaches the command
// log, the connection errors or an error message.
func TestCredentialsNeverLogged(t *testing.T) {
	s := authServer(t)
	sc := newSCRAMClient(SCRAMSHA256, "both", secret)
	spec := d("saslStart", 1, "mechanism", SCRAMSHA256, "payload", bson.Binary{Data: sc.first()}, "db", "admin")
	c := connect(t, s, clientOpts{extra: d("speculativeAuthenticate", spec)})
	sa, _ := c.hello.Lookup("speculativeAuthenticate").DocumentOK()
	if err := c.continueAuth("admin", sc, sa); err != nil {
		t.Fatal(err)
	}
	c2 := connect(t, s, clientOpts{})
	wrong := newSCRAMClient(SCRAMSHA1, "both", secret+"x")
	authErr := c2.auth("admin", wrong, false)
	if authErr == nil {
		t.Fatal("wrong password accepted")
	}
	addErr := s.AddUser("admin", "bad", "a\u0007b", SCRAMSHA256) // prohibited by SASLprep
	if addErr == nil {
		t.Fatal("SASLprep-invalid password accepted")
	}
	var all strings.Builder
	for _, cmd := range s.Commands() {
		fmt.Fprintf(&all, "%s %s %x\n", cmd.Name, cmd.Body, []byte(cmd.Body))
		if (cmd.Name == "saslContinue" || cmd.Name == "saslStart" || cmd.Name == "hello") && cmd.Body.Lookup("payload").Type != 0 {
			t.Errorf("%s logged with its payload", cmd.Name)
		}
		if cmd.Name == "hello" && cmd.ConnID == c.id && len(cmd.Body) != 5 {
			t.Errorf("hello with speculativeAuthenticate logged: %s", cmd.Body)
		}
	}
	fmt.Fprintf(&all, "%v %v %v %s", s.ConnectionErrors(), authErr, addErr, addErr)
	for _, secretish := range []string{secret, "a\u0007b", string(sc.serverSig), "p=", "v="} {
		if strings.Contains(all.String(), secretish) {
			t.Errorf("%q found in logs and errors", secretish)
		}
	}
	for _, u := range []string{"", "x"} {
		if err := s.AddUser("admin", u, secret, "MONGODB-X509"); err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("AddUser: %v", err)
		}
	}
}

// The legacy authenticate command (MONGODB-X509 only since 4.0) exists,
// so fail points and command monitoring see it, and fails as mongod
// without a client certificate does.
func TestAuthenticateCommand(t *testing.T) {
	s := NewServer(t, Options{Auth: true})
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		db   string
		cmd  bson.D
		code int32
	}{
		{"$external", d("authenticate", 1, "mechanism", "MONGODB-X509", "user", "CN=me"), 18},
		{"admin", d("authenticate", 1, "mechanism", "MONGODB-X509", "user", "CN=me"), 17},
		{"admin", d("authenticate", 1, "mechanism", "MONGODB-CR", "user", "me"), 334},
	} {
		if _, err := c.run(tc.db, tc.cmd); asCmdError(t, err).Code != tc.code {
			t.Errorf("%v on %s: %v, want %d", tc.cmd, tc.db, err, tc.code)
		}
	}
	for _, cmd := range s.Commands() {
		if cmd.Name == "authenticate" && len(cmd.Body) > 5 {
			t.Errorf("authenticate logged with its body %s; it is redacted", cmd.Body)
		}
	}
	// A fail point applies to it like to any command.
	if err := s.SetFailPoint(d("configureFailPoint", "failCommand", "mode", d("times", 1), "data", d("failCommands", bson.A{"authenticate"}, "errorCode", 91))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.run("$external", d("authenticate", 1, "mechanism", "MONGODB-X509")); asCmdError(t, err).Code != 91 {
		t.Errorf("fail point: %v, want 91", err)
	}
}
