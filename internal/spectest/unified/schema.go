package unified

import (
	"fmt"
	"strconv"
	"strings"
)

// SchemaVersion is the newest schema version of the unified test format
// this runner implements. It runs files of major version 1 up to this
// minor version and refuses the others, as the format's "Test Runner
// Support" section requires.
const SchemaVersion = "1.28"

// version is a parsed Version String: major.minor.patch.
type version [3]int

// parseVersion reads "<major>[.<minor>[.<patch>]]", discarding anything
// after the patch's digits (a server's "-rc0" or "-alpha4-271-g7d5cf02").
// strict refuses extra components, as schemaVersion must be exact.
func parseVersion(s string, strict bool) (version, error) {
	var v version
	parts := strings.Split(s, ".")
	if len(parts) > 3 && strict {
		return v, fmt.Errorf("version %q has more than three components", s)
	}
	for i := 0; i < len(parts) && i < 3; i++ {
		p := parts[i]
		if !strict {
			// "4.9.0-alpha4": keep the leading digits.
			end := 0
			for end < len(p) && p[end] >= '0' && p[end] <= '9' {
				end++
			}
			p = p[:end]
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("version %q: component %q is not a non-negative integer", s, parts[i])
		}
		v[i] = n
	}
	return v, nil
}

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// checkSchemaVersion says why a file's schemaVersion cannot be run, or nil.
func checkSchemaVersion(s string) error {
	v, err := parseVersion(s, true)
	if err != nil {
		return fmt.Errorf("schemaVersion: %w", err)
	}
	max, _ := parseVersion(SchemaVersion, true)
	switch {
	case v[0] != max[0]:
		return fmt.Errorf("schemaVersion %q is not supported: this runner implements major version %d (up to %s), and a file of another major version may depend on rules it does not know", s, max[0], SchemaVersion)
	case max.less(v):
		return fmt.Errorf("schemaVersion %q is not supported: this runner implements the format up to %s", s, SchemaVersion)
	}
	return nil
}
