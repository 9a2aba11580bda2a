package driver

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestMaxStalenessValidation: maxStalenessSeconds is a positive whole
// number of seconds, or -1 (nil or negative in code) for no maximum. Zero
// is refused with a typed error naming the option, wherever the read
// preference comes from (Max Staleness spec, API; Server Selection spec,
// maxStalenessSeconds), and so is any maxStalenessSeconds with mode
// primary. The deployment is a standalone, where a valid read preference is
// ignored, so only validation can make these fail.
func TestMaxStalenessValidation(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI(), nil)
	ping := bson.D{{Key: "ping", Value: 1}}
	tests := []struct {
		name    string
		opts    *RunCommandOptions
		wantErr bool
	}{
		{"zero", &RunCommandOptions{ReadPreference: "secondary", MaxStaleness: Ptr(time.Duration(0))}, true},
		{"zero with nearest", &RunCommandOptions{ReadPreference: "nearest", MaxStaleness: Ptr(time.Duration(0))}, true},
		{"zero with primary", &RunCommandOptions{ReadPreference: "primary", MaxStaleness: Ptr(time.Duration(0))}, true},
		{"positive with primary", &RunCommandOptions{ReadPreference: "primary", MaxStaleness: Ptr(120 * time.Second)}, true},
		{"positive with the default mode", &RunCommandOptions{MaxStaleness: Ptr(120 * time.Second)}, true},
		{"not whole seconds", &RunCommandOptions{ReadPreference: "secondary", MaxStaleness: Ptr(90*time.Second + 500*time.Millisecond)}, true},
		{"no maximum (-1)", &RunCommandOptions{ReadPreference: "secondary", MaxStaleness: Ptr(-time.Second)}, false},
		{"no maximum (-1) with primary", &RunCommandOptions{ReadPreference: "primary", MaxStaleness: Ptr(-time.Second)}, false},
		{"no maximum (nil)", &RunCommandOptions{ReadPreference: "secondary"}, false},
		{"120s", &RunCommandOptions{ReadPreference: "secondary", MaxStaleness: Ptr(120 * time.Second)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxTimeout(t, 5*time.Second)
			_, err := c.RunCommand(ctx, "admin", ping, tc.opts)
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("RunCommand: %v", err)
				}
				return
			}
			// A mistake in the call's arguments: an *ArgumentError
			// naming the RunCommandOptions field.
			var ae *ArgumentError
			if !errors.As(err, &ae) || ae.Argument != "MaxStaleness" {
				t.Fatalf("RunCommand error %T %v, want an *ArgumentError on MaxStaleness", err, err)
			}
			if !strings.Contains(err.Error(), "MaxStaleness") {
				t.Errorf("message %q does not name MaxStaleness", err)
			}
		})
	}

	// The client's default read preference in code: zero is refused.
	o := &ClientOptions{URIOptions: URIOptions{ReadPreference: "secondary", MaxStaleness: Ptr(time.Duration(0))}}
	err := o.ApplyURI(s.URI())
	if err == nil {
		var c *Client
		if c, err = Connect(context.Background(), o); err == nil {
			c.Disconnect(context.Background())
		}
	}
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "maxStalenessSeconds" {
		t.Fatalf("ClientOptions.MaxStaleness 0: error %T %v, want an *OptionError on maxStalenessSeconds", err, err)
	}

	// In a URI, zero is an error naming the option by default (strict
	// URIs)...
	o = &ClientOptions{}
	err = o.ApplyURI(s.URI() + "?readPreference=secondary&maxStalenessSeconds=0")
	if !errors.As(err, &oe) || oe.Option != "maxStalenessSeconds" {
		t.Fatalf("strict URI with maxStalenessSeconds=0: error %T %v, want an *OptionError on maxStalenessSeconds", err, err)
	}
	// ... and with LenientURI it is ignored with a warning, as the
	// Connection String spec requires of every option: zero is not taken
	// as a maximum staleness.
	var warnings []Warning
	o = &ClientOptions{LenientURI: true, OnWarning: func(w Warning) { warnings = append(warnings, w) }}
	if err := o.ApplyURI(s.URI() + "?readPreference=secondary&maxStalenessSeconds=0"); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0].Option != "maxStalenessSeconds" || warnings[0].Kind != connstring.InvalidValue {
		t.Errorf("warnings %+v, want one InvalidValue warning on maxStalenessSeconds", warnings)
	}
	c2, err := Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Disconnect(context.Background())
	if ms := c2.readPref.MaxStaleness; ms != nil {
		t.Errorf("client read preference %v from maxStalenessSeconds=0, want no maximum", c2.readPref)
	}
}

