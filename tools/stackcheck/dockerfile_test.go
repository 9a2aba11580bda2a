package stackcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// image is what the tests read of the Dockerfile.
type image struct {
	ins        []Instruction
	build      GoBuild
	env        []string // the go build's environment: its stage's ENV, then its RUN line's
	out        string   // the go build's -o
	entrypoint []string
	cmd        []string
	expose     []int
}

func dockerfile(t *testing.T, root string) image {
	t.Helper()
	ins, err := ParseDockerfile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var img image
	img.ins = ins
	if img.build, err = FindGoBuild(ins); err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	i := Index(ins, img.build.Line)
	stageEnv, err := StageEnv(ins, i)
	if err != nil {
		t.Fatal(err)
	}
	img.env = append(stageEnv, img.build.Env...)
	img.out = flagValue(img.build.Args, "-o")
	for _, in := range ins {
		switch in.Cmd {
		case "ENTRYPOINT", "CMD":
			var words []string
			if err := json.Unmarshal([]byte(in.Args), &words); err != nil {
				t.Fatalf("Dockerfile line %d: %s must be in exec form (a JSON array): %v", in.Line, in.Cmd, err)
			}
			if in.Cmd == "ENTRYPOINT" {
				img.entrypoint = words
			} else {
				img.cmd = words
			}
		case "EXPOSE":
			for _, f := range strings.Fields(in.Args) {
				p, err := strconv.Atoi(strings.TrimSuffix(f, "/tcp"))
				if err != nil {
					t.Fatalf("Dockerfile line %d: EXPOSE %s", in.Line, f)
				}
				img.expose = append(img.expose, p)
			}
		}
	}
	return img
}

// lastEnv returns the value the last KEY= in env gives KEY.
func lastEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// TestDockerfileStatic: pinned base images, the go build's flags, and the
// binary it builds is the one the runtime stage copies and runs.
func TestDockerfileStatic(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	img := dockerfile(t, root)
	froms := 0
	for _, in := range img.ins {
		if in.Cmd != "FROM" {
			continue
		}
		froms++
		ref := strings.Fields(in.Args)
		ref = slices.DeleteFunc(ref, func(s string) bool { return strings.HasPrefix(s, "--platform") })
		if why := Pinned(ref[0]); why != "" {
			t.Errorf("Dockerfile line %d: base image %s is not pinned: %s", in.Line, ref[0], why)
		}
	}
	if froms < 2 {
		t.Errorf("the Dockerfile has %d stages, want a build stage and a runtime stage", froms)
	}
	if v, _ := lastEnv(img.env, "CGO_ENABLED"); v != "0" {
		t.Errorf("the go build runs with CGO_ENABLED=%q, want 0 (a static binary for the distroless image)", v)
	}
	args := img.build.Args
	if !slices.Contains(args, "-trimpath") || flagValue(args, "-ldflags") != "-s -w" || img.out == "" || args[len(args)-1] != "./cmd/mongoprobe" {
		t.Errorf("go build %q: want -trimpath -ldflags \"-s -w\" -o FILE ./cmd/mongoprobe", args)
	}
	// The runtime stage copies the built binary to the ENTRYPOINT's program.
	if len(img.entrypoint) == 0 {
		t.Fatal("the Dockerfile has no ENTRYPOINT")
	}
	copied := false
	for _, in := range img.ins {
		if in.Cmd == "COPY" && strings.HasPrefix(in.Args, "--from=") {
			f := strings.Fields(in.Args)
			copied = copied || len(f) == 3 && f[1] == img.out && f[2] == img.entrypoint[0]
		}
	}
	if !copied {
		t.Errorf("no COPY --from=<build stage> %s %s: the ENTRYPOINT does not run the binary go build makes", img.out, img.entrypoint[0])
	}
	addr := flagValue(img.entrypoint, "--web.listen-address")
	host, port, err := net.SplitHostPort(addr)
	if err != nil || (host != "" && host != "0.0.0.0") {
		t.Errorf("the ENTRYPOINT listens on %q, want every interface (:9417) inside the container: %v", addr, err)
	}
	if !slices.Contains(img.entrypoint, "--web.listen-remote") {
		t.Error("the ENTRYPOINT lacks --web.listen-remote, without which mongoprobe refuses a non-loopback address")
	}
	if p, _ := strconv.Atoi(port); !slices.Contains(img.expose, p) || p != 9417 {
		t.Errorf("EXPOSE %v and the listen address %s disagree (want 9417)", img.expose, addr)
	}
}

