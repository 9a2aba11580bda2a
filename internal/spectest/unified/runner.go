package unified

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// Runner runs unified-format test files against deployments it starts
// with Provider, through the driver's public API.
type Runner struct {
	// Provider starts a fresh deployment for each test.
	Provider Provider
	// Skip, when set, may give a reason to skip a test that the runner
	// could run but the deployment cannot honour (a known gap of the
	// server being played). file is the file's base name.
	Skip func(file string, test bson.Raw) string
	// KnownFailure, when set, may name a driver bug or gap a test is known
	// to fail on. RunSuite then counts its failure as skipped with the
	// reason "known failure: ..." (logging the error), and fails it if it
	// passes, so that the list shrinks as the driver grows.
	KnownFailure func(tc *Test) string
	// ServerDifference, when set, may name a way the server under test
	// differs from MongoDB that makes tc fail, with its symptom: a
	// substring of the error the failure shows. RunSuite counts a failure
	// showing the symptom as skipped with the reason; a failure with any
	// other error still fails, and so does a pass (the entry is stale).
	ServerDifference func(tc *Test) (reason, symptom string)
	// CheckClient, when set, is run on each client entity still connected
	// after a test that passed, once its cursors, sessions and threads are
	// closed: an error it returns fails the test (the sessions
	// specification's prose test 10: no session is left checked out).
	CheckClient func(*driver.Client) error
	// Tracing, when set, makes the tracing monitor of a client entity
	// that sets observeTracingMessages (enableCommandPayload is its
	// option) and the function that returns the client's finished spans,
	// the roots of their trees in start order, for expectTracingMessages.
	// Without it such clients trace nothing and a test that expects
	// tracing messages is skipped ("no tracing hook"). The runner stays
	// free of any tracing library: the hook brings one.
	Tracing func(enableCommandPayload bool) (monitor any, spans func() []*Span)
	// TestTimeout bounds one test, operations and clean-up included; zero
	// means two minutes.
	TestTimeout time.Duration
}

// Test is one test of a loaded file.
type Test struct {
	File *File
	Doc  bson.Raw
	// Name is "<file base name>/<description>".
	Name string
}

// File is a loaded test file.
type File struct {
	Path string
	Doc  bson.Raw
	// SchemaErr says why the file's schemaVersion cannot be run; every
	// test of the file then fails with it.
	SchemaErr error
	Tests     []*Test
}

// LoadTests reads a test file and its tests.
func LoadTests(path string) (*File, error) {
	doc, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	f := &File{Path: path, Doc: doc}
	sv, ok := doc.Lookup("schemaVersion").StringValueOK()
	if !ok {
		f.SchemaErr = errors.New("the file has no schemaVersion string")
	} else {
		f.SchemaErr = checkSchemaVersion(sv)
	}
	tests, ok := doc.Lookup("tests").ArrayOK()
	if !ok {
		return nil, fmt.Errorf("%s: tests is not an array", path)
	}
	vals, err := tests.Values()
	if err != nil {
		return nil, fmt.Errorf("%s: tests: %w", path, err)
	}
	base := filepath.Base(path)
	for i, v := range vals {
		td, ok := v.DocumentOK()
		if !ok {
			return nil, fmt.Errorf("%s: tests.%d is not a document", path, i)
		}
		desc, _ := td.Lookup("description").StringValueOK()
		f.Tests = append(f.Tests, &Test{File: f, Doc: td, Name: base + "/" + desc})
	}
	return f, nil
}

// Outcome is the result of one test: skipped (Skip is the reason),
// failed (Err), or passed (both zero).
type Outcome struct {
	Skip string
	Err  error
	// Log holds the runner's notes (the deployment used, ...).
	Log []string
}

// skipError ends a test as skipped: a feature the driver or the
// deployment lacks, found while running.
type skipError struct{ reason string }

func (e *skipError) Error() string { return "skipped: " + e.reason }

func skipf(format string, args ...any) error {
	return &skipError{reason: fmt.Sprintf(format, args...)}
}

