package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDemoFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		keep    bool
		wantErr string
	}{
		{nil, false, ""},
		{[]string{"--keep"}, true, ""},
		{[]string{"extra"}, false, `unknown command "extra"`},
		{[]string{"--keep=maybe"}, false, "invalid argument"},
	} {
		var got *demoOptions
		var errb bytes.Buffer
		cmd := newCmdDemo(&ioStreams{Out: &bytes.Buffer{}, Err: &errb}, func(o *demoOptions) error { got = o; return nil })
		cmd.SetArgs(c.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&errb)
		err := cmd.Execute()
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || got == nil || got.Keep != c.keep {
			t.Errorf("%v: err %v, options %+v", c.args, err, got)
		}
	}
}

func TestDemoIsACommand(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"demo", "--help"}, strings.NewReader(""), &out, &out); code != 0 || !strings.Contains(out.String(), "--keep") {
		t.Fatalf("agentkit demo --help: exit %d\n%s", code, out.String())
	}
}
