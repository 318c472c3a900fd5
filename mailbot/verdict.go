package mailbot

import (
	"fmt"
	"net/mail"
	"time"
)

// Outcome is what the bot does with a message.
type Outcome string

// The outcomes, from doing nothing to acting.
const (
	// OutcomeIgnore: the bot's own mail, an auto-reply, a bounce. Nothing is
	// answered or remembered.
	OutcomeIgnore Outcome = "ignore"
	// OutcomeRefuse: not from the owner, not authenticated, a replay or too
	// old. Nothing is answered (answering would let anyone make the bot send
	// mail).
	OutcomeRefuse Outcome = "refuse"
	// OutcomeRetry: not authenticated only because a DNS lookup failed for
	// now; decide again later and do not mark the message.
	OutcomeRetry Outcome = "retry"
	// OutcomeAnswer: the owner's authenticated reply without a usable
	// command or code; answer with Reason, to the owner's address.
	OutcomeAnswer Outcome = "answer"
	// OutcomeAct: the owner's authenticated reply with a command. The store
	// still checks that the code names an open problem offering the reply
	// (step 6), and answers if not.
	OutcomeAct Outcome = "act"
)

// The checks, in the order they run.
const (
	CheckSize       = "size"
	CheckIgnore     = "ignore"
	CheckFrom       = "from"
	CheckDuplicates = "duplicates"
	CheckDKIM       = "dkim"
	CheckAuthRes    = "authres"
	CheckFresh      = "fresh"
	CheckCommand    = "command"
	CheckCode       = "code"
)

// Results of one check.
const (
	ResultPass = "pass"
	ResultFail = "fail"
	ResultSkip = "skip" // not needed, or not reached
)

// Check is one step of the decision and what a person reads about it.
type Check struct {
	Name   string `json:"check"`
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
}

// Auth says how a message was authenticated.
type Auth struct {
	// Path is "dkim" (the bot's own verification) or "authres" (the
	// receiving provider's Authentication-Results).
	Path string `json:"path"`
	// Method is dkim, spf or dmarc: what passed.
	Method string `json:"method"`
	// Domain is the aligned domain that passed.
	Domain string `json:"domain"`
	// AuthservID is the trusted authserv-id, on the authres path.
	AuthservID string `json:"authserv_id,omitempty"`
	// DateSigned is true when the verified signature covers Date.
	DateSigned bool `json:"date_signed"`
}

// Verdict is the whole decision about one message, JSON-encodable for
// `agentkit phone check --json` and `agentkit phone log`.
type Verdict struct {
	Outcome Outcome `json:"outcome"`
	// Reason is the deciding check's reason (for an answer, what the owner
	// is told).
	Reason string `json:"reason"`
	// StoppedBy names the check that decided a refusal, retry, answer or
	// ignore; "" when the message acts.
	StoppedBy string  `json:"stopped_by,omitempty"`
	Checks    []Check `json:"checks"`

	MessageID    string    `json:"message_id,omitempty"`
	From         string    `json:"from,omitempty"`
	Subject      string    `json:"subject,omitempty"`
	Date         time.Time `json:"date,omitzero"`
	InternalDate time.Time `json:"internal_date,omitzero"`
	DecidedAt    time.Time `json:"decided_at"`

	Auth       *Auth             `json:"auth,omitempty"`
	Signatures []SignatureResult `json:"signatures,omitempty"`
	Command    *Command          `json:"command,omitempty"`

	// Remember is true for an authenticated message: store MessageID and
	// Signature as processed, so neither acts again.
	Remember bool `json:"remember"`
	// Signature is the b= of the aligned DKIM signature that authenticated
	// the message (or, on the authres path, of the aligned signature the
	// provider verified), whitespace removed; "" when there is none.
	Signature string `json:"signature,omitempty"`
}

