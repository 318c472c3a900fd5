package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/phonesetup"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

type phoneTestOptions struct {
	ios     *ioStreams
	deps    phoneDeps
	Wait    bool
	Timeout time.Duration
	JSON    bool

	// poll is how often a mailbox without IDLE is checked.
	poll time.Duration
	// rand draws the code and the Message-ID; nil is crypto/rand.
	rand io.Reader
	// lookupTXT replaces live DNS for DKIM keys in tests.
	lookupTXT mailbot.LookupTXTFunc
	// sent is called once the test email is accepted (tests reply then).
	sent func(phonesetup.TestMail)
}

func newCmdPhoneTest(ios *ioStreams, runF func(*phoneTestOptions) error) *cobra.Command {
	opts := &phoneTestOptions{ios: ios, deps: defaultPhoneDeps(), poll: 5 * time.Second}
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Email yourself a test with a fresh code; with --wait, check your reply and say whether replies will be obeyed",
		Long: `Send a test email to your address, with a fresh code. Reply to it from your
phone with the word retry. With --wait, agentkit waits for that reply and prints
the verdict the bot would reach on it (From, DKIM, the provider's
Authentication-Results, freshness, the command and the code), then either
"replies from this phone will be obeyed", or exactly why not and which setting
to change. Nothing is acted on. The exit status is 0 only when replies will be
obeyed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Timeout <= 0 {
				return usageError{msg: "--timeout must be more than zero, like 10m"}
			}
			if runF != nil {
				return runF(opts)
			}
			return phoneTestRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait for your reply and check it")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "how long --wait waits for the reply")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "with --wait, print the verdict and the advice as one JSON object")
	return cmd
}

// testResult is what phone test --wait --json prints.
type testResult struct {
	Code      string            `json:"code"`
	MessageID string            `json:"message_id"`
	Verdict   judged            `json:"verdict"`
	Advice    phonesetup.Advice `json:"advice"`
}

func phoneTestRun(ctx context.Context, opts *phoneTestOptions) error {
	ios := opts.ios
	home, err := ios.home()
	if err != nil {
		return err
	}
	cfg, err := loadPhoneConfig(home)
	if err != nil {
		return err
	}
	pw, err := passwordChain(ios, opts.deps, home).Get(secrets.Phone)
	if err != nil {
		return fmt.Errorf("no phone password: %w", err)
	}
	s, db, err := ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	code, err := freshCode(ctx, s, opts.rand)
	if err != nil {
		return err
	}
	progress := ios.Out
	if opts.JSON {
		progress = ios.Err
	}
	v := &phonesetup.Verifier{Resolver: opts.deps.Resolver, Report: func(c phonesetup.Check) {
		if !c.OK {
			printCheck(progress, c)
		}
	}}

	// Open the mailbox first, so a quick reply cannot slip past.
	var inbox *phonesetup.Inbox
	if opts.Wait {
		if inbox, err = v.OpenInbox(ctx, cfg.IMAP, pw, cfg.MaxMessageBytes); err != nil {
			return failed(err)
		}
		defer inbox.Close()
	}
	m, err := phonesetup.NewTestMail(&cfg, code, ios.now(), opts.rand)
	if err != nil {
		return err
	}
	if err := v.Send(ctx, &cfg, pw, m); err != nil {
		return failed(err)
	}
	fmt.Fprintf(progress, "Sent a test email to %s with code %s. Reply to it from your phone with the word: %s\n", m.To, code, phonesetup.TestWord)
	if opts.sent != nil {
		opts.sent(m)
	}
	if !opts.Wait {
		fmt.Fprintln(progress, "Run agentkit phone test --wait to see the checks on your reply here. Otherwise the running service reads your reply: a reply that passes its checks gets an answer (that no problem has this code); no answer means it was refused, and agentkit phone log says why.")
		return nil
	}

	fmt.Fprintf(progress, "Waiting up to %s for your reply...\n", opts.Timeout)
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	reply, err := inbox.Wait(wctx, isReplyTo(m), opts.poll)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("no reply within %s; check that the test email reached %s (and not its spam folder), reply to it, and run agentkit phone test --wait again (or save the reply and run agentkit phone check on it)", opts.Timeout, m.To)
	}
	if err != nil {
		return err
	}

	facts := &testFacts{Facts: mailbot.NewStoreFacts(ctx, db, &cfg), messageID: m.MessageID, code: m.Code}
	verdict, err := mailbot.Decide(reply.Raw, reply.InternalDate, &cfg, mailbot.Deps{Now: ios.now, LookupTXT: opts.lookupTXT, Facts: facts})
	if err != nil {
		return err
	}
	j := judgeTest(verdict, m.Code)
	advice := phonesetup.Advise(reply.Raw, &cfg, verdict)
	// The reply was only a test: flag it as handled, so the service does
	// not answer it later.
	if err := inbox.MarkProcessed(reply.UID, cfg.ProcessedKeyword); err != nil {
		fmt.Fprintf(ios.Err, "agentkit: %v\n", err)
	}

	if opts.JSON {
		if err := writeJSON(ios, testResult{Code: m.Code, MessageID: m.MessageID, Verdict: j, Advice: advice}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(ios.Out, "Your reply arrived. The bot's checks on it:\n")
		writeJudged(ios.Out, j)
		writeStamps(ios.Out, advice)
		fmt.Fprintln(ios.Out)
		for _, l := range advice.Lines {
			fmt.Fprintln(ios.Out, capitalise(l)+".")
		}
	}
	if !advice.Obeyed {
		return errors.New("replies from this phone would not be obeyed yet; change the setting named above and run agentkit phone test --wait again")
	}
	return nil
}

// failed turns a verification failure (already printed) into the error.
func failed(err error) error {
	var f *phonesetup.Failure
	if errors.As(err, &f) {
		return fmt.Errorf("%s %s failed; fix the setting above (agentkit phone setup) and try again", f.Server, f.Step)
	}
	return err
}

// isReplyTo matches the reply to the test email: by its thread, or by the
// code in the subject.
func isReplyTo(m phonesetup.TestMail) func(mail.Header) bool {
	id := "<" + strings.ToLower(m.MessageID) + ">"
	return func(h mail.Header) bool {
		thread := strings.ToLower(h.Get("In-Reply-To") + " " + h.Get("References"))
		return strings.Contains(thread, id) || strings.Contains(strings.ToUpper(h.Get("Subject")), m.Code)
	}
}

// judgeTest is judge for the test reply: its code is the test's, not a
// problem's.
func judgeTest(v mailbot.Verdict, code string) judged {
	j := judged{Verdict: v}
	if v.Outcome != mailbot.OutcomeAct || v.Command == nil {
		return j
	}
	switch {
	case !v.Command.Verb.NeedsCode():
		j.Obeyed = true
	case v.Command.Code == code:
		j.Problem = &mailbot.Check{Name: CheckProblem, Result: mailbot.ResultPass, Reason: "the test's code (for a real problem, it must be open and offer " + string(v.Command.Verb) + ")"}
		j.Obeyed = true
	default:
		j.Problem = &mailbot.Check{Name: CheckProblem, Result: mailbot.ResultFail, Reason: "the code " + v.Command.Code + " is not the test's (" + code + ")"}
	}
	return j
}

// writeStamps lists the Authentication-Results headers found.
func writeStamps(w io.Writer, a phonesetup.Advice) {
	for _, s := range a.Stamps {
		id, trust := s.AuthservID, "not trusted"
		if id == "" {
			id = "(no authserv-id)"
		}
		if s.Trusted {
			trust = "trusted"
		}
		fmt.Fprintf(w, "  found      Authentication-Results: %s (%s): %s\n", id, trust, orDash(s.Results))
	}
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// freshCode draws a code no problem has.
func freshCode(ctx context.Context, s *problems.Store, rnd io.Reader) (problems.Code, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	// Rejection sampling keeps every letter equally likely.
	const limit = 256 - 256%len(problems.Alphabet)
	for range 20 {
		code := make([]byte, 0, problems.CodeLen)
		var b [1]byte
		for len(code) < problems.CodeLen {
			if _, err := io.ReadFull(rnd, b[:]); err != nil {
				return "", fmt.Errorf("drawing a code: %w", err)
			}
			if int(b[0]) < limit {
				code = append(code, problems.Alphabet[int(b[0])%len(problems.Alphabet)])
			}
		}
		if _, err := s.Get(ctx, problems.Code(code)); errors.Is(err, problems.ErrNotFound) {
			return problems.Code(code), nil
		} else if err != nil {
			return "", err
		}
	}
	return "", errors.New("could not draw a code no problem has")
}

// testFacts are the store's facts, plus the test email's thread.
type testFacts struct {
	mailbot.Facts
	messageID, code string
}

func (f *testFacts) ProblemByMessageID(id string) (string, bool, error) {
	if strings.EqualFold(id, f.messageID) {
		return f.code, true, nil
	}
	return f.Facts.ProblemByMessageID(id)
}
