package driver

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest"
)

// handshakeFields are client.driver.name, client.driver.version and
// client.platform without the driver's own first part (the README's
// "strip out the default driver info"): "" when nothing was appended.
type handshakeFields struct{ name, version, platform string }

// TestHandshakeProseMetadataUpdate runs the mongodb-handshake README's
// "Client Metadata Update Prose Tests" 1 to 8 against mongotest. Each case
// creates a client with maxIdleTimeMS=1ms (and the initial DriverInfo, if
// any), then runs its steps: append the step's DriverInfos, ping, and read
// the client document the ping's connection sent in its handshake (the
// ping must run on a connection opened in that step: the 5ms wait after
// each step idles the previous one out), then wait 5ms. The last step's
// document must carry want (beyond the driver's own values) and match the
// document of step ref: byte for byte when same, else in every field but
// client.driver.name, client.driver.version and client.platform.
func TestHandshakeProseMetadataUpdate(t *testing.T) {
	library := DriverInfo{Name: "library", Version: "1.2", Platform: "Library Platform"}
	type tcase struct {
		name    string
		initial *DriverInfo
		steps   [][]DriverInfo
		ref     int
		same    bool
		want    handshakeFields
	}
	var cases []tcase
	// Tests 1 and 2: library given at creation (Test 1) or appended after
	// it (Test 2); then framework with some fields unset is appended to it.
	updates := []struct {
		in   DriverInfo
		want handshakeFields
	}{
		{DriverInfo{"framework", "2.0", "Framework Platform"}, handshakeFields{"library|framework", "1.2|2.0", "Library Platform|Framework Platform"}},
		{DriverInfo{"framework", "2.0", ""}, handshakeFields{"library|framework", "1.2|2.0", "Library Platform"}},
		{DriverInfo{"framework", "", "Framework Platform"}, handshakeFields{"library|framework", "1.2", "Library Platform|Framework Platform"}},
		{DriverInfo{"framework", "", ""}, handshakeFields{"library|framework", "1.2", "Library Platform"}},
	}
	for i, u := range updates {
		cases = append(cases,
			tcase{name: "Test 1 case " + strconv.Itoa(i+1), initial: &library, steps: [][]DriverInfo{nil, {u.in}}, want: u.want},
			tcase{name: "Test 2 case " + strconv.Itoa(i+1), steps: [][]DriverInfo{{library}, {u.in}}, want: u.want})
	}
	// Test 3: after library was appended, appending it again changes
	// nothing; a DriverInfo differing in any one field is appended whole.
	for i, in := range []DriverInfo{
		{"library", "1.2", "Library Platform"},
		{"framework", "1.2", "Library Platform"},
		{"library", "2.0", "Library Platform"},
		{"library", "1.2", "Framework Platform"},
		{"framework", "2.0", "Library Platform"},
		{"framework", "1.2", "Framework Platform"},
		{"library", "2.0", "Framework Platform"},
	} {
		c := tcase{name: "Test 3 case " + strconv.Itoa(i+1), steps: [][]DriverInfo{{library}, {in}}}
		if in == library {
			c.same, c.want = true, handshakeFields{"library", "1.2", "Library Platform"}
		} else {
			c.want = handshakeFields{"library|" + in.Name, "1.2|" + in.Version, "Library Platform|" + in.Platform}
		}
		cases = append(cases, c)
	}
	framework := DriverInfo{"framework", "2.0", "Framework Platform"}
	cases = append(cases,
		// Test 4: library appended again after framework is still a duplicate.
		tcase{name: "Test 4", steps: [][]DriverInfo{{library}, {framework}, {library}}, ref: 1, same: true,
			want: handshakeFields{"library|framework", "1.2|2.0", "Library Platform|Framework Platform"}},
		// Test 5: appending the creation-time DriverInfo changes nothing.
		tcase{name: "Test 5", initial: &library, steps: [][]DriverInfo{nil, {library}}, same: true,
			want: handshakeFields{"library", "1.2", "Library Platform"}},
		// Test 6: nor does it after a different DriverInfo came between.
		tcase{name: "Test 6", initial: &library, steps: [][]DriverInfo{nil, {{"framework", "1.2", "Library Platform"}}, {library}}, ref: 1, same: true,
			want: handshakeFields{"library|framework", "1.2|1.2", "Library Platform|Library Platform"}},
	)
	// Tests 7 and 8: "" is unset, so a DriverInfo with "" where the first
	// had null is a duplicate, of an appended one (Test 7) or of the
	// creation-time one (Test 8). Go has no null: both are "". Case 1 (an
	// unset name), which the README leaves optional, is run: our
	// DriverInfo.Name may be empty.
	for i, c := range []struct {
		first, dup DriverInfo
		want       handshakeFields
	}{
		{DriverInfo{"", "1.2", "Library Platform"}, DriverInfo{"", "1.2", "Library Platform"}, handshakeFields{"", "1.2", "Library Platform"}},
		{DriverInfo{"library", "", "Library Platform"}, DriverInfo{"library", "", "Library Platform"}, handshakeFields{"library", "", "Library Platform"}},
		{DriverInfo{"library", "1.2", ""}, DriverInfo{"library", "1.2", ""}, handshakeFields{"library", "1.2", ""}},
	} {
		first := c.first
		cases = append(cases,
			tcase{name: "Test 7 case " + strconv.Itoa(i+1), steps: [][]DriverInfo{{c.first}, {c.dup}}, same: true, want: c.want},
			tcase{name: "Test 8 case " + strconv.Itoa(i+1), initial: &first, steps: [][]DriverInfo{nil, {c.dup}}, same: true, want: c.want})
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{})
			c := connect(t, srv.URI()+"?maxIdleTimeMS=1", &ClientOptions{DriverInfo: tc.initial})
			ctx := ctxTimeout(t, 10*time.Second)
			docs := make([]bson.Raw, len(tc.steps))
			for i, infos := range tc.steps {
				for _, d := range infos {
					if err := c.AppendMetadata(d); err != nil {
						t.Fatalf("step %d: AppendMetadata(%+v): %v", i, d, err)
					}
				}
				docs[i] = pingClientDoc(t, srv, c, ctx)
				time.Sleep(5 * time.Millisecond)
			}
			final, ref := docs[len(docs)-1], docs[tc.ref]
			got := appendedFields(t, final)
			if got != tc.want {
				t.Errorf("appended metadata = %+v, want %+v\nclient: %s", got, tc.want, final)
			}
			if tc.same {
				if !bytes.Equal(final, ref) {
					t.Errorf("client document changed:\n got %s\nwant %s", final, ref)
				}
				return
			}
			if a, b := withoutAppended(t, final), withoutAppended(t, ref); !bytes.Equal(a, b) {
				t.Errorf("fields other than driver.name, driver.version and platform changed:\n got %s\nwant %s", a, b)
			}
		})
	}
}

