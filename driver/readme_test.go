package driver

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// readmeLogging is the logging part of the README's "Using the client"
// snippet; TestREADMELoggingSnippet checks the README still says it and
// runs it with a buffer in place of os.Stderr.
var readmeLogging = []string{
	"Logging: &logging.Options{",
	"Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}),",
	"Levels:  map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug},",
}

type noopMonitor struct{}

func (noopMonitor) CommandStarted(ctx context.Context, _ *event.CommandStarted) context.Context {
	return ctx
}
func (noopMonitor) CommandSucceeded(context.Context, *event.CommandSucceeded) {}
func (noopMonitor) CommandFailed(context.Context, *event.CommandFailed)       {}

func TestREADMELoggingSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range readmeLogging {
		if !bytes.Contains(readme, []byte(line)) {
			t.Fatalf("the README no longer says %q: update this test with it", line)
		}
	}
	s := mongotest.NewServer(t, mongotest.Options{})

	// The snippet as written, but writing to buf.
	var buf bytes.Buffer
	myMonitor := noopMonitor{}
	opts := &ClientOptions{
		URIOptions: URIOptions{AppName: "billing"},
		Monitors:   []any{myMonitor},
		Logging: &logging.Options{
			Handler: slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}),
			Levels:  map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug},
		},
	}
	if err := opts.ApplyURI(s.URI()); err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t, 10*time.Second)
	client, err := Connect(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.RunCommand(ctx, "app", bson.D{{Key: "count", Value: "orders"}},
		&RunCommandOptions{ReadPreference: "secondaryPreferred"})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg="Command started"`, `msg="Command succeeded"`, "commandName=count"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the README's logging setup did not log %s:\n%s", want, buf.String())
		}
	}
}

// TestLoggingDefaultLevel: the obvious setup, a logger and nothing else,
// shows the informational messages, e.g. a server selection that waits.
func TestLoggingDefaultLevel(t *testing.T) {
	var buf bytes.Buffer
	c := connect(t, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=100", &ClientOptions{
		Logging: &logging.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil)), Getenv: func(string) string { return "" }},
	})
	if err := c.Ping(context.Background()); err == nil {
		t.Fatal("Ping to nowhere succeeded")
	}
	c.Disconnect(context.Background())
	out := buf.String()
	if !strings.Contains(out, `msg="Waiting for suitable server to become available"`) {
		t.Errorf("a logger with no levels did not log the selection wait:\n%s", out)
	}
	if strings.Contains(out, "level=DEBUG") {
		t.Errorf("debug messages with the info default:\n%s", out)
	}
}

// readmeExampleMarker introduces a README code block taken from the
// example (or type) of that name in this package's example_*_test.go
// files.
var readmeExampleMarker = regexp.MustCompile(`^<!-- example: ([A-Za-z0-9_]+) -->$`)

// readmeSnippet is one marked code block of the README.
type readmeSnippet struct {
	name  string
	line  int // of the marker, 1-based
	lines []string
}

// readmeSnippets returns the README's marked code blocks.
func readmeSnippets(t *testing.T, readme string) []readmeSnippet {
	t.Helper()
	lines := strings.Split(readme, "\n")
	var out []readmeSnippet
	for i := 0; i < len(lines); i++ {
		m := readmeExampleMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```go" {
			t.Fatalf("README.md:%d: the example marker for %s is not followed by a ```go block", i+1, m[1])
		}
		sn := readmeSnippet{name: m[1], line: i + 1}
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			sn.lines = append(sn.lines, lines[j])
		}
		if j == len(lines) {
			t.Fatalf("README.md:%d: the code block for %s never ends", i+1, m[1])
		}
		out = append(out, sn)
		i = j
	}
	return out
}

