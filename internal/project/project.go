// Package project reads and writes a repository's .ai/project.yaml settings.
package project

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/goccy/go-yaml"

	"github.com/agentkit/agentkit/internal/yamlx"
)

// Config is the schema of .ai/project.yaml.
type Config struct {
	Workflow          Workflow            `yaml:"workflow"`
	Gates             map[string][]string `yaml:"gates"`
	GateTimeout       Duration            `yaml:"gate_timeout,omitempty"`
	MaxWorkers        int                 `yaml:"max_workers"`
	Runtimes          Runtimes            `yaml:"runtimes"`
	IntegrationBranch string              `yaml:"integration_branch"`
	Budget            Budget              `yaml:"budget"`
}

// Workflow says how tasks are reviewed.
type Workflow struct {
	Mode   string `yaml:"mode"`
	Review string `yaml:"review"` // once | ai | off | human
}

// Runtimes chooses the runtime per role and configures each adapter.
type Runtimes struct {
	Default     string        `yaml:"default"`
	Reviewer    string        `yaml:"reviewer"`
	Coordinator string        `yaml:"coordinator"`
	Claude      RuntimeConfig `yaml:"claude,omitempty"`
	Codex       RuntimeConfig `yaml:"codex,omitempty"`
	OpenCode    RuntimeConfig `yaml:"opencode,omitempty"`
	Command     RuntimeConfig `yaml:"command,omitempty"`
	// AllowEnv names environment variables that look secret (KEY, TOKEN,
	// SECRET, PASSWORD) but that the project's agents may see anyway.
	AllowEnv []string `yaml:"allow_env,omitempty"`
	// Grace is how long a timed-out session has between SIGTERM and SIGKILL.
	Grace Duration `yaml:"grace,omitempty"`
	// Timeout is the time limit of one agent session.
	Timeout Duration `yaml:"timeout,omitempty"`
}

// RuntimeConfig configures one adapter.
type RuntimeConfig struct {
	Model       string   `yaml:"model,omitempty"`
	Effort      string   `yaml:"effort,omitempty"`
	MaxSessions int      `yaml:"max_sessions,omitempty"`
	Argv        []string `yaml:"argv,omitempty"`
	MaxTurns    int      `yaml:"max_turns,omitempty"`
}

// Budget caps what one job may spend.
type Budget struct {
	JobTokens int64 `yaml:"job_tokens"`
}

// Reviews are the accepted values of workflow.review.
var Reviews = []string{"once", "ai", "off", "human"}

// RuntimeNames are the adapters a role may name.
var RuntimeNames = []string{"claude", "codex", "opencode", "command"}

// Default returns the settings agentkit init writes.
func Default() Config {
	return Config{
		Workflow:   Workflow{Mode: "feature", Review: "once"},
		Gates:      map[string][]string{"fast": {"go test ./..."}, "full": {"go test ./..."}},
		MaxWorkers: 2,
		Runtimes: Runtimes{
			Default:     "claude",
			Reviewer:    "codex",
			Coordinator: "claude",
			Claude:      RuntimeConfig{Model: "claude-sonnet-4-5", Effort: "high"},
			Codex:       RuntimeConfig{Model: "gpt-5-codex", Effort: "high"},
			OpenCode:    RuntimeConfig{Model: "local/qwen3-coder", MaxSessions: 1},
		},
		IntegrationBranch: "agentkit/integration",
	}
}

// Runtime returns the configuration of the named adapter.
func (r Runtimes) Runtime(name string) (RuntimeConfig, bool) {
	switch name {
	case "claude":
		return r.Claude, true
	case "codex":
		return r.Codex, true
	case "opencode":
		return r.OpenCode, true
	case "command":
		return r.Command, true
	}
	return RuntimeConfig{}, false
}

// Path returns where a repository keeps its project.yaml.
func Path(repoRoot string) string { return filepath.Join(repoRoot, ".ai", "project.yaml") }

// Load reads and validates a project.yaml; errors name the line and field.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading project settings: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates project.yaml content; name is used in errors.
func Parse(name string, data []byte) (Config, error) {
	var c Config
	if err := yamlx.Decode(data, &c); err != nil {
		return Config{}, fmt.Errorf("%s: %s", name, yamlx.Format(err))
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// Validate checks values that YAML types alone cannot.
func (c *Config) Validate() error {
	if c.Workflow.Review == "" {
		c.Workflow.Review = "once"
	}
	if !contains(Reviews, c.Workflow.Review) {
		return fmt.Errorf("workflow.review is %q; use one of once, ai, off, human", c.Workflow.Review)
	}
	if c.MaxWorkers < 0 {
		return fmt.Errorf("max_workers is %d; use a positive number", c.MaxWorkers)
	}
	if c.MaxWorkers == 0 {
		c.MaxWorkers = 2
	}
	if c.IntegrationBranch == "" {
		c.IntegrationBranch = "agentkit/integration"
	}
	switch c.IntegrationBranch {
	case "main", "master", "trunk", "develop":
		return fmt.Errorf("integration_branch %q is a protected branch; agentkit never writes to it, use agentkit/integration", c.IntegrationBranch)
	}
	for _, role := range []struct{ field, name string }{
		{"runtimes.default", c.Runtimes.Default},
		{"runtimes.reviewer", c.Runtimes.Reviewer},
		{"runtimes.coordinator", c.Runtimes.Coordinator},
	} {
		if role.name != "" && !contains(RuntimeNames, role.name) {
			return fmt.Errorf("%s is %q; use one of claude, codex, opencode, command", role.field, role.name)
		}
	}
	for _, name := range RuntimeNames {
		rc, _ := c.Runtimes.Runtime(name)
		if rc.MaxSessions < 0 {
			return fmt.Errorf("runtimes.%s.max_sessions is %d; use 0 (no cap) or more", name, rc.MaxSessions)
		}
	}
	if c.Budget.JobTokens < 0 {
		return fmt.Errorf("budget.job_tokens is %d; use 0 (no cap) or more", c.Budget.JobTokens)
	}
	return nil
}

// GateLevels returns the defined gate levels, sorted.
func (c Config) GateLevels() []string {
	levels := make([]string, 0, len(c.Gates))
	for k := range c.Gates {
		levels = append(levels, k)
	}
	sort.Strings(levels)
	return levels
}

// Marshal renders the settings as YAML.
func (c Config) Marshal() ([]byte, error) {
	return yaml.MarshalWithOptions(c, yaml.IndentSequence(true))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