// TestDockerIgnoreMatcher checks the .dockerignore matcher on its own.
func TestDockerIgnoreMatcher(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".dockerignore")
	if err := os.WriteFile(file, []byte("# c\n.git\n/.cache\n**/*.test\nbench/bench\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := ParseDockerIgnore(file)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		".git/HEAD": true, ".cache/bin/x": true, "a.test": true, "driver/driver.test": true,
		"bench/bench": true, "bench/main.go": false, "go.work": false, "cmd/mongoprobe/main.go": false,
		"tools/x.testdata": false,
	} {
		if got := d.Ignored(p); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}

// buildContext copies the files of the repository that `docker build .`
// would send (git's files, less .dockerignore's patterns) to a new folder.
func buildContext(t *testing.T, root string) string {
	t.Helper()
	ign, err := ParseDockerIgnore(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	dir := filepath.Join(t.TempDir(), "context")
	n := 0
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" || ign.Ignored(rel) {
			continue
		}
		src := filepath.Join(root, rel)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		n++
	}
	t.Logf("build context: %d files", n)
	return dir
}

// TestDockerfileBuildsAndStarts runs the Dockerfile's go build, with its
// flags and environment, in a copy of the build context, then starts the
// binary with --help, with the ENTRYPOINT's arguments and --demo, and with
// the compose stack's arguments and configuration file.
func TestDockerfileBuildsAndStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mongoprobe: not in -short")
	}
	root, p := project(t)
	img := dockerfile(t, root)
	ctxDir := buildContext(t, root)

	// The files the build stage copies by name are in the context.
	for _, in := range img.ins {
		if in.Cmd != "COPY" || strings.HasPrefix(in.Args, "--from=") {
			continue
		}
		f := strings.Fields(in.Args)
		for _, src := range f[:len(f)-1] {
			if _, err := os.Stat(filepath.Join(ctxDir, src)); err != nil {
				t.Errorf("Dockerfile line %d copies %s, which the build context lacks (.dockerignore?): %v", in.Line, src, err)
			}
		}
	}

	bin := filepath.Join(t.TempDir(), "mongoprobe")
	args := slices.Clone(img.build.Args)
	for i := range args {
		if i > 0 && args[i-1] == "-o" {
			args[i] = bin
		}
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOWORK=") || strings.HasPrefix(kv, "GOFLAGS=")
	})
	env = append(env, img.env...)
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = ctxDir
	cmd.Env = env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s (in a copy of the build context, env %q): %v\n%s", cmd, img.env, err, out)
	}
	t.Logf("go build %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))

	help, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil || !bytes.Contains(help, []byte("mongoprobe")) {
		t.Fatalf("mongoprobe --help: %v\n%s", err, help)
	}

	entry := slices.Concat(img.entrypoint[1:], img.cmd)
	t.Run("entrypoint with --demo", func(t *testing.T) {
		port := freePort(t)
		body := run(t, bin, slices.Concat(withPort(t, entry, port), []string{"--demo"}), port)
		if !strings.Contains(body, "mongoprobe_up") {
			t.Errorf("/metrics lacks mongoprobe_up:\n%.2000s", body)
		}
	})
	t.Run("compose command", func(t *testing.T) {
		s := service(t, p, "mongoprobe")
		command := slices.Clone([]string(s.Command))
		for i := range command {
			if i > 0 && command[i-1] == "--config.file" {
				command[i] = HostPath(root, s, command[i])
			}
		}
		port := freePort(t)
		body := run(t, bin, slices.Concat(withPort(t, entry, port), command), port)
		if !strings.Contains(body, `mongoprobe_up{cluster="compose"} 0`) {
			t.Errorf("/metrics lacks mongoprobe_up for the compose cluster:\n%.2000s", body)
		}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// withPort replaces the port of --web.listen-address in args, keeping its
// host part (every interface, as in the container).
func withPort(t *testing.T, args []string, port int) []string {
	t.Helper()
	out := slices.Clone(args)
	for i, a := range out {
		if v, ok := strings.CutPrefix(a, "--web.listen-address="); ok {
			host, _, err := net.SplitHostPort(v)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = "--web.listen-address=" + net.JoinHostPort(host, strconv.Itoa(port))
			return out
		}
	}
	t.Fatalf("no --web.listen-address=ADDR in %q", args)
	return nil
}

// run starts bin with args, waits for /-/healthy to answer 200 on port,
// returns /metrics, and stops the process (SIGTERM; it must exit 0).
func run(t *testing.T, bin string, args []string, port int) string {
	t.Helper()
	var logs bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("mongoprobe did not exit 15s after SIGTERM")
		}
	}
	t.Cleanup(func() { _ = stop() })

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("mongoprobe %q exited before it was healthy: %v\n%s", args, err, logs.String())
		default:
		}
		resp, err := client.Get(base + "/-/healthy")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("mongoprobe %q: /-/healthy not 200 after 30s: %v\n%s", args, err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := stop(); err != nil {
		t.Errorf("mongoprobe %q on SIGTERM: %v\n%s", args, err, logs.String())
	}
	t.Logf("mongoprobe %q: healthy on :%d, stopped", args, port)
	return string(body)
}
