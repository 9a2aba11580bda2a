package spectest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFilesFailsWhenSuiteEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "empty-suite"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, dir)
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		Files(ft, "*.json", "empty-suite")
	}()
	if !ft.failed {
		t.Fatal("Files did not fail on an existing specifications folder with an empty suite")
	}
}

func TestFilesSkipsWhenAbsent(t *testing.T) {
	t.Setenv(EnvVar, filepath.Join(t.TempDir(), "does-not-exist"))
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		Files(ft, "*.json", "bson-corpus")
	}()
	if !ft.skipped || ft.failed {
		t.Fatalf("Files: skipped=%v failed=%v, want a skip", ft.skipped, ft.failed)
	}
}

func TestFilesGlobsRecursively(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"s/tests/a.json", "s/tests/sub/b.json", "s/tests/c.yml"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvVar, dir)
	got := Files(t, "*.json", "s", "tests")
	if len(got) != 2 {
		t.Fatalf("got %v, want a.json and sub/b.json", got)
	}
}

// fakeT records Skip and Fatal without stopping the real test.
type fakeT struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true; panic("skip") }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
