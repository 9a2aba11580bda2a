package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
	"github.com/mongoscope/mongoscope/driver"
)

// Example is a commented configuration file.
const Example = `# Defaults for every cluster (each may be overridden per cluster).
interval: 5s               # time between two rounds of probes
timeouts:                  # each probe's timeout (Go durations)
  ping: 1s
  read: 2s
  write: 5s
canary_database: mongoprobe
canary_collection: canary
canary_keys: 8             # documents the write probe rewrites in turn (1..1000)
read_preferences: [primary]
write_concern: majority    # or a number of members (not 0), or a tag set name
scheduled: true            # false: probed only on demand, by /probe?target=

clusters:
  - name: prod
    uri: mongodb://probe:secret@db1:27017,db2:27017,db3:27017/?replicaSet=rs0
    read_preferences:
      - primary
      - secondaryPreferred
      - name: analytics
        mode: secondary
        tags: [{use: analytics}, {}]
        max_staleness: 120s
  - name: staging
    uri: mongodb://staging:27017
    interval: 30s
    write_concern: 1
    scheduled: false
`

// settingsYAML are the settings a cluster may override. Each value is a
// node so that it is checked with its path and line; the keys are
// checked by the decoder (KnownFields).
type settingsYAML struct {
	Interval         node          `yaml:"interval"`
	Timeouts         *timeoutsYAML `yaml:"timeouts"`
	CanaryDatabase   node          `yaml:"canary_database"`
	CanaryCollection node          `yaml:"canary_collection"`
	CanaryKeys       node          `yaml:"canary_keys"`
	ReadPreferences  node          `yaml:"read_preferences"`
	WriteConcern     node          `yaml:"write_concern"`
	Scheduled        node          `yaml:"scheduled"`
}

// node keeps a value's node (a *yaml.Node field is not decoded as one
// inside an inline struct).
type node struct{ n *yaml.Node }

func (v *node) UnmarshalYAML(n *yaml.Node) error { v.n = n; return nil }

type timeoutsYAML struct {
	Ping  node `yaml:"ping"`
	Read  node `yaml:"read"`
	Write node `yaml:"write"`
}

type clusterYAML struct {
	Name         node `yaml:"name"`
	URI          node `yaml:"uri"`
	settingsYAML `yaml:",inline"`
}

type fileYAML struct {
	settingsYAML `yaml:",inline"`
	Clusters     []clusterYAML `yaml:"clusters"`
}

// yamlValueRE matches the values the YAML parser quotes in its messages
// (cannot unmarshal !!str `mongodb://...`), which may be secrets.
var (
	yamlValueRE   = regexp.MustCompile("`[^`]*`")
	yamlLineRE    = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlUnknownRE = regexp.MustCompile(`field (\S+) not found in type \S+`)
)

func parseFile(file string, data []byte) ([]probe.Settings, []string, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f fileYAML
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, &Error{Setting: "clusters", File: file, Err: errors.New("the file is empty: list the clusters under clusters:")}
		}
		return nil, nil, yamlError(file, data, err)
	}
	p := &fileParser{file: file}
	global := defaultSettings("")
	if err := p.apply(&global, "", &f.settingsYAML); err != nil {
		return nil, nil, err
	}
	if len(f.Clusters) == 0 {
		return nil, nil, &Error{Setting: "clusters", File: file, Err: errors.New("no cluster is listed")}
	}
	var out []probe.Settings
	seen := map[string]int{}
	for i, c := range f.Clusters {
		path := fmt.Sprintf("clusters[%d]", i)
		s := global
		name, err := p.str(path+".name", c.Name.n, true)
		if err != nil {
			return nil, nil, err
		}
		if prev, dup := seen[name]; dup {
			return nil, nil, p.err(path+".name", c.Name.n, "the name %s is already that of clusters[%d]", quoteShort(name), prev)
		}
		seen[name] = i
		s.Name = name
		if c.URI.n == nil {
			return nil, nil, &Error{Setting: path + ".uri", File: file, Line: c.Name.n.Line, Err: errors.New("missing: each cluster needs a uri")}
		}
		if c.URI.n.Kind != yaml.ScalarNode || c.URI.n.Tag != "!!str" || c.URI.n.Value == "" {
			return nil, nil, p.err(path+".uri", c.URI.n, "must be a mongodb:// or mongodb+srv:// connection string")
		}
		opts, err := clientOptions(c.URI.n.Value)
		if err != nil {
			return nil, nil, &Error{Setting: path + ".uri", File: file, Line: c.URI.n.Line, Err: err}
		}
		s.Client = opts
		if err := p.apply(&s, path+".", &c.settingsYAML); err != nil {
			return nil, nil, err
		}
		for _, t := range []struct {
			name string
			d    time.Duration
		}{{"ping", s.PingTimeout}, {"read", s.ReadTimeout}, {"write", s.WriteTimeout}} {
			if s.Scheduled && t.d > s.Interval {
				p.warnings = append(p.warnings, fmt.Sprintf("cluster %s: the %s timeout (%v) is longer than the interval (%v): a slow round delays the next", quoteShort(name), t.name, t.d, s.Interval))
			}
		}
		out = append(out, s)
	}
	return out, p.warnings, nil
}