// Run runs one test on a fresh deployment and reports its outcome.
func (r *Runner) Run(tc *Test) (out Outcome) {
	if tc.File.SchemaErr != nil {
		return Outcome{Err: tc.File.SchemaErr}
	}
	if s, ok := tc.Doc.Lookup("skipReason").StringValueOK(); ok {
		return Outcome{Skip: "skipReason: " + s}
	}
	if r.Skip != nil {
		if s := r.Skip(filepath.Base(tc.File.Path), tc.Doc); s != "" {
			return Outcome{Skip: s}
		}
	}
	fileReqs, err := parseRequirements(tc.File.Doc.Lookup("runOnRequirements"))
	if err != nil {
		return Outcome{Err: fmt.Errorf("runOnRequirements: %w", err)}
	}
	testReqs, err := parseRequirements(tc.Doc.Lookup("runOnRequirements"))
	if err != nil {
		return Outcome{Err: fmt.Errorf("test runOnRequirements: %w", err)}
	}
	timeout := r.TestTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	var reasons []string
	tried := 0
	for _, topo := range r.Provider.Topologies() {
		for _, auth := range []bool{false, true} {
			if auth && !wantsAuth(fileReqs, testReqs) || !staticallyMet(fileReqs, topo, auth) || !staticallyMet(testReqs, topo, auth) {
				continue
			}
			tried++
			dep, err := r.Provider.Start(topo, auth)
			if errors.Is(err, ErrCannotPlay) {
				reasons = append(reasons, err.Error())
				continue
			}
			if err != nil {
				return Outcome{Err: err}
			}
			out, reason := r.runOn(ctx, tc, dep, topo, auth, fileReqs, testReqs)
			dep.Close()
			if reason == "" {
				return out
			}
			reasons = append(reasons, reason)
		}
	}
	if tried == 0 {
		return Outcome{Skip: fmt.Sprintf("no deployment the runner can start (%s) meets runOnRequirements", strings.Join(r.Provider.Topologies(), ", "))}
	}
	return Outcome{Skip: "runOnRequirements not met: " + strings.Join(dedupe(reasons), "; ")}
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// runOn runs tc on dep once the requirements hold there; a non-empty
// reason says they do not.
func (r *Runner) runOn(ctx context.Context, tc *Test, dep Deployment, topo string, auth bool, fileReqs, testReqs []requirement) (Outcome, string) {
	tr := newTestRun(ctx, tc, dep)
	tr.gapper, _ = r.Provider.(GapReporter)
	tr.tracing = r.Tracing
	defer tr.cleanup()
	if err := tr.connectInternal(); err != nil {
		return Outcome{Err: err}, ""
	}
	if reason, err := tr.requirementsMet(fileReqs); err != nil || reason != "" {
		if err != nil {
			return Outcome{Err: err}, ""
		}
		return Outcome{}, reason
	}
	if reason, err := tr.requirementsMet(testReqs); err != nil || reason != "" {
		if err != nil {
			return Outcome{Err: err}, ""
		}
		return Outcome{}, reason
	}
	if _, shared := r.Provider.(SharedServer); shared {
		if err := tr.dropNamedDatabases(); err != nil {
			return Outcome{Err: err}, ""
		}
	}
	err := tr.run()
	if err == nil && r.CheckClient != nil {
		err = tr.checkClients(r.CheckClient)
	}
	if reason := tr.gap(err); reason != "" {
		err = &skipError{reason: reason}
	}
	out := Outcome{Log: append(tr.notes, fmt.Sprintf("deployment: %s (auth %v)", topo, auth))}
	var se *skipError
	switch {
	case errors.As(err, &se):
		out.Skip = se.reason
	case err != nil:
		out.Err = err
	}
	return out, ""
}

// Suite names a group of spec files: a suite name for the summary line,
// a file pattern, and the folder under the specifications root.
type Suite struct {
	Name    string
	Pattern string   // "*.json" when empty
	Dir     []string // e.g. {"crud", "tests", "unified"}
}

// RunSuite runs every test of the suite's files as subtests, in parallel
// unless the Provider is a SharedServer (then one at a time), and logs the summary line "suite: N passed, M failed, K skipped (...)".
// A failed case fails t; a skipped one is skipped with its reason. It
// skips t when the specifications are absent and fails it when they are
// present but the suite has no files (spectest.Files).
func (r *Runner) RunSuite(t *testing.T, s Suite) *spectest.Tally {
	t.Helper()
	pattern := s.Pattern
	if pattern == "" {
		pattern = "*.json"
	}
	tally := spectest.NewTally(s.Name)
	files := spectest.Files(t, pattern, s.Dir...)
	var mu sync.Mutex
	root, _ := spectest.Root()
	suiteDir := filepath.Join(append([]string{root}, s.Dir...)...)
	_, shared := r.Provider.(SharedServer)
	t.Run("cases", func(t *testing.T) {
		for _, path := range files {
			f, err := LoadTests(path)
			if err != nil {
				t.Errorf("%v", err)
				mu.Lock()
				tally.Failed++
				mu.Unlock()
				continue
			}
			// Name tests by their path under the suite, so that files of
			// the same name in two folders stay apart.
			if rel, err := filepath.Rel(suiteDir, path); err == nil {
				for _, tc := range f.Tests {
					tc.Name = filepath.ToSlash(rel) + "/" + tc.Doc.Lookup("description").StringValue()
				}
			}
			for _, tc := range f.Tests {
				tc := tc
				t.Run(tc.Name, func(t *testing.T) {
					if !shared {
						t.Parallel()
					}
					out := r.Run(tc)
					for _, l := range out.Log {
						t.Log(l)
					}
					out, note := r.judge(tc, out)
					if note != "" {
						t.Log(note)
					}
					mu.Lock()
					switch {
					case out.Err != nil:
						tally.Failed++
					case out.Skip != "":
						tally.Skipped[out.Skip]++
					default:
						tally.Passed++
					}
					mu.Unlock()
					if out.Err != nil {
						t.Fatal(out.Err)
					}
					if out.Skip != "" {
						t.Skip(out.Skip)
					}
				})
			}
		}
	})
	tally.Log(t)
	return tally
}

// judge applies KnownFailure and ServerDifference to a test's outcome;
// note, when set, records the failure that was counted as skipped.
func (r *Runner) judge(tc *Test, out Outcome) (Outcome, string) {
	if out.Skip != "" {
		return out, ""
	}
	if r.ServerDifference != nil {
		if reason, symptom := r.ServerDifference(tc); reason != "" {
			switch {
			case out.Err == nil:
				return Outcome{Err: fmt.Errorf("listed as a server difference (%s), but it passes: take it off the list", reason)}, ""
			case symptom == "" || !strings.Contains(out.Err.Error(), symptom):
				return Outcome{Err: fmt.Errorf("listed as a server difference (%s) showing %q, but it fails otherwise: %w", reason, symptom, out.Err)}, ""
			}
			return Outcome{Skip: reason}, fmt.Sprintf("fails as the server difference says (%s): %v", reason, out.Err)
		}
	}
	known := ""
	if r.KnownFailure != nil {
		known = r.KnownFailure(tc)
	}
	if known == "" {
		return out, ""
	}
	if out.Err == nil {
		return Outcome{Err: fmt.Errorf("listed as a known failure (%s), but it passes: take it off the list", known)}, ""
	}
	return Outcome{Skip: "known failure: " + known}, fmt.Sprintf("fails as known (%s): %v", known, out.Err)
}
