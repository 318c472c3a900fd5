package supervisor

import (
	"fmt"
	"strings"

	"github.com/agentkit/agentkit/internal/project"
)

// maxDiffChars caps the diff a reviewer is shown in its brief.
const maxDiffChars = 60000

// builderProtocol tells a builder how to report (DESIGN.md, builder protocol).
const builderProtocol = `# How to report
End your final message with one line that holds only this JSON object:
{"agentkit": {"status": "done"}}
If this machine lacks something you need (a tool, a service, credentials), end instead with
{"agentkit": {"status": "setup_failed", "reason": "<what is missing, in one line>"}}
If the task cannot be done without changing files outside the paths you own, end instead with
{"agentkit": {"status": "needs_files", "reason": "<why>", "paths": ["<the paths you need>"]}}
You need not commit: agentkit commits every change you leave in this work tree.`

// reviewerProtocol tells a reviewer how to give its verdict.
const reviewerProtocol = `# How to report
You review only; do not change files. End your final message with one line that holds only this JSON object:
{"agentkit": {"verdict": "pass"}}
or, when the change must be improved before it is merged,
{"agentkit": {"verdict": "changes", "findings": ["<one concrete finding a line>", "..."]}}`

// writeRequest writes the job's request, its corrections and the owner's decisions.
func writeRequest(b *strings.Builder, jf *JobFile) {
	if jf == nil {
		return
	}
	fmt.Fprintf(b, "# The job %q: what the owner asked for\n%s\n", jf.Name, strings.TrimSpace(jf.Revisions[0].Request))
	if len(jf.Revisions) > 1 {
		b.WriteString("\n# Corrections since (they win over the request where they differ)\n")
		for _, r := range jf.Revisions[1:] {
			fmt.Fprintf(b, "## Revision %d\n%s\n", r.Revision, strings.TrimSpace(r.Request))
		}
	}
	if len(jf.Acceptance) > 0 {
		b.WriteString("\n# The job's acceptance criteria\n")
		for _, a := range jf.Acceptance {
			fmt.Fprintf(b, "- %s\n", a)
		}
	}
	if len(jf.Decisions) > 0 {
		b.WriteString("\n# The owner's decisions\n")
		for _, d := range jf.Decisions {
			fmt.Fprintf(b, "- %s\n", d.Words)
		}
	}
}

// gateCommands describes the gate a task must pass.
func gateCommands(cfg project.Config, level string) string {
	cmds := cfg.Gates[level]
	if level == "" || len(cmds) == 0 {
		return "This task has no gate; the owner's review and the full gate on the merge decide."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "When you finish, agentkit runs the gate %q in this work tree; it must pass and must leave committed files as they are:\n", level)
	for _, c := range cmds {
		fmt.Fprintf(&b, "  $ %s\n", c)
	}
	return strings.TrimRight(b.String(), "\n")
}