// yamlError turns the YAML parser's error into an *Error, without the
// values it quotes.
func yamlError(file string, data []byte, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	msg := yamlValueRE.ReplaceAllString(msgs[0], "a value")
	e := &Error{Setting: "--config.file", File: file}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if m := yamlUnknownRE.FindStringSubmatch(msg); m != nil {
		msg = "unknown key " + strconv.Quote(m[1])
		e.Setting = m[1]
		var root yaml.Node
		if yaml.Unmarshal(data, &root) == nil {
			if path := keyPath(&root, "", m[1], e.Line); path != "" {
				e.Setting = path
			}
		}
	}
	if m := yamlTypeErrRE.FindStringSubmatch(msg); m != nil {
		if name, ok := yamlTypeNames[m[1]]; ok {
			msg = "must be " + name
		}
		var root yaml.Node
		if yaml.Unmarshal(data, &root) == nil {
			if path := keyPath(&root, "", "", e.Line); path != "" {
				e.Setting = path
			}
		}
	}
	e.Err = errors.New(msg)
	return e
}

var (
	yamlTypeErrRE = regexp.MustCompile(`^cannot unmarshal .* into (\S+)$`)
	yamlTypeNames = map[string]string{
		"config.fileYAML":      "a mapping of settings and clusters",
		"[]config.clusterYAML": "a list of clusters",
		"config.clusterYAML":   "a cluster (a mapping with name, uri, ...)",
		"config.timeoutsYAML":  "a mapping of ping, read and write timeouts",
	}
)

// keyPath returns the path (clusters[1].timeouts.pong) of the mapping key
// named key on line, "" when none is; with key "", of the first key whose
// value is on line.
func keyPath(n *yaml.Node, prefix, key string, line int) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := keyPath(c, prefix, key, line); p != "" {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p := keyPath(c, fmt.Sprintf("%s[%d]", prefix, i), key, line); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if prefix != "" {
				path = prefix + "." + k.Value
			}
			if k.Value == key && k.Line == line || key == "" && v.Line == line && v.Kind == yaml.ScalarNode {
				return path
			}
			if p := keyPath(v, path, key, line); p != "" {
				return p
			}
		}
	}
	return ""
}

type fileParser struct {
	file     string
	warnings []string
}

