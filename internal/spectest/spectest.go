// Package spectest finds the MongoDB specification test files that spec
// runners read. The files are never copied into this repository: they are
// found at $MONGODB_SPECS_DIR or, when that is unset, at
// ../shared/specifications relative to the repository root.
package spectest

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
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
