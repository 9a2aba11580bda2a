package stackcheck

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/distribution/reference"
)

// Root returns the repository's root: two levels above this module.
func Root() (string, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		return "", fmt.Errorf("%s does not look like the repository's root: %v", root, err)
	}
	return root, nil
}

// LoadProject loads and validates root/docker-compose.yml with compose-go,
// as `docker compose config` would, in an empty environment so that nothing
// in the caller's shell changes the result.
func LoadProject(ctx context.Context, root string) (*types.Project, error) {
	details := types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		Environment: types.Mapping{},
	}
	return loader.LoadWithContext(ctx, details, func(o *loader.Options) {
		o.SkipValidation = false
		o.SkipConsistencyCheck = false
		o.ResolvePaths = true
	})
}

// Pinned reports why an image reference is not pinned to a version (a tag
// other than latest, or a digest), or "" when it is.
func Pinned(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return fmt.Sprintf("not an image reference: %v", err)
	}
	if _, ok := named.(reference.Digested); ok {
		return ""
	}
	t, ok := named.(reference.Tagged)
	if !ok {
		return "no tag (that is latest)"
	}
	if t.Tag() == "latest" {
		return "tagged latest"
	}
	return ""
}

// HostPath maps a path inside a service's containers to the host path that
// a bind mount of the service puts there (the longest mounted target that
// contains it), or "" when none does.
func HostPath(root string, s types.ServiceConfig, inContainer string) string {
	best, bestLen := "", -1
	for _, v := range s.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		t := filepath.Clean(v.Target)
		if inContainer != t && !strings.HasPrefix(inContainer, t+"/") {
			continue
		}
		if len(t) > bestLen {
			src := v.Source
			if !filepath.IsAbs(src) {
				src = filepath.Join(root, src)
			}
			best, bestLen = filepath.Join(src, strings.TrimPrefix(inContainer, t)), len(t)
		}
	}
	return best
}

// Mounts lists the host paths a project mounts from the repository: bind
// volumes and file-based configs, with the service and what mounts them.
type Mount struct {
	Service, Kind, Source, Target string
}

// Mounts returns every bind mount and file config of the project's services.
func Mounts(p *types.Project) []Mount {
	var out []Mount
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind {
				out = append(out, Mount{name, "bind volume", v.Source, v.Target})
			}
		}
		for _, c := range s.Configs {
			if cfg, ok := p.Configs[c.Source]; ok && cfg.File != "" {
				out = append(out, Mount{name, "config " + c.Source, cfg.File, c.Target})
			}
		}
		for _, c := range s.Secrets {
			if sec, ok := p.Secrets[c.Source]; ok && sec.File != "" {
				out = append(out, Mount{name, "secret " + c.Source, sec.File, c.Target})
			}
		}
	}
	return out
}

// InRepo returns abs's path relative to root, or an error when it lies
// outside the repository.
func InRepo(root, abs string) (string, error) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is outside the repository %s", abs, root)
	}
	return filepath.ToSlash(rel), nil
}

// Tracked reports whether git tracks rel (a file, or a folder with a tracked
// file) in root; ok is false when root is not a git work tree.
func Tracked(root, rel string) (tracked, ok bool) {
	if err := exec.Command("git", "-C", root, "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		return false, false
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "--", rel).Output()
	if err != nil {
		return false, false
	}
	return strings.TrimSpace(string(out)) != "", true
}

// ServiceAddr splits an address such as http://jaeger:4318 or mongoprobe:9417
// into a host and a port (defaulting to the scheme's).
func ServiceAddr(s string) (host string, port int, err error) {
	hostport := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", 0, err
		}
		hostport = u.Host
		if u.Port() == "" {
			switch u.Scheme {
			case "http":
				hostport += ":80"
			case "https":
				hostport += ":443"
			}
		}
	}
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, err
	}
	port, err = strconv.Atoi(p)
	return h, port, err
}

// ListensOn reports whether a service's container port is declared: exposed
// by its ports or expose lists, or (for an image built here) by the
// Dockerfile's EXPOSE, which the caller passes as extra.
func ListensOn(s types.ServiceConfig, port int, extra ...int) bool {
	for _, p := range s.Ports {
		if int(p.Target) == port {
			return true
		}
	}
	for _, e := range s.Expose {
		if e == strconv.Itoa(port) || strings.HasPrefix(e, strconv.Itoa(port)+"/") {
			return true
		}
	}
	for _, e := range extra {
		if e == port {
			return true
		}
	}
	return false
}