// lastStarted returns the last command named name that rec saw start.
func lastStarted(rec *eventtest.Recorder, name string) *event.CommandStarted {
	cmds := eventtest.Of[*event.CommandStarted](rec)
	for i := len(cmds) - 1; i >= 0; i-- {
		if cmds[i].CommandName == name {
			return cmds[i]
		}
	}
	return nil
}

// TestReadPreferenceSent: a read carries the $readPreference the Server
// Selection spec requires over OP_MSG, so a read on a secondary works: none
// for mode primary on a replica set; the read preference (mode, tags,
// maxStalenessSeconds as an integer) otherwise; primaryPreferred for a
// primary read over a direct connection to a member, so it answers even as
// a secondary; never to a standalone.
func TestReadPreferenceSent(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	secondary := rs.Members()[1].Addr()
	_, primaryPort, _ := net.SplitHostPort(rs.Primary().Addr())
	standalone := mongotest.NewServer(t, mongotest.Options{})
	find := bson.D{{Key: "find", Value: "people"}}
	tests := []struct {
		name string
		uri  string
		opts *RunCommandOptions
		want string // "" means no $readPreference
	}{
		{"replica set, primary", rs.URI(), nil, ""},
		// RunCommand's default is primary, whatever the client's default
		// (Server Selection spec, "Use of read preferences with commands").
		{"replica set, client default secondary ignored", rs.URI() + "&readPreference=secondary", nil, ""},
		{"replica set, secondary", rs.URI(), &RunCommandOptions{ReadPreference: "secondary"}, `{"mode":"secondary"}`},
		{"replica set, secondaryPreferred", rs.URI(), &RunCommandOptions{ReadPreference: "secondaryPreferred"}, `{"mode":"secondaryPreferred"}`},
		{"replica set, nearest with max staleness", rs.URI(), &RunCommandOptions{ReadPreference: "nearest", MaxStaleness: Ptr(120 * time.Second)}, `{"mode":"nearest","maxStalenessSeconds":120}`},
		{"direct to a secondary, primary", "mongodb://" + secondary + "/?directConnection=true", nil, `{"mode":"primaryPreferred"}`},
		{"direct to a secondary, secondary", "mongodb://" + secondary + "/?directConnection=true", &RunCommandOptions{ReadPreference: "secondary"}, `{"mode":"secondary"}`},
		{"standalone, secondary", standalone.URI(), &RunCommandOptions{ReadPreference: "secondary"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := &eventtest.Recorder{Keep: eventtest.Only[*event.CommandStarted]}
			c := connect(t, tc.uri, &ClientOptions{Monitors: []any{log}})
			ctx := ctxTimeout(t, 10*time.Second)
			if _, err := c.RunCommand(ctx, "app", find, tc.opts); err != nil {
				t.Fatalf("find: %v", err)
			}
			e := lastStarted(log, "find")
			if e == nil {
				t.Fatal("no find command seen")
			}
			if tc.want == "" && tc.uri != standalone.URI() && strconv.Itoa(e.ServerPort) != primaryPort {
				t.Errorf("primary read sent to port %d, not the primary", e.ServerPort)
			}
			got := ""
			if v, err := e.Command.LookupErr("$readPreference"); err == nil {
				doc, ok := v.DocumentOK()
				if !ok {
					t.Fatalf("$readPreference is %v, not a document", v.Type)
				}
				got = doc.String()
				if ms := doc.Lookup("maxStalenessSeconds"); ms.Type != 0 && ms.Type != bson.TypeInt64 && ms.Type != bson.TypeInt32 {
					t.Errorf("maxStalenessSeconds has BSON type %v, want an integer", ms.Type)
				}
			}
			if got != tc.want {
				t.Errorf("$readPreference %s, want %s", got, tc.want)
			}
		})
	}
}
