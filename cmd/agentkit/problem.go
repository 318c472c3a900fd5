package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/problems"
)

func newCmdProblem(ios *ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "problem",
		Short: "List, show and answer problems",
		Long: `A problem is what agentkit's automatic retries could not fix. Each has a
six-letter code and offers the replies that can fix it: retry, accept, skip,
dismiss, hint <words>, plan <words>. Answer from here or by email.`,
	}
	cmd.AddCommand(newCmdProblemList(ios, nil), newCmdProblemShow(ios, nil), newCmdProblemAct(ios, nil))
	return cmd
}

type problemListOptions struct {
	ios  *ioStreams
	All  bool
	Repo string
	JSON bool
}

func newCmdProblemList(ios *ioStreams, runF func(*problemListOptions) error) *cobra.Command {
	opts := &problemListOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List open problems (--all for every problem)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return problemListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "list answered and closed problems too")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "only this repository's problems")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (an array of problems)")
	return cmd
}

func problemListRun(ctx context.Context, opts *problemListOptions) error {
	s, db, err := opts.ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	list, err := s.List(ctx, problems.Filter{All: opts.All, Repo: opts.Repo})
	if err != nil {
		return err
	}
	if opts.JSON {
		if list == nil {
			list = []*problems.Problem{}
		}
		return writeJSON(opts.ios, list)
	}
	if len(list) == 0 {
		if opts.All {
			fmt.Fprintln(opts.ios.Out, "No problems yet.")
		} else {
			fmt.Fprintln(opts.ios.Out, "No open problems.")
		}
		return nil
	}
	return writeProblemTable(opts.ios, list, opts.ios.now())
}

func writeProblemTable(ios *ioStreams, list []*problems.Problem, now time.Time) error {
	var tw table
	tw.add("CODE", "REPO", "TASK", "KIND", "STATE", "AGE", "SUMMARY")
	for _, p := range list {
		task := p.Task
		if p.Job != "" {
			task = p.Job + "/" + p.Task
		}
		if task == "" {
			task = "-"
		}
		tw.add(string(p.Code), p.Repo, task, string(p.Kind), string(p.State), age(now.Sub(p.CreatedAt)), truncate(p.Summary, 60))
	}
	return tw.write(ios.Out)
}

// age renders a duration the way a person glances at it: 42s, 5m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

type problemShowOptions struct {
	ios  *ioStreams
	Code string
	JSON bool
}

func newCmdProblemShow(ios *ioStreams, runF func(*problemShowOptions) error) *cobra.Command {
	opts := &problemShowOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "show CODE",
		Short: "Show one problem: what happened, its log tail, the replies that fix it",
		Args:  exactArgs(1, "give the problem's code, like: agentkit problem show BCDFGH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Code = args[0]
			if runF != nil {
				return runF(opts)
			}
			return problemShowRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func problemShowRun(ctx context.Context, opts *problemShowOptions) error {
	code, err := problems.ParseCode(opts.Code)
	if err != nil {
		return err
	}
	s, db, err := opts.ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := s.Get(ctx, code)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.ios, p)
	}
	w := opts.ios.Out
	fmt.Fprintf(w, "%s  %s\n", p.Code, p.Summary)
	fmt.Fprintf(w, "repo %s", p.Repo)
	if p.Job != "" {
		fmt.Fprintf(w, ", job %s", p.Job)
	}
	if p.Task != "" {
		fmt.Fprintf(w, ", task %s", p.Task)
	}
	fmt.Fprintf(w, "; %s; %s since %s\n", p.Kind, p.State, p.CreatedAt.Local().Format("2006-01-02 15:04"))
	if p.Detail != "" {
		fmt.Fprintf(w, "\n%s\n", p.Detail)
	}
	if p.LogTail != "" {
		fmt.Fprintf(w, "\nLog tail:\n%s\n", indent(p.LogTail, "  "))
	}
	if d := p.Decision; d != nil {
		fmt.Fprintf(w, "\nAnswered %q by %s through %s at %s.\n", problems.Reply{Verb: d.Reply, Words: d.Words}.String(), d.Who, d.Channel, d.At.Local().Format("2006-01-02 15:04"))
		if d.Applied() {
			fmt.Fprintf(w, "Applied at %s: %s\n", d.AppliedAt.Local().Format("2006-01-02 15:04"), d.Outcome)
		} else {
			fmt.Fprintln(w, "Not applied yet: the supervisor applies it when it runs.")
		}
		return nil
	}
	fmt.Fprintln(w, "\nReply with one of:")
	for _, v := range p.Replies {
		word := string(v)
		if v.TakesWords() {
			word += " <words>"
		}
		fmt.Fprintf(w, "  %-15s %s\n", word, v.Meaning())
	}
	fmt.Fprintf(w, "\nfor example: agentkit problem act %s %s\n", p.Code, example(p.Replies[0]))
	return nil
}

func example(v problems.Verb) string {
	if v.TakesWords() {
		return string(v) + " use the v2 API"
	}
	return string(v)
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

type problemActOptions struct {
	ios   *ioStreams
	Code  string
	Reply string
}

func newCmdProblemAct(ios *ioStreams, runF func(*problemActOptions) error) *cobra.Command {
	opts := &problemActOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "act CODE REPLY [WORDS...]",
		Short: "Answer a problem: retry, accept, skip, dismiss, hint <words>, plan <words>",
		Example: `  agentkit problem act BCDFGH retry
  agentkit problem act BCDFGH hint use the v2 API`,
		Args: minArgs(2, "give the problem's code and a reply, like: agentkit problem act BCDFGH retry"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Code, opts.Reply = args[0], strings.Join(args[1:], " ")
			if runF != nil {
				return runF(opts)
			}
			return problemActRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func problemActRun(ctx context.Context, opts *problemActOptions) error {
	code, err := problems.ParseCode(opts.Code)
	if err != nil {
		return err
	}
	reply, err := problems.ParseReply(opts.Reply)
	if err != nil {
		return err
	}
	s, db, err := opts.ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	d, err := s.Answer(ctx, code, problems.Answer{Reply: reply, Channel: problems.Terminal, Who: opts.ios.who()})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.ios.Out, "Recorded %q for %s (decision %d). The supervisor applies it within a second when it runs.\n", reply.String(), code, d.ID)
	return nil
}

// exactArgs is cobra.ExactArgs with a message that says what to type.
func exactArgs(n int, hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{msg: hint}
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with a message that says what to type.
func minArgs(n int, hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError{msg: hint}
		}
		return nil
	}
}
