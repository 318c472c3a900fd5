package runtimes

import (
	"slices"
	"strings"
	"testing"
)

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", maxLine+1000)
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"blank lines kept", "a\n\nb\n", []string{"a", "", "b"}},
		{"empty", "", nil},
		{"line longer than the buffer", strings.Repeat("y", 100<<10) + "\nz\n", []string{strings.Repeat("y", 100<<10), "z"}},
		{"line longer than maxLine is cut", long + "\nafter\n", []string{long[:maxLine], "after"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			readLines(strings.NewReader(c.in), func(l string) { got = append(got, l) })
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %d lines %.80q, want %d lines", len(got), got, len(c.want))
			}
		})
	}
}

func TestTail(t *testing.T) {
	tl := newTail(11) // a line costs its length plus a newline
	for _, l := range []string{"one", "two", "three", "four"} {
		tl.add(l)
	}
	if got := tl.String(); got != "three\nfour" {
		t.Fatalf("tail %q", got)
	}
	tl.add("a very long line indeed")
	if got := tl.String(); got != "ine indeed" {
		t.Fatalf("long line tail %q", got)
	}
	// Many lines: memory stays bounded and the newest lines are kept.
	big := newTail(100)
	for i := range 10000 {
		big.add(strings.Repeat("z", i%7))
	}
	if len(big.lines) > 400 || big.size > 100 {
		t.Fatalf("tail grew: %d lines kept, size %d", len(big.lines), big.size)
	}
	if !strings.HasSuffix(big.String(), strings.Repeat("z", 9999%7)) {
		t.Fatal("newest line lost")
	}
	var empty tail
	empty.limit = 5
	if empty.String() != "" {
		t.Fatal("empty tail")
	}
}

// FuzzStreams feeds any line to every CLI's event reader: none may panic,
// and a line that is not a JSON object is never taken as an event.
func FuzzStreams(f *testing.F) {
	for _, s := range []string{
		`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":0.1,"usage":{"input_tokens":1}}`,
		`{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3}}}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1749646800}}`,
		`{"type":"thread.started","thread_id":"t"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":1,"output_tokens":1}}`,
		`{"id":"0","msg":{"type":"agent_message","message":"legacy"}}`,
		`{"type":"error","error":{"name":"APIError","data":{"message":"x","statusCode":429}}}`,
		`{"type":"error","error":"plain"}`,
		`{"type":"text","sessionID":"s","part":{"messageID":"m","text":"t"}}`,
		`{"type":"step_finish","part":{"cost":1e308,"tokens":{"input":9223372036854775807}}}`,
		`not json`, `{`, `{"type":1}`, `[]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, d := range []dialect{claudeDialect{}, codexDialect{}, opencodeDialect{}, commandDialect{argv: []string{"x"}}} {
			st := d.newStream()
			took := st.line(line)
			st.line(line)
			_ = st.result()
			if trimmed := strings.TrimSpace(line); took && (trimmed == "" || trimmed[0] != '{') {
				t.Fatalf("%T took a non-object line as an event: %q", d, line)
			}
		}
	})
}
