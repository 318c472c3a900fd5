package runtimes

import (
	"encoding/json"
	"fmt"
	"strings"
)

// opencodeDialect speaks OpenCode's non-interactive mode (opencode run --format json).
type opencodeDialect struct{}

func (opencodeDialect) binary() string { return "opencode" }
func (opencodeDialect) pin() string    { return "AGENTKIT_OPENCODE_CLI" }

// args builds, per RUNTIMES.md:
//
//	opencode run --format json --model <provider>/<model> [--session <id>]
//
// and, for read-only roles (RUNTIMES.md is silent), OpenCode's built-in
// read-only agent: --agent plan.
func (opencodeDialect) args(req Request) []string {
	a := []string{"run", "--format", "json"}
	if req.Model != "" {
		a = append(a, "--model", req.Model)
	}
	if req.Resume != "" {
		a = append(a, "--session", req.Resume)
	}
	if req.Role == RoleReadOnly {
		a = append(a, "--agent", "plan")
	}
	return a
}

func (opencodeDialect) newStream() stream { return &opencodeStream{} }

// opencodeEvent is the union of the JSON event fields agentkit reads.
type opencodeEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      *struct {
		Type      string  `json:"type"`
		Text      string  `json:"text"`
		SessionID string  `json:"sessionID"`
		MessageID string  `json:"messageID"`
		Cost      float64 `json:"cost"`
		Tokens    *struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
	} `json:"part"`
	Error json.RawMessage `json:"error"`
}

// opencodeStream gathers an OpenCode session from its JSON events.
type opencodeStream struct {
	res     streamResult
	lastMsg string   // the message id of the last text part
	texts   []string // the text parts of that message
}

func (s *opencodeStream) line(text string) bool {
	var ev opencodeEvent
	if !decodeEvent(text, &ev) || ev.Type == "" {
		return false
	}
	if s.res.sessionID == "" {
		s.res.sessionID = ev.SessionID
		if s.res.sessionID == "" && ev.Part != nil {
			s.res.sessionID = ev.Part.SessionID
		}
	}
	switch ev.Type {
	case "text":
		if ev.Part == nil || ev.Part.Text == "" {
			break
		}
		if ev.Part.MessageID != s.lastMsg || ev.Part.MessageID == "" {
			s.texts = nil
		}
		s.lastMsg = ev.Part.MessageID
		s.texts = append(s.texts, ev.Part.Text)
		s.res.finalText = strings.Join(s.texts, "\n")
	case "step_finish":
		if ev.Part == nil {
			break
		}
		s.res.cost += ev.Part.Cost
		if t := ev.Part.Tokens; t != nil {
			s.res.usage = s.res.usage.Add(Usage{
				Input:  t.Input + t.Cache.Read + t.Cache.Write,
				Output: t.Output + t.Reasoning,
				Cached: t.Cache.Read,
			})
		}
	case "error", "session.error":
		s.res.failed = true
		if m := opencodeError(ev.Error); m != "" {
			s.res.errorText = joinNonEmpty(s.res.errorText, m)
		}
	}
	return true
}

// opencodeError renders an error object such as
// {"name":"APIError","data":{"message":"...","statusCode":429}} as one line.
func opencodeError(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Data    struct {
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	msg := firstNonEmpty(e.Data.Message, e.Message)
	if e.Data.StatusCode != 0 {
		msg = fmt.Sprintf("%d %s", e.Data.StatusCode, msg)
	}
	return strings.TrimSpace(strings.TrimSpace(e.Name + ": " + msg))
}

func (s *opencodeStream) result() streamResult { return s.res }

// joinLabel returns "label: msg", or whichever of the two is not blank.
func joinLabel(label, msg string) string {
	label, msg = strings.TrimSpace(label), strings.TrimSpace(msg)
	if label != "" && msg != "" {
		return label + ": " + msg
	}
	return label + msg
}
