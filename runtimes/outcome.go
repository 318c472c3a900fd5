package runtimes

import (
	"fmt"
)

// outcome turns how the process ended and what it printed into an Outcome.
func (a *adapter) outcome(req Request, res procResult, sess *session) Outcome {
	sr, plain, stderr := sess.snapshot()
	out := Outcome{
		ExitCode:  res.exitCode,
		SessionID: firstNonEmpty(sr.sessionID, req.Session, req.Resume),
		FinalText: sess.red.String(sr.finalText),
		Usage:     sr.usage,
		CostUSD:   sr.cost,
		Duration:  res.end.Sub(res.start),
		Cancelled: res.cancelled,
	}
	if a.name == "command" {
		out.FinalText = plain
	}
	switch {
	case res.timedOut:
		out.Class = ClassTimeout
		if res.cancelled {
			out.Message = "stopped: the caller's deadline passed"
		} else {
			out.Message = fmt.Sprintf("time limit %s reached", req.Timeout)
		}
		return out
	case res.cancelled:
		out.Class = ClassCrash
		out.Message = "stopped: cancelled by the caller"
		return out
	case res.exitCode == 0 && !sr.failed:
		// A clean exit with no error event is a success, whatever the
		// agent's own prose says (it may well discuss rate limits).
		return out
	}
	text := joinNonEmpty(out.FinalText, sess.red.String(sr.errorText), lastBytes(plain, classifyTailBytes))
	if a.name == "command" {
		text = lastBytes(plain, classifyTailBytes)
	}
	now := a.opts.Now()
	out.Class, out.ResetAt, out.Message = classify(a.name, text, lastBytes(stderr, classifyTailBytes), true, now, a.opts.Location)
	if !sr.resetAt.IsZero() && sr.resetAt.After(now) && (out.Class == ClassUsageLimit || out.Class == ClassRateLimit) {
		out.ResetAt = sr.resetAt.In(a.opts.Location)
	}
	if out.Class == ClassCrash {
		out.Message = firstNonEmpty(lastLine(sess.red.String(sr.errorText)), lastLine(stderr), lastLine(plain),
			fmt.Sprintf("exit status %d", res.exitCode))
	}
	out.Message = truncate(out.Message, maxMessage)
	return out
}

// classifyTailBytes is how much of stdout and stderr classification reads.
const classifyTailBytes = 4000

// maxMessage caps Outcome.Message.
const maxMessage = 500
