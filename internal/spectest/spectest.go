// Package spectest finds the MongoDB specification test files that spec
// runners read. The files are never copied into this repository: they are
// found at $MONGODB_SPECS_DIR or, when that is unset, at
// ../shared/specifications relative to the repository root.
package spectest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// EnvVar names the environment variable that points at the specifications.
const EnvVar = "MONGODB_SPECS_DIR"

// Root returns the specifications folder and whether it exists.
func Root() (string, bool) {
	if dir := os.Getenv(EnvVar); dir != "" {
		st, err := os.Stat(dir)
		return dir, err == nil && st.IsDir()
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", false
	}
	// This file is <repo>/internal/spectest/spectest.go.
	repo := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	dir := filepath.Join(filepath.Dir(repo), "shared", "specifications")
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir()
}

// Files returns the files of one suite matching pattern (a filepath.Match
// pattern such as "*.json") under <root>/<suite...>, searched recursively
// and sorted. It skips the test when the specifications are absent, and
// fails it when they are present but the suite has no matching files, so a
// wrong path can never pass silently.
func Files(t testing.TB, pattern string, suite ...string) []string {
	t.Helper()
	root, ok := Root()
	if !ok {
		t.Skipf("specification tests skipped: set %s or place the specifications at ../shared/specifications (looked for %q)", EnvVar, root)
	}
	dir := filepath.Join(append([]string{root}, suite...)...)
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if ok, _ := filepath.Match(pattern, d.Name()); ok {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatalf("specifications found at %s, but suite %s has no files matching %q", root, dir, pattern)
	}
	sort.Strings(files)
	return files
}

// File returns one named file under the specifications root, such as a
// spec's Markdown or a benchmark data set. It skips when the specifications
// are absent and fails when the file is missing.
func File(t testing.TB, elem ...string) string {
	t.Helper()
	root, ok := Root()
	if !ok {
		t.Skipf("specification tests skipped: set %s or place the specifications at ../shared/specifications (looked for %q)", EnvVar, root)
	}
	p := filepath.Join(append([]string{root}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("specifications found at %s, but %s is missing: %v", root, p, err)
	}
	return p
}

// Tally counts one suite's cases and writes the summary line every spec
// test logs: "suite: N passed, M failed, K skipped (count: reason; ...)".
type Tally struct {
	Suite          string
	Passed, Failed int
	Skipped        map[string]int // reason -> count
}

// NewTally starts the count for suite.
func NewTally(suite string) *Tally { return &Tally{Suite: suite, Skipped: map[string]int{}} }

// Run runs one case as a subtest and counts its result.
func (s *Tally) Run(t *testing.T, name string, f func(t *testing.T)) bool {
	t.Helper()
	ok := t.Run(name, f)
	if ok {
		s.Passed++
	} else {
		s.Failed++
	}
	return ok
}

// Skip records one case skipped for reason, as a skipped subtest so the
// reason shows in verbose output too.
func (s *Tally) Skip(t *testing.T, name, reason string) {
	t.Helper()
	s.Skipped[reason]++
	t.Run(name, func(t *testing.T) { t.Skip(reason) })
}

// Add folds another tally's counts into s.
func (s *Tally) Add(o *Tally) {
	s.Passed += o.Passed
	s.Failed += o.Failed
	for r, c := range o.Skipped {
		s.Skipped[r] += c
	}
}

// String is the summary line.
func (s *Tally) String() string {
	n := 0
	var reasons []string
	for r, c := range s.Skipped {
		n += c
		reasons = append(reasons, fmt.Sprintf("%d: %s", c, r))
	}
	sort.Strings(reasons)
	line := fmt.Sprintf("%s: %d passed, %d failed, %d skipped", s.Suite, s.Passed, s.Failed, n)
	if n > 0 {
		line += " (" + strings.Join(reasons, "; ") + ")"
	}
	return line
}

// Log writes the summary line to the test log.
func (s *Tally) Log(t *testing.T) {
	t.Helper()
	t.Log(s.String())
}
