package runtimes

import (
	"fmt"
	"strings"
)

// codexDialect speaks Codex's non-interactive mode (codex exec --json).
type codexDialect struct{}

func (codexDialect) binary() string { return "codex" }
func (codexDialect) pin() string    { return "AGENTKIT_CODEX_CLI" }

// args builds, per RUNTIMES.md:
//
//	codex exec [resume <session>] --json -c sandbox_mode="workspace-write"|"read-only"
//	           -c approval_policy="never" [--cd <worktree>] --model <m>
//	           -c model_reasoning_effort="<e>" -
//
// --cd only when not resuming; the final "-" reads the prompt from stdin.
func (codexDialect) args(req Request) []string {
	a := []string{"exec"}
	if req.Resume != "" {
		a = append(a, "resume", req.Resume)
	}
	sandbox := "workspace-write"
	if req.Role == RoleReadOnly {
		sandbox = "read-only"
	}
	a = append(a, "--json", "-c", fmt.Sprintf("sandbox_mode=%q", sandbox), "-c", `approval_policy="never"`)
	if req.Resume == "" && req.Dir != "" {
		a = append(a, "--cd", req.Dir)
	}
	if req.Model != "" {
		a = append(a, "--model", req.Model)
	}
	if req.Effort != "" {
		a = append(a, "-c", fmt.Sprintf("model_reasoning_effort=%q", req.Effort))
	}
	return append(a, "-")
}

func (codexDialect) newStream() stream { return &codexStream{} }

// codexEvent is the union of the JSONL event fields agentkit reads, in the
// current shape (type) and the older one (msg.type).
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Item     *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Msg *struct {
		Type             string `json:"type"`
		Message          string `json:"message"`
		SessionID        string `json:"session_id"`
		LastAgentMessage string `json:"last_agent_message"`
	} `json:"msg"`
}

// codexStream gathers a Codex session from its JSONL events.
type codexStream struct{ res streamResult }

func (s *codexStream) line(text string) bool {
	var ev codexEvent
	if !decodeEvent(text, &ev) {
		return false
	}
	switch {
	case ev.Type != "":
		s.event(ev)
	case ev.Msg != nil && ev.Msg.Type != "":
		s.legacy(ev)
	default:
		return false
	}
	return true
}

func (s *codexStream) event(ev codexEvent) {
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" {
			s.res.sessionID = ev.ThreadID
		}
	case "item.completed":
		if ev.Item != nil && ev.Item.Type == "agent_message" {
			s.res.finalText = ev.Item.Text
		}
	case "turn.completed":
		if u := ev.Usage; u != nil {
			s.res.usage = s.res.usage.Add(Usage{Input: u.InputTokens, Output: u.OutputTokens, Cached: u.CachedInputTokens})
		}
	case "turn.failed":
		s.res.failed = true
		if ev.Error != nil {
			s.addError(ev.Error.Message)
		}
	case "error":
		s.res.failed = true
		s.addError(ev.Message)
		if ev.Error != nil {
			s.addError(ev.Error.Message)
		}
	}
}

// legacy reads the older {"id":..,"msg":{"type":..}} events.
func (s *codexStream) legacy(ev codexEvent) {
	switch m := ev.Msg; m.Type {
	case "session_configured":
		if m.SessionID != "" {
			s.res.sessionID = m.SessionID
		}
	case "agent_message":
		s.res.finalText = m.Message
	case "task_complete":
		if m.LastAgentMessage != "" {
			s.res.finalText = m.LastAgentMessage
		}
	case "error", "stream_error":
		s.res.failed = true
		s.addError(m.Message)
	}
}

func (s *codexStream) addError(m string) {
	if m = strings.TrimSpace(m); m != "" {
		s.res.errorText = joinNonEmpty(s.res.errorText, m)
	}
}

func (s *codexStream) result() streamResult { return s.res }