// TestHandshakeProseBackpressure is prose Test 9: every handshake the
// client sends (the pool's connection and the monitor's, each hello or
// legacy hello that is not a monitor's awaited one), also after
// AppendMetadata, carries backpressure: "2" as a string.
func TestHandshakeProseBackpressure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		query  string
		append bool
	}{
		{name: "plain"},
		{name: "after AppendMetadata", append: true},
		{name: "Stable API", query: "?maxPoolSize=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{})
			o := &ClientOptions{}
			if tc.name == "Stable API" {
				o.ServerAPI = &ServerAPI{Version: ServerAPIVersion1}
			}
			c := connect(t, srv.URI()+tc.query, o)
			ctx := ctxTimeout(t, 10*time.Second)
			if tc.append {
				if err := c.AppendMetadata(DriverInfo{Name: "library"}); err != nil {
					t.Fatal(err)
				}
			}
			pingClientDoc(t, srv, c, ctx)
			n := 0
			for _, cmd := range srv.Commands() {
				if !isHandshake(cmd) {
					continue
				}
				n++
				v, err := cmd.Body.LookupErr("backpressure")
				if err != nil || v.Type != bson.TypeString || v.StringValue() != "2" {
					t.Errorf("handshake without backpressure \"2\": %s", cmd.Body)
				}
			}
			if n == 0 {
				t.Fatal("no handshake was logged")
			}
		})
	}
}