// Find returns the named check.
func (v *Verdict) Find(name string) (Check, bool) {
	for _, c := range v.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Failed returns the first failed check, if any.
func (v *Verdict) Failed() (Check, bool) {
	for _, c := range v.Checks {
		if c.Result == ResultFail {
			return c, true
		}
	}
	return Check{}, false
}

// Facts are what the decision needs from the state store.
type Facts interface {
	// IsProcessed reports whether a message with this Message-ID (without
	// brackets) was processed before.
	IsProcessed(messageID string) (bool, error)
	// IsProcessedSignature reports whether a DKIM signature with this b=
	// value was processed before.
	IsProcessedSignature(b string) (bool, error)
	// ProblemByMessageID returns the code of the problem whose email had
	// this Message-ID.
	ProblemByMessageID(messageID string) (code string, ok bool, err error)
	// OwnMessageIDDomain is the domain of the Message-IDs the bot writes
	// (one no mail client of the owner uses, like agentkit.example.com);
	// messages carrying it are the bot's own.
	OwnMessageIDDomain() string
}

// Deps are what Decide needs besides the message and the settings.
type Deps struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LookupTXT resolves DKIM keys; nil means NewLookupTXT(cfg.DNSServerAddr()).
	LookupTXT LookupTXTFunc
	// Facts is the state store's view. Nil (as for `agentkit phone check
	// FILE` without a store) means nothing was processed before and no
	// thread is known.
	Facts Facts
}

// Decide runs the checks on one raw message, in order, and returns the
// verdict. internalDate is the server's arrival time (zero when unknown, as
// for `agentkit phone check FILE`); cfg is validated settings (LoadConfig
// validates). Decide keeps no state and may run concurrently. An error means
// the store could not be read: nothing was decided, decide again later.
func Decide(raw []byte, internalDate time.Time, cfg *Config, deps Deps) (Verdict, error) {
	now := time.Now()
	if deps.Now != nil {
		now = deps.Now()
	}
	lookup := deps.LookupTXT
	if lookup == nil {
		lookup = NewLookupTXT(cfg.DNSServerAddr())
	}
	d := &decision{cfg: cfg, facts: deps.Facts, lookup: lookup,
		v: Verdict{InternalDate: internalDate, DecidedAt: now}}
	err := d.run(raw, now)
	d.fillSkipped()
	return d.v, err
}

// allChecks is the order of the checks in every verdict.
var allChecks = []string{CheckSize, CheckIgnore, CheckFrom, CheckDuplicates, CheckDKIM, CheckAuthRes, CheckFresh, CheckCommand, CheckCode}

type decision struct {
	cfg    *Config
	facts  Facts
	lookup LookupTXTFunc
	v      Verdict
}

func (d *decision) pass(name, reason string) { d.add(name, ResultPass, reason) }
func (d *decision) skip(name, reason string) { d.add(name, ResultSkip, reason) }
func (d *decision) add(name, result, reason string) {
	d.v.Checks = append(d.v.Checks, Check{Name: name, Result: result, Reason: reason})
}

// stop records a failed check and the outcome it leads to.
func (d *decision) stop(name string, o Outcome, reason string) {
	d.add(name, ResultFail, reason)
	d.v.Outcome, d.v.Reason, d.v.StoppedBy = o, reason, name
}

// fillSkipped lists the checks not reached, so every verdict shows all.
func (d *decision) fillSkipped() {
	have := map[string]bool{}
	for _, c := range d.v.Checks {
		have[c.Name] = true
	}
	for _, name := range allChecks {
		if !have[name] {
			d.skip(name, "not reached")
		}
	}
	// Keep the defined order.
	ordered := make([]Check, 0, len(d.v.Checks))
	for _, name := range allChecks {
		for _, c := range d.v.Checks {
			if c.Name == name {
				ordered = append(ordered, c)
			}
		}
	}
	d.v.Checks = ordered
}

