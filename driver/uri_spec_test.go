package driver

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// The connection-string and uri-options specification tests, through
// ClientOptions: under LenientURI each case behaves as the specification
// says (valid or not, warning or not); by default every case whose only
// fault is an invalid value becomes an *OptionError naming that option,
// and every other case behaves as under LenientURI. connstring's own
// runners check the parsed values.
func TestSpecURIThroughClientOptions(t *testing.T) {
	for _, suite := range []string{"connection-string", "uri-options"} {
		t.Run(suite, func(t *testing.T) {
			total := spectest.NewTally(suite + " (ClientOptions)")
			for _, path := range spectest.Files(t, "*.json", suite, "tests") {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var f struct {
					Tests []struct {
						Description string `json:"description"`
						URI         string `json:"uri"`
						Valid       bool   `json:"valid"`
						Warning     *bool  `json:"warning"`
					}
				}
				if err := json.Unmarshal(b, &f); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				file := spectest.NewTally(suite + "/" + filepath.Base(path))
				t.Run(filepath.Base(path), func(t *testing.T) {
					for _, tc := range f.Tests {
						_, warnings, lerr := applyAndValidate(tc.URI, true)
						var oe *OptionError
						if tc.Valid && tc.Warning != nil && *tc.Warning && errors.As(lerr, &oe) && connstring.FailsClosed(oe.Option) {
							file.Skip(t, tc.Description, "deliberate deviation: an invalid value of a security option (tls*, ssl, authMechanism, authSource) is an error, not a warning, so a typo cannot weaken TLS or authentication")
							continue
						}
						file.Run(t, tc.Description, func(t *testing.T) {
							if !tc.Valid {
								for _, mode := range []bool{true, false} {
									_, _, err := applyAndValidate(tc.URI, mode)
									if !errors.As(err, &oe) {
										t.Errorf("lenient=%v: %s: got %v, want an *OptionError", mode, tc.URI, err)
									}
								}
								return
							}
							if lerr != nil {
								t.Fatalf("lenient: %s: %v", tc.URI, lerr)
							}
							if tc.Warning != nil && *tc.Warning != (len(warnings) > 0) {
								t.Errorf("lenient: warnings %v, want warning=%v", warnings, *tc.Warning)
							}
							var invalid *Warning
							for i := range warnings {
								if warnings[i].Kind == connstring.InvalidValue {
									invalid = &warnings[i]
									break
								}
							}
							_, swarnings, serr := applyAndValidate(tc.URI, false)
							switch {
							case invalid != nil:
								if !errors.As(serr, &oe) || oe.Option != invalid.Option {
									t.Errorf("strict: %s: got %v, want an *OptionError naming %s", tc.URI, serr, invalid.Option)
								}
							case serr != nil:
								t.Errorf("strict: %s: %v", tc.URI, serr)
							case len(swarnings) != len(warnings):
								t.Errorf("strict: warnings %v, lenient %v", swarnings, warnings)
							}
						})
					}
				})
				file.Log(t)
				total.Add(file)
			}
			total.Log(t)
		})
	}
}

// applyAndValidate applies uri to new ClientOptions and validates them.
func applyAndValidate(uri string, lenient bool) (*ClientOptions, []Warning, error) {
	var warnings []Warning
	o := &ClientOptions{LenientURI: lenient, OnWarning: func(w Warning) { warnings = append(warnings, w) }}
	if err := o.ApplyURI(uri); err != nil {
		return o, warnings, err
	}
	return o, warnings, o.Validate()
}