// exampleSources returns the source of every function and type declared
// in this package's example_*_test.go files, by name, and which file
// declares each.
func exampleSources(t *testing.T) (src, file map[string]string) {
	t.Helper()
	paths, err := filepath.Glob("example_*_test.go")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no example files: %v", err)
	}
	src, file = map[string]string{}, map[string]string{}
	fset := token.NewFileSet()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, b, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		text := func(n ast.Node) string {
			return string(b[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Body != nil {
					src[d.Name.Name], file[d.Name.Name] = text(d.Body), p
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok {
						src[ts.Name.Name], file[ts.Name.Name] = "type "+text(ts), p
					}
				}
			}
		}
	}
	return src, file
}

// TestREADMESnippetsMatchExamples: each code block of the README marked
// <!-- example: Name --> is made of lines of the example (or type) Name,
// in the same order (lines of the example may be left out between them,
// but none may be changed), so that a README snippet is code that runs
// and whose // Output: go test checks. Every example of
// example_crud_test.go is shown in the README.
func TestREADMESnippetsMatchExamples(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	snippets := readmeSnippets(t, string(readme))
	if len(snippets) == 0 {
		t.Fatal("the README has no <!-- example: Name --> code blocks")
	}
	src, file := exampleSources(t)
	shown := map[string]bool{}
	for _, sn := range snippets {
		shown[sn.name] = true
		body, ok := src[sn.name]
		if !ok {
			t.Errorf("README.md:%d: no example or type %s in driver/example_*_test.go", sn.line, sn.name)
			continue
		}
		var have []string
		for _, l := range strings.Split(body, "\n") {
			have = append(have, strings.TrimSpace(l))
		}
		at := 0
		for k, l := range sn.lines {
			want := strings.TrimSpace(l)
			if want == "" {
				continue
			}
			for at < len(have) && have[at] != want {
				at++
			}
			if at == len(have) {
				t.Errorf("README.md:%d: %q (the snippet's line %d) is not in %s (%s) after the snippet's previous lines; update the README or the example",
					sn.line+2+k, want, k+1, sn.name, file[sn.name])
				break
			}
			at++
		}
	}
	for name, f := range file {
		if f == "example_crud_test.go" && strings.HasPrefix(name, "Example") && !shown[name] {
			t.Errorf("%s (%s) is not shown in the README: add a <!-- example: %s --> block", name, f, name)
		}
	}
}

// readmeNameToken is a backquoted Go name in the README's prose:
// `UpdateMany`, `*driver.WriteException`, `Collection.Drop`, `Indexes()`.
var readmeNameToken = regexp.MustCompile("`\\*?(?:driver\\.)?([A-Z][A-Za-z0-9]*)(?:\\.([A-Z][A-Za-z0-9]*))?(?:\\(\\))?`")

// TestREADMENamesExist: every exported name the README's "Reading and
// writing documents" section mentions in its prose (outside the code
// blocks, which TestREADMESnippetsMatchExamples checks) is declared in
// this package, as a type, function, method, field, variable or
// constant, so the README never documents what does not exist.
func TestREADMENamesExist(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "## Reading and writing documents")
	if start < 0 {
		t.Fatal(`the README has no "## Reading and writing documents" section`)
	}
	section := text[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	section = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(section, "")

	declared := map[string]bool{}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				declared[d.Name.Name] = true
				if d.Recv != nil && len(d.Recv.List) == 1 {
					typ := d.Recv.List[0].Type
					if st, ok := typ.(*ast.StarExpr); ok {
						typ = st.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						declared[id.Name+"."+d.Name.Name] = true
					}
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						declared[sp.Name.Name] = true
						if st, ok := sp.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									declared[n.Name] = true
									declared[sp.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							declared[n.Name] = true
						}
					}
				}
			}
		}
	}
	n := 0
	for _, m := range readmeNameToken.FindAllStringSubmatch(section, -1) {
		name := m[1]
		if m[2] != "" {
			name += "." + m[2]
		}
		n++
		if !declared[name] {
			t.Errorf("the README mentions %s, which package driver does not declare", m[0])
		}
	}
	if n == 0 {
		t.Fatal("no names found in the README's CRUD section")
	}
}
