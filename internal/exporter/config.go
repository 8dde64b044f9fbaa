package exporter

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Setting is one key of a module as the file wrote it: a long flag name
// of `wirespeed run` and its value as the flag would take it on the
// command line (a YAML list is joined with commas, as --rr-sizes 64,1K).
type Setting struct {
	Key   string
	Value string
	Line  int // in the file, for messages
}

// KeyError is a builder's refusal of one setting: the key it names and
// why. Parse adds the module and the line.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return fmt.Sprintf("key %q: %v", e.Key, e.Err) }
func (e *KeyError) Unwrap() error { return e.Err }

// Builder turns a module's settings into its plan, exactly as `wirespeed
// run` turns its flags into a test. The CLI supplies it, so the exporter
// and run cannot read a key differently. It returns a *KeyError when one
// setting is what is wrong.
type Builder func(settings []Setting) (Plan, error)

// Module is one named test of the configuration.
type Module struct {
	Name     string
	Settings []Setting
	Plan     Plan
}

// YAML is the module's keys as the file gave them (a list joined with
// commas, as the flag takes it), for the debug answer's "Module
// configuration" section; "{}" for a module of run's defaults.
func (m *Module) YAML() []byte {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range m.Settings {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Key}, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Value})
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return []byte(fmt.Sprintf("# %v\n", err))
	}
	return b
}

// Config is the exporter's configuration file: its modules by name.
type Config struct {
	Modules map[string]*Module
}

// Names returns the module names in order.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Modules))
	for n := range c.Modules {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// maxConfigBytes bounds the file read: a configuration is a page of
// modules, and a reload must not take the exporter's memory.
const maxConfigBytes = 1 << 20

var moduleName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// Load reads and checks the configuration file at path. Every module is
// built, so a mistake is found at start or reload, not at the first probe.
func Load(path string, build Builder) (*Config, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if fi.Size() > maxConfigBytes {
		return nil, fmt.Errorf("config %s: %d bytes, more than the %d a configuration may have", path, fi.Size(), maxConfigBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data, build)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads a configuration:
//
//	modules:
//	  tcp_10s:
//	    test: TCP_STREAM
//	    length: 10s
//	  fq_250m:
//	    fq-rate: 250M
//
// Each module's keys are `wirespeed run`'s long flag names. Errors name
// the line, the module and the key.
func Parse(data []byte, build Builder) (*Config, error) {
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d a configuration may have", len(data), maxConfigBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("want a mapping with a modules: key at the top (see docs/exporter.md)")
	}
	top := doc.Content[0]
	var modules *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "modules" {
			return nil, fmt.Errorf("line %d: unknown top-level key %q: the file has modules: only", k.Line, k.Value)
		}
		modules = v
	}
	if modules == nil || modules.Kind != yaml.MappingNode || len(modules.Content) == 0 {
		return nil, errors.New("no modules: write modules: with at least one named module under it")
	}
	c := &Config{Modules: map[string]*Module{}}
	for i := 0; i+1 < len(modules.Content); i += 2 {
		k, v := modules.Content[i], modules.Content[i+1]
		name := k.Value
		if !moduleName.MatchString(name) {
			return nil, fmt.Errorf("line %d: module name %q: letters, digits, '_', '.' and '-' only, at most 64, as it goes in a URL and a label", k.Line, name)
		}
		if _, dup := c.Modules[name]; dup {
			return nil, fmt.Errorf("line %d: module %q is defined twice", k.Line, name)
		}
		m, err := parseModule(name, v, build)
		if err != nil {
			return nil, err
		}
		c.Modules[name] = m
	}
	return c, nil
}

func parseModule(name string, n *yaml.Node, build Builder) (*Module, error) {
	m := &Module{Name: name}
	switch {
	case n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == ""):
		// An empty module: run's defaults.
	case n.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("line %d: module %q: want a mapping of run's flag names to values", n.Line, name)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: module %q: key %q is given twice", k.Line, name, k.Value)
		}
		seen[k.Value] = true
		val, err := settingValue(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: module %q: key %q: %w", v.Line, name, k.Value, err)
		}
		m.Settings = append(m.Settings, Setting{Key: k.Value, Value: val, Line: k.Line})
	}
	plan, err := build(m.Settings)
	if err != nil {
		if ke, ok := errors.AsType[*KeyError](err); ok {
			line := 0
			for _, s := range m.Settings {
				if s.Key == ke.Key {
					line = s.Line
				}
			}
			if line > 0 {
				return nil, fmt.Errorf("line %d: module %q: %w", line, name, err)
			}
		}
		return nil, fmt.Errorf("module %q: %w", name, err)
	}
	m.Plan = plan
	return m, nil
}

// settingValue is a key's value as a flag's text: a scalar as written, a
// list of scalars joined with commas.
func settingValue(v *yaml.Node) (string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return "", errors.New("has no value")
		}
		return v.Value, nil
	case yaml.SequenceNode:
		parts := make([]string, len(v.Content))
		for i, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return "", errors.New("a list may hold plain values only")
			}
			parts[i] = e.Value
		}
		return strings.Join(parts, ","), nil
	}
	return "", errors.New("want a value such as 10s, 250M or TCP_STREAM, or a list of them")
}
