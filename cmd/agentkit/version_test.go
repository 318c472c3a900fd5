package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionString(func() (*debug.BuildInfo, bool) { return info, true })
	if got != "agentkit v0.3.0 revision 0123456789ab (modified), go1.26.8" {
		t.Fatalf("%q", got)
	}
	got = versionString(func() (*debug.BuildInfo, bool) { return nil, false })
	if !strings.Contains(got, "(devel)") || !strings.Contains(got, "revision unknown") {
		t.Fatalf("%q", got)
	}
}