// builderBrief is the prompt of a task's first session.
func builderBrief(jf *JobFile, t Task, gate string, depResults map[string]string, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are a builder working on one task of a job in this Git work tree (your working directory).\n\n")
	writeRequest(&b, jf)
	fmt.Fprintf(&b, "\n# Your task: %s", t.ID)
	if t.Title != "" {
		fmt.Fprintf(&b, ": %s", t.Title)
	}
	b.WriteString("\n")
	if t.Description != "" {
		fmt.Fprintf(&b, "%s\n", strings.TrimSpace(t.Description))
	}
	if len(t.Acceptance) > 0 {
		b.WriteString("\nIt is done when:\n")
		for _, a := range t.Acceptance {
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	if len(t.ExpectedPaths.Write) > 0 {
		fmt.Fprintf(&b, "\nPaths you own (change only these): %s\n", strings.Join(t.ExpectedPaths.Write, ", "))
	}
	if len(t.ExpectedPaths.Read) > 0 {
		fmt.Fprintf(&b, "Paths you may read: %s\n", strings.Join(t.ExpectedPaths.Read, ", "))
	}
	if t.Kind.ReadOnly() {
		b.WriteString("\nThis is a research task: read and answer; change no file. Your final message is your result; the tasks that depend on this one are given it.\n")
	}
	for _, d := range t.DependsOn {
		if r := depResults[d]; r != "" {
			fmt.Fprintf(&b, "\n# The result of task %s, which this task depends on\n%s\n", d, r)
		}
	}
	if !t.Kind.ReadOnly() {
		fmt.Fprintf(&b, "\n# How your work is checked\n%s\n", gate)
	}
	if reason != "" {
		fmt.Fprintf(&b, "\n# Before you start\n%s\n", reason)
	}
	b.WriteString("\n" + builderProtocol + "\n")
	return b.String()
}

// resumeBrief is the prompt that continues a builder's own session.
func resumeBrief(t Task, gate, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nContinue your task %s", strings.TrimSpace(reason), t.ID)
	if t.Title != "" {
		fmt.Fprintf(&b, " (%s)", t.Title)
	}
	b.WriteString(" in this work tree.\n")
	if !t.Kind.ReadOnly() {
		fmt.Fprintf(&b, "\n%s\n", gate)
	}
	b.WriteString("\n" + builderProtocol + "\n")
	return b.String()
}

// reviewerBrief asks a reviewer for its verdict on one task's change.
func reviewerBrief(jf *JobFile, t Task, diff string) string {
	var b strings.Builder
	b.WriteString("You are a code reviewer. Review the change below, made for one task of a job, in this work tree (read only).\n\n")
	writeRequest(&b, jf)
	fmt.Fprintf(&b, "\n# The task: %s", t.ID)
	if t.Title != "" {
		fmt.Fprintf(&b, ": %s", t.Title)
	}
	b.WriteString("\n")
	if t.Description != "" {
		fmt.Fprintf(&b, "%s\n", strings.TrimSpace(t.Description))
	}
	for _, a := range t.Acceptance {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	fmt.Fprintf(&b, "\n# The change\n```diff\n%s\n```\n\n", capText(diff, maxDiffChars))
	b.WriteString("Ask for changes only for real defects: wrong behaviour, missed acceptance criteria, broken or missing tests.\n\n")
	b.WriteString(reviewerProtocol + "\n")
	return b.String()
}

// finalReviewBrief asks a reviewer for its verdict on a job's combined change.
func finalReviewBrief(jf *JobFile, diff string, round int) string {
	var b strings.Builder
	b.WriteString("You are a code reviewer. Every task of the job below is merged into this work tree (read only). Review the combined change.\n\n")
	writeRequest(&b, jf)
	if round > 1 {
		fmt.Fprintf(&b, "\nThis is review round %d: earlier findings were fixed by follow-up tasks.\n", round)
	}
	fmt.Fprintf(&b, "\n# The combined change\n```diff\n%s\n```\n\n", capText(diff, maxDiffChars))
	b.WriteString("Ask for changes only for real defects against the request and its acceptance criteria.\n\n")
	b.WriteString(reviewerProtocol + "\n")
	return b.String()
}

// planBrief asks the coordinator for the job's tasks.
func planBrief(jf *JobFile, cfg project.Config, files []string, existing []Task, states map[string]TaskState, words, lastError string) string {
	var b strings.Builder
	b.WriteString("You are the coordinator of a coding job. Read the repository (your working directory; read only) and plan the job as tasks that builders carry out, each in its own Git work tree.\n\n")
	writeRequest(&b, jf)
	if words != "" {
		fmt.Fprintf(&b, "\n# The owner's words for this plan\n%s\n", words)
	}
	if lastError != "" {
		fmt.Fprintf(&b, "\n# Your previous plan was refused\n%s\nFix it.\n", lastError)
	}
	b.WriteString("\n# The repository's files\n")
	const maxFiles = 400
	for i, f := range files {
		if i == maxFiles {
			fmt.Fprintf(&b, "... and %d more\n", len(files)-maxFiles)
			break
		}
		fmt.Fprintf(&b, "%s\n", f)
	}
	b.WriteString("\n# Gates (gate_level names one)\n")
	for _, l := range cfg.GateLevels() {
		fmt.Fprintf(&b, "- %s: %s\n", l, strings.Join(cfg.Gates[l], "; "))
	}
	if len(existing) > 0 {
		b.WriteString("\n# The job's current tasks (keep the ids of merged ones; they are not run again)\n")
		for _, t := range existing {
			fmt.Fprintf(&b, "- %s (%s)", t.ID, states[t.ID])
			if t.Title != "" {
				fmt.Fprintf(&b, ": %s", t.Title)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, `
# What to answer
Put the plan in your final message as one fenced yaml block:
%[1]syaml
tasks:
  - id: short-id                 # [a-z0-9][a-z0-9_-]*, unique
    job_id: %[2]s
    title: One line
    description: What to do, concretely.
    kind: SAFE_PARALLEL          # %[3]s
    expected_paths: {read: [...], write: [...]}   # relative to the repository root
    depends_on: []               # ids of tasks of this job that must be merged first
    gate_level: %[4]s
    acceptance: [Checkable statements.]
%[1]s
Prefer small tasks that own separate files, so they can run in parallel.
`, "```", jf.Name, kindList(), firstLevel(cfg))
	return b.String()
}

func firstLevel(cfg project.Config) string {
	if _, ok := cfg.Gates["fast"]; ok {
		return "fast"
	}
	if ls := cfg.GateLevels(); len(ls) > 0 {
		return ls[0]
	}
	return ""
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n... (%d more characters cut)", len(s)-n)
}