func (d *decision) run(raw []byte, now time.Time) error {
	cfg := d.cfg
	if int64(len(raw)) > cfg.MaxMessageBytes {
		d.stop(CheckSize, OutcomeRefuse, fmt.Sprintf("the message has %d bytes, over max_message_bytes (%d) in phone.yaml", len(raw), cfg.MaxMessageBytes))
		return nil
	}
	d.pass(CheckSize, fmt.Sprintf("%d bytes", len(raw)))

	m, err := parseMessage(raw)
	if err != nil {
		d.skip(CheckIgnore, "")
		d.stop(CheckFrom, OutcomeRefuse, "the header cannot be read: "+err.Error())
		return nil
	}
	d.v.MessageID = msgID(m.get("Message-Id"))
	d.v.Subject = m.headerText("Subject")
	if t, err := mail.ParseDate(m.get("Date")); err == nil {
		d.v.Date = t.UTC()
	}

	// 1. The bot's own mail, auto-replies and bounces.
	if own := d.ownReason(m); own != "" {
		d.stop(CheckIgnore, OutcomeIgnore, own)
		return nil
	}
	if why := autoReason(m); why != "" {
		d.stop(CheckIgnore, OutcomeIgnore, why)
		return nil
	}
	d.pass(CheckIgnore, "not the bot's own mail, an auto-reply or a bounce")

	// 2. Exactly one From with exactly one address, the owner's.
	from, reason := d.checkFrom(m)
	if from == "" {
		d.stop(CheckFrom, OutcomeRefuse, reason)
		return nil
	}
	d.v.From = from
	d.pass(CheckFrom, reason)
	if reason := d.checkDuplicates(m); reason != "" {
		d.stop(CheckDuplicates, OutcomeRefuse, reason)
		return nil
	}
	d.pass(CheckDuplicates, "From, Sender, Date, Subject, Message-ID, In-Reply-To and References appear at most once; Date and Message-ID are present")
	fromDomain := domainOf(from)

	// The command and code are read now, because the headers they rest on
	// must be signed; they are judged in their own checks below.
	cmd, cmdErr, code, codeErr, used, err := d.readCommand(m)
	if err != nil {
		return err
	}

	// 3. Authenticated: the bot's own DKIM verification, else the provider's.
	need := append([]string{"From", "Date", "Message-ID"}, used...)
	dk := verifyDKIM(raw, m.fields, fromDomain, need, d.lookup)
	d.v.Signatures = dk.results
	authenticated := false
	if dk.pass {
		d.pass(CheckDKIM, dk.reason)
		d.skip(CheckAuthRes, "not needed: the bot's own DKIM verification passed")
		d.v.Auth = &Auth{Path: "dkim", Method: "dkim", Domain: dk.domain, DateSigned: dk.signsDate}
		d.v.Signature = dk.signature
		authenticated = true
	} else {
		d.add(CheckDKIM, ResultFail, dk.reason)
		pr := checkProvider(m.fields, cfg, fromDomain)
		if pr.pass {
			d.pass(CheckAuthRes, pr.reason)
			d.v.Auth = &Auth{Path: "authres", Method: pr.method, Domain: pr.domain, AuthservID: pr.authservID}
			d.v.Signature = providerSignature(m.fields, fromDomain, pr.headerB)
			authenticated = true
		} else if dk.lookupFail {
			d.stop(CheckAuthRes, OutcomeRetry, pr.reason+"; and a DKIM key lookup failed for now, so the message will be checked again")
			return nil
		} else {
			d.stop(CheckAuthRes, OutcomeRefuse, pr.reason)
			return nil
		}
	}
	d.v.Remember = authenticated

	// 4. New and fresh.
	if reason, err := d.checkReplay(dk.alignedBs); err != nil {
		return err
	} else if reason != "" {
		d.stop(CheckFresh, OutcomeRefuse, reason)
		return nil
	}
	if reason, ok := d.checkAge(m, cmd, now); !ok {
		d.stop(CheckFresh, OutcomeRefuse, reason)
		return nil
	} else {
		d.pass(CheckFresh, reason)
	}

	// 5. The command and its code.
	if cmdErr != nil {
		d.stop(CheckCommand, OutcomeAnswer, cmdErr.Error())
		return nil
	}
	d.v.Command = &cmd
	d.pass(CheckCommand, describeCommand(cmd))
	if !cmd.Verb.NeedsCode() {
		d.skip(CheckCode, string(cmd.Verb)+" needs no problem code")
		d.v.Command.Code, d.v.Command.CodeFrom = "", ""
		d.v.Outcome, d.v.Reason = OutcomeAct, describeCommand(cmd)
		return nil
	}
	if codeErr != nil {
		d.stop(CheckCode, OutcomeAnswer, codeErr.Error())
		return nil
	}
	if code.code == "" {
		d.stop(CheckCode, OutcomeAnswer, fmt.Sprintf("%s needs a problem code: reply to the problem's email, or put its six-letter code in the subject or after the command (like: %s BCDFGH)", cmd.Verb, cmd.Verb))
		return nil
	}
	d.v.Command.Code, d.v.Command.CodeFrom = code.code, code.from
	d.pass(CheckCode, fmt.Sprintf("code %s from the %s", code.code, code.from))
	d.v.Outcome, d.v.Reason = OutcomeAct, describeCommand(*d.v.Command)
	return nil
}
