package mailbot

import (
	"strings"
	"testing"
)

func TestHTMLToText(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"paragraphs and breaks", "<p>retry</p><p>a<br>b</p>", "retry\n\na\nb\n"},
		{"entities and nbsp", "<div>hint&nbsp;use &lt;v2&gt; &amp; go</div>", "hint use <v2> & go\n"},
		{"inline elements join words", "<div>Hint: use the <b>v2</b> API</div>", "Hint: use the v2 API\n"},
		{"blockquote becomes quoted lines", "<div>ok</div><blockquote type=\"cite\"><div>old</div><blockquote>older</blockquote></blockquote>", "ok\n> old\n> > older\n"},
		{"gmail quote dropped", `<div>retry</div><div class="gmail_quote"><div>On x wrote:</div><blockquote class="gmail_quote">q</blockquote></div><div>after</div>`, "retry\nafter\n"},
		{"outlook cut at appendonsend", `<div>skip</div><div id="appendonsend"></div><hr><div id="divRplyFwdMsg">From: bot</div><div>old text</div>`, "skip\n"},
		{"hr is a delimiter line", "<div>a</div><hr><div>b</div>", "a\n________________________________\nb\n"},
		{"head, style and script skipped", "<html><head><title>t</title><style>p{}</style></head><body><script>x()</script><p>status</p></body></html>", "status\n"},
		{"pre keeps lines", "<pre>a  b\nc</pre>", "a  b\nc\n"},
		{"list items", "<ul><li>one</li><li>two</li></ul>", "- one\n- two\n"},
	}
	for _, tc := range cases {
		if got := HTMLToText(tc.in); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTrimReplyOwnCases(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"outlook block", "retry\n\n________________________________\nFrom: agentkit <bot@bot.test>\nSent: Tuesday, March 10, 2026 11:50 AM\nTo: Jane\nSubject: x\n\nold", "retry"},
		{"original message", "skip\n\n-----Original Message-----\nFrom: bot\nretry", "skip"},
		{"on wrote wrapped over two lines", "accept\n\nOn Tue, Mar 10, 2026 at 11:50 AM agentkit <\nbot@bot.test> wrote:\n\n> retry", "accept"},
		{"signature", "hint use v2\n-- \nJane", "hint use v2"},
		{"phone lines", "retry\n\nSent from my iPhone", "retry"},
		{"get outlook", "retry\n\nGet Outlook for Android<https://aka.ms/ghei36>", "retry"},
		{"quote only is kept (nothing else was written)", "> retry", "> retry"},
		{"empty", " \n\t\n", ""},
		{"a short line starting From my stays text", "hint From my point of view the cache is stale", "hint From my point of view the cache is stale"},
	}
	for _, tc := range cases {
		if got := TrimReply(tc.in); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := TrimReply("hint line one\nFrom my laptop\n"); strings.Contains(got, "laptop") {
		t.Errorf("a short From my ... line was kept: %q", got)
	}
}
