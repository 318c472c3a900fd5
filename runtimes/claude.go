package runtimes

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// claudeDialect speaks Claude Code's headless mode (claude -p, stream-json).
type claudeDialect struct{}

func (claudeDialect) binary() string { return "claude" }
func (claudeDialect) pin() string    { return "AGENTKIT_CLAUDE_CLI" }

// args builds, per RUNTIMES.md:
//
//	claude -p --model <m> [--effort <e>] [--resume <session>] [--max-turns N]
//	       --permission-mode acceptEdits --output-format stream-json --verbose
//	       [--tools Read,Grep,Glob]   (read-only roles)
func (claudeDialect) args(req Request) []string {
	a := []string{"-p"}
	if req.Model != "" {
		a = append(a, "--model", req.Model)
	}
	if req.Effort != "" {
		a = append(a, "--effort", req.Effort)
	}
	if req.Resume != "" {
		a = append(a, "--resume", req.Resume)
	}
	if req.MaxTurns > 0 {
		a = append(a, "--max-turns", strconv.Itoa(req.MaxTurns))
	}
	a = append(a, "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose")
	if req.Role == RoleReadOnly {
		a = append(a, "--tools", "Read,Grep,Glob")
	}
	return a
}

func (claudeDialect) newStream() stream { return &claudeStream{msgUsage: make(map[string]Usage)} }

// claudeUsage is the usage object of stream-json events.
type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// usage converts to Usage: Claude's input_tokens leaves out cache reads and
// writes, which are input all the same.
func (u claudeUsage) usage() Usage {
	return Usage{
		Input:  u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		Output: u.OutputTokens,
		Cached: u.CacheReadInputTokens,
	}
}

// claudeEvent is the union of the stream-json event fields agentkit reads.
type claudeEvent struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	IsError   bool            `json:"is_error"`
	Result    *string         `json:"result"`
	CostUSD   float64         `json:"total_cost_usd"`
	Usage     *claudeUsage    `json:"usage"`
	Errors    json.RawMessage `json:"errors"`
	Message   *struct {
		ID      string `json:"id"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Usage *claudeUsage `json:"usage"`
	} `json:"message"`
	RateLimit *struct {
		Status   string `json:"status"`
		ResetsAt int64  `json:"resetsAt"`
	} `json:"rate_limit_info"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// claudeStream gathers a Claude session from its stream-json events.
type claudeStream struct {
	res       streamResult
	gotResult bool
	lastText  string           // the last assistant text, for a session without a result event
	msgUsage  map[string]Usage // per assistant message id, for a session without a result event
	msgOrder  []string
}

func (s *claudeStream) line(text string) bool {
	var ev claudeEvent
	if !decodeEvent(text, &ev) || ev.Type == "" {
		return false
	}
	if ev.SessionID != "" && s.res.sessionID == "" {
		s.res.sessionID = ev.SessionID
	}
	switch ev.Type {
	case "assistant":
		if ev.Message == nil {
			break
		}
		var parts []string
		for _, c := range ev.Message.Content {
			if c.Type == "text" && strings.TrimSpace(c.Text) != "" {
				parts = append(parts, c.Text)
			}
		}
		if len(parts) > 0 {
			s.lastText = strings.Join(parts, "\n")
		}
		if ev.Message.Usage != nil && ev.Message.ID != "" {
			if _, seen := s.msgUsage[ev.Message.ID]; !seen {
				s.msgOrder = append(s.msgOrder, ev.Message.ID)
			}
			// Each content block repeats its message's usage: keep the last.
			s.msgUsage[ev.Message.ID] = ev.Message.Usage.usage()
		}
	case "rate_limit_event":
		if ev.RateLimit != nil && ev.RateLimit.Status != "" && ev.RateLimit.Status != "allowed" &&
			ev.RateLimit.Status != "allowed_warning" && ev.RateLimit.ResetsAt > 0 {
			s.res.resetAt = time.Unix(ev.RateLimit.ResetsAt, 0)
		}
	case "result":
		s.gotResult = true
		if ev.SessionID != "" {
			s.res.sessionID = ev.SessionID
		}
		if ev.Result != nil {
			s.res.finalText = *ev.Result
		}
		if ev.IsError || strings.HasPrefix(ev.Subtype, "error") {
			s.res.failed = true
			s.addError(ev.Subtype)
			s.addError(stringList(ev.Errors)...)
		}
		if ev.Usage != nil {
			s.res.usage = ev.Usage.usage()
		}
		s.res.cost = ev.CostUSD
	case "error":
		s.res.failed = true
		if ev.Error != nil {
			s.addError(joinLabel(ev.Error.Type, ev.Error.Message))
		}
	}
	return true
}

func (s *claudeStream) addError(msgs ...string) {
	for _, m := range msgs {
		if m = strings.TrimSpace(m); m != "" {
			s.res.errorText = joinNonEmpty(s.res.errorText, m)
		}
	}
}

func (s *claudeStream) result() streamResult {
	r := s.res
	if !s.gotResult {
		r.finalText = s.lastText
		for _, id := range s.msgOrder {
			r.usage = r.usage.Add(s.msgUsage[id])
		}
	}
	return r
}

// decodeEvent decodes a line that is one JSON object; it reports false for anything else.
func decodeEvent(text string, v any) bool {
	t := strings.TrimSpace(text)
	if len(t) < 2 || t[0] != '{' {
		return false
	}
	return json.Unmarshal([]byte(t), v) == nil
}

// stringList reads a JSON array of strings (or one string); anything else gives nil.
func stringList(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	return nil
}