func (p *fileParser) err(path string, n *yaml.Node, format string, args ...any) *Error {
	e := &Error{Setting: path, File: p.file, Err: fmt.Errorf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	return e
}

// apply sets on s the settings y gives; prefix is the YAML path's prefix.
func (p *fileParser) apply(s *probe.Settings, prefix string, y *settingsYAML) error {
	var err error
	if y.Interval.n != nil {
		if s.Interval, err = p.duration(prefix+"interval", y.Interval.n); err != nil {
			return err
		}
	}
	if t := y.Timeouts; t != nil {
		for _, x := range []struct {
			key string
			n   *yaml.Node
			d   *time.Duration
		}{{"ping", t.Ping.n, &s.PingTimeout}, {"read", t.Read.n, &s.ReadTimeout}, {"write", t.Write.n, &s.WriteTimeout}} {
			if x.n == nil {
				continue
			}
			if *x.d, err = p.duration(prefix+"timeouts."+x.key, x.n); err != nil {
				return err
			}
		}
	}
	if y.CanaryDatabase.n != nil {
		if s.Database, err = p.str(prefix+"canary_database", y.CanaryDatabase.n, true); err != nil {
			return err
		}
		if strings.ContainsAny(s.Database, "/\\. \"$") {
			return p.err(prefix+"canary_database", y.CanaryDatabase.n, "a database name cannot contain /\\. \"$")
		}
	}
	if y.CanaryCollection.n != nil {
		if s.Collection, err = p.str(prefix+"canary_collection", y.CanaryCollection.n, true); err != nil {
			return err
		}
		if strings.HasPrefix(s.Collection, "system.") || strings.Contains(s.Collection, "$") {
			return p.err(prefix+"canary_collection", y.CanaryCollection.n, "a canary collection cannot be a system collection nor contain $")
		}
	}
	if n := y.CanaryKeys.n; n != nil {
		k, convErr := strconv.Atoi(n.Value)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || convErr != nil || k < 1 || k > MaxCanaryKeys {
			return p.err(prefix+"canary_keys", n, "must be a whole number from 1 to %d", MaxCanaryKeys)
		}
		s.CanaryKeys = k
	}
	if y.ReadPreferences.n != nil {
		if s.ReadPreferences, err = p.readPreferences(prefix+"read_preferences", y.ReadPreferences.n); err != nil {
			return err
		}
	}
	if y.WriteConcern.n != nil {
		if s.WriteConcern, err = p.writeConcern(prefix+"write_concern", y.WriteConcern.n); err != nil {
			return err
		}
	}
	if n := y.Scheduled.n; n != nil {
		b, convErr := strconv.ParseBool(n.Value)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || convErr != nil {
			return p.err(prefix+"scheduled", n, "must be true or false")
		}
		s.Scheduled = b
	}
	return nil
}

func (p *fileParser) str(path string, n *yaml.Node, required bool) (string, error) {
	if n == nil {
		if required {
			return "", &Error{Setting: path, File: p.file, Err: errors.New("missing")}
		}
		return "", nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", p.err(path, n, "must be a string")
	}
	if required && strings.TrimSpace(n.Value) == "" {
		return "", p.err(path, n, "must not be empty")
	}
	return n.Value, nil
}

// duration reads a positive Go duration ("1s", "1500ms").
func (p *fileParser) duration(path string, n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, p.err(path, n, "must be a duration such as 5s or 1500ms")
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		if _, nerr := strconv.ParseFloat(n.Value, 64); nerr == nil {
			return 0, p.err(path, n, "a duration needs a unit: 5s, 1500ms, 1m")
		}
		return 0, p.err(path, n, "must be a duration such as 5s or 1500ms")
	}
	if d <= 0 {
		return 0, p.err(path, n, "must be positive, not %v", d)
	}
	return d, nil
}

var readModes = []string{"primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest"}

func readMode(s string) (string, bool) {
	for _, m := range readModes {
		if strings.EqualFold(s, m) {
			return m, true
		}
	}
	return "", false
}