// isHandshake tells a connection's handshake from a monitor's awaited
// hello, which carries topologyVersion and no client document.
func isHandshake(cmd mongotest.Command) bool {
	if cmd.Name != "hello" && cmd.Name != "isMaster" && cmd.Name != "ismaster" {
		return false
	}
	_, err := cmd.Body.LookupErr("topologyVersion")
	return err != nil
}

// pingClientDoc pings and returns the client document the ping's
// connection sent in its handshake, failing unless that connection was
// opened for this ping (the previous one idled out).
func pingClientDoc(t *testing.T, srv *mongotest.Server, c *Client, ctx context.Context) bson.Raw {
	t.Helper()
	before := len(srv.Commands())
	if _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
		t.Fatalf("ping: %v", err)
	}
	cmds := srv.Commands()
	var conn int64 = -1
	for _, cmd := range cmds[before:] {
		if cmd.Name == "ping" {
			conn = cmd.ConnID
		}
	}
	if conn < 0 {
		t.Fatal("the ping was not logged")
	}
	for i, cmd := range cmds {
		if cmd.ConnID != conn || !isHandshake(cmd) {
			continue
		}
		if i < before {
			t.Fatal("the ping ran on a connection opened before it: maxIdleTimeMS did not close the idle one")
		}
		v, err := cmd.Body.LookupErr("client")
		if err != nil || v.Type != bson.TypeEmbeddedDocument {
			t.Fatalf("handshake without a client document: %s", cmd.Body)
		}
		if b, err := cmd.Body.LookupErr("backpressure"); err != nil || b.Type != bson.TypeString || b.StringValue() != "2" {
			t.Errorf("handshake without backpressure \"2\": %s", cmd.Body)
		}
		return v.Document()
	}
	t.Fatalf("no handshake on connection %d", conn)
	return nil
}

// appendedFields reads what wrapping libraries appended: each field with
// its first '|'-separated part, the driver's own, removed. The driver's
// own name must be mongoscope's.
func appendedFields(t *testing.T, client bson.Raw) handshakeFields {
	t.Helper()
	str := func(path ...string) string {
		v, err := client.LookupErr(path...)
		if err != nil || v.Type != bson.TypeString {
			t.Fatalf("client.%s missing or not a string: %s", strings.Join(path, "."), client)
		}
		return v.StringValue()
	}
	rest := func(s string) (string, string) {
		own, tail, _ := strings.Cut(s, "|")
		return own, tail
	}
	own, name := rest(str("driver", "name"))
	if own != "mongoscope" {
		t.Errorf("client.driver.name starts with %q, not the driver's own name", own)
	}
	_, version := rest(str("driver", "version"))
	_, platform := rest(str("platform"))
	return handshakeFields{name, version, platform}
}

// withoutAppended is client with driver.name, driver.version and platform
// cut to the driver's own values, for comparing the rest.
func withoutAppended(t *testing.T, client bson.Raw) bson.Raw {
	t.Helper()
	var d bson.D
	if err := bson.Unmarshal(client, &d); err != nil {
		t.Fatal(err)
	}
	for i := range d {
		switch d[i].Key {
		case "platform":
			s, _ := d[i].Value.(string)
			d[i].Value, _, _ = strings.Cut(s, "|")
		case "driver":
			drv, ok := d[i].Value.(bson.D)
			if !ok {
				t.Fatalf("client.driver is %T", d[i].Value)
			}
			for j := range drv {
				s, _ := drv[j].Value.(string)
				drv[j].Value, _, _ = strings.Cut(s, "|")
			}
		}
	}
	out, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
