package stackcheck

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"strings"

	shellwords "github.com/mattn/go-shellwords"
)

// Instruction is one Dockerfile instruction, its continuation lines joined.
type Instruction struct {
	Cmd  string // upper case: FROM, RUN, ENV, ...
	Args string // the rest of the line
	Line int    // the line it starts on
}

// ParseDockerfile reads a Dockerfile's instructions. It knows the default
// escape character (\) and comment lines, which is all this repository's
// Dockerfile uses; parser directives are comments here.
func ParseDockerfile(file string) ([]Instruction, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out     []Instruction
		cur     strings.Builder
		start   int
		lineNum int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNum++
		line := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(trimmed, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = lineNum
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		cmd, args, _ := strings.Cut(text, " ")
		out = append(out, Instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args), Line: start})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("%s: the last instruction ends with a line continuation", file)
	}
	return out, nil
}

// GoBuild is the `go build` command of a RUN instruction.
type GoBuild struct {
	Env  []string // KEY=value assignments before `go` on the RUN line
	Args []string // the arguments after `go build`
	Line int
}

// FindGoBuild returns the one RUN instruction that runs `go build`, split
// as a shell would split it (quotes removed).
func FindGoBuild(ins []Instruction) (GoBuild, error) {
	var found []GoBuild
	for _, in := range ins {
		if in.Cmd != "RUN" || !strings.Contains(in.Args, "go build") {
			continue
		}
		words, err := shellwords.Parse(in.Args)
		if err != nil {
			return GoBuild{}, fmt.Errorf("line %d: %v", in.Line, err)
		}
		var gb GoBuild
		gb.Line = in.Line
		i := 0
		for ; i < len(words) && isAssignment(words[i]); i++ {
			gb.Env = append(gb.Env, words[i])
		}
		if i+1 >= len(words) || words[i] != "go" || words[i+1] != "build" {
			return GoBuild{}, fmt.Errorf("line %d: the RUN line must be `[VAR=value ...] go build ...` alone (no && or ;), got %q", in.Line, in.Args)
		}
		for _, w := range words[i+2:] {
			if w == "&&" || w == ";" || w == "||" || w == "|" {
				return GoBuild{}, fmt.Errorf("line %d: the go build RUN line runs more than go build", in.Line)
			}
		}
		gb.Args = words[i+2:]
		found = append(found, gb)
	}
	if len(found) != 1 {
		return GoBuild{}, fmt.Errorf("want exactly one RUN line with go build, found %d", len(found))
	}
	return found[0], nil
}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// StageEnv returns the KEY=value pairs that ENV instructions set in the
// stage that holds instruction index i (from its FROM up to i).
func StageEnv(ins []Instruction, i int) ([]string, error) {
	from := 0
	for j := i; j >= 0; j-- {
		if ins[j].Cmd == "FROM" {
			from = j
			break
		}
	}
	var env []string
	for _, in := range ins[from:i] {
		if in.Cmd != "ENV" {
			continue
		}
		words, err := shellwords.Parse(in.Args)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", in.Line, err)
		}
		if len(words) == 2 && !strings.Contains(words[0], "=") { // ENV KEY value
			env = append(env, words[0]+"="+words[1])
			continue
		}
		for _, w := range words {
			if !isAssignment(w) {
				return nil, fmt.Errorf("line %d: ENV %q is not KEY=value", in.Line, w)
			}
			env = append(env, w)
		}
	}
	return env, nil
}

// Index returns the index of the instruction that starts on line, or -1.
func Index(ins []Instruction, line int) int {
	for i, in := range ins {
		if in.Line == line {
			return i
		}
	}
	return -1
}

// DockerIgnore holds the patterns of a .dockerignore file.
type DockerIgnore struct{ patterns []string }

// ParseDockerIgnore reads a .dockerignore. Exceptions (!pattern) are
// refused: the repository's file has none, and this matcher does not
// implement them.
func ParseDockerIgnore(file string) (*DockerIgnore, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	d := &DockerIgnore{}
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			return nil, fmt.Errorf("%s:%d: exceptions (!) are not supported by this check", file, n+1)
		}
		p := path.Clean(strings.TrimPrefix(line, "/"))
		if _, err := path.Match(strings.ReplaceAll(p, "**/", ""), ""); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, n+1, err)
		}
		d.patterns = append(d.patterns, p)
	}
	return d, nil
}

// Ignored reports whether the slash-separated path rel, relative to the
// build context, is left out of the context: a pattern matches the path or
// one of its parent folders, and a leading **/ matches any number of
// folders, as Docker's matcher does.
func (d *DockerIgnore) Ignored(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range d.patterns {
		for n := 1; n <= len(parts); n++ {
			prefix := strings.Join(parts[:n], "/")
			if ok, _ := path.Match(p, prefix); ok {
				return true
			}
			if rest, ok := strings.CutPrefix(p, "**/"); ok {
				for k := 0; k < n; k++ {
					if ok, _ := path.Match(rest, strings.Join(parts[k:n], "/")); ok {
						return true
					}
				}
			}
		}
	}
	return false
}