func (p *fileParser) readPreferences(path string, n *yaml.Node) ([]probe.ReadPreference, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.err(path, n, "must be a non-empty list of modes (%s) or of {name, mode, tags, max_staleness}", strings.Join(readModes, ", "))
	}
	var out []probe.ReadPreference
	names := map[string]int{}
	for i, item := range n.Content {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		var rp probe.ReadPreference
		switch item.Kind {
		case yaml.ScalarNode:
			m, ok := readMode(item.Value)
			if !ok {
				return nil, p.err(ipath, item, "%s is not a read preference mode: use one of %s", quoteShort(item.Value), strings.Join(readModes, ", "))
			}
			rp = probe.ReadPreference{Name: m, Pref: driver.ReadPreference{Mode: m}}
		case yaml.MappingNode:
			var err error
			if rp, err = p.readPreferenceObject(ipath, item); err != nil {
				return nil, err
			}
		default:
			return nil, p.err(ipath, item, "must be a mode or a {name, mode, tags, max_staleness} object")
		}
		if prev, dup := names[rp.Name]; dup {
			return nil, p.err(ipath, item, "the name %s is already that of %s[%d]: give each read preference its own name", quoteShort(rp.Name), path, prev)
		}
		names[rp.Name] = i
		out = append(out, rp)
	}
	return out, nil
}

func (p *fileParser) readPreferenceObject(path string, n *yaml.Node) (probe.ReadPreference, error) {
	var rp probe.ReadPreference
	var modeNode *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			name, err := p.str(path+".name", v, true)
			if err != nil {
				return rp, err
			}
			rp.Name = name
		case "mode":
			modeNode = v
			m, ok := readMode(v.Value)
			if v.Kind != yaml.ScalarNode || !ok {
				return rp, p.err(path+".mode", v, "%s is not a read preference mode: use one of %s", quoteShort(v.Value), strings.Join(readModes, ", "))
			}
			rp.Pref.Mode = m
		case "tags":
			tags, err := p.tagSets(path+".tags", v)
			if err != nil {
				return rp, err
			}
			rp.Pref.Tags = tags
		case "max_staleness":
			d, err := p.duration(path+".max_staleness", v)
			if err != nil {
				return rp, err
			}
			if d < 90*time.Second || d%time.Second != 0 {
				return rp, p.err(path+".max_staleness", v, "must be a whole number of seconds, at least 90s")
			}
			rp.Pref.MaxStaleness = &d
		default:
			return rp, p.err(path+"."+k.Value, k, "unknown key %s (the keys are name, mode, tags and max_staleness)", quoteShort(k.Value))
		}
	}
	if modeNode == nil {
		return rp, p.err(path+".mode", n, "missing")
	}
	if rp.Pref.Mode == "primary" && (len(rp.Pref.Tags) > 0 || rp.Pref.MaxStaleness != nil) {
		return rp, p.err(path, n, "tags and max_staleness cannot be used with the primary mode")
	}
	if rp.Name == "" {
		rp.Name = rp.Pref.Mode
	}
	return rp, nil
}

// tagSets reads a list of tag sets ([{dc: east}, {}]), or one tag set.
func (p *fileParser) tagSets(path string, n *yaml.Node) ([]map[string]string, error) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []map[string]string
	for i, item := range items {
		if item.Kind != yaml.MappingNode {
			return nil, p.err(fmt.Sprintf("%s[%d]", path, i), item, "must be a tag set such as {dc: east}")
		}
		set := map[string]string{}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			if v.Kind != yaml.ScalarNode {
				return nil, p.err(fmt.Sprintf("%s[%d].%s", path, i, k.Value), v, "a tag's value must be a string")
			}
			set[k.Value] = v.Value
		}
		out = append(out, set)
	}
	return out, nil
}

func (p *fileParser) writeConcern(path string, n *yaml.Node) (*driver.WriteConcern, error) {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return nil, p.err(path, n, "must be majority, a number of members or a tag set name")
	}
	switch n.Tag {
	case "!!int":
		w, err := strconv.Atoi(n.Value)
		if err != nil || w < 0 {
			return nil, p.err(path, n, "must be majority, a number of members or a tag set name")
		}
		if w == 0 {
			return nil, p.err(path, n, "w: 0 is refused: a canary write must be acknowledged")
		}
		return &driver.WriteConcern{W: &driver.W{Nodes: w}}, nil
	case "!!str":
		if n.Value == "majority" {
			return driver.Majority(), nil
		}
		return &driver.WriteConcern{W: &driver.W{Tag: n.Value}}, nil
	}
	return nil, p.err(path, n, "must be majority, a number of members or a tag set name")
}
