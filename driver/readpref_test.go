package driver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
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
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Option != "maxStalenessSeconds" || oe.Field != "MaxStaleness" {
				t.Fatalf("RunCommand error %T %v, want an *OptionError on maxStalenessSeconds (MaxStaleness)", err, err)
			}
			if !strings.Contains(err.Error(), "maxStalenessSeconds") {
				t.Errorf("message %q does not name maxStalenessSeconds", err)
			}
		})
	}

	// The client's default read preference in code: zero is refused.
	o := &ClientOptions{ReadPreference: "secondary", MaxStaleness: Ptr(time.Duration(0))}
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

	// In a URI, an invalid value is ignored with a warning, as the
	// Connection String spec requires of every option: zero is not taken
	// as a maximum staleness.
	var warnings []Warning
	o = &ClientOptions{OnWarning: func(w Warning) { warnings = append(warnings, w) }}
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
