package runtimes_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentkit/agentkit/runtimes"
)

type resetCase struct {
	Text string `json:"text"`
	Zone string `json:"zone"`
	Now  string `json:"now"`
	Want string `json:"want"`
}

// TestParseReset checks testdata/reset.json under an injected clock (default
// Wednesday 11 June 2025, 10:20 in Berlin) and zone (default Europe/Berlin).
func TestParseReset(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "reset.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []resetCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Text, func(t *testing.T) {
			loc := berlin
			if c.Zone != "" {
				loc = mustZone(c.Zone)
			}
			now := testNow
			if c.Now != "" {
				var err error
				if now, err = time.Parse(time.RFC3339, c.Now); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := runtimes.ParseReset(c.Text, now.In(loc), loc)
			if c.Want == "" {
				if ok {
					t.Fatalf("got %v, want no reset time", got)
				}
				return
			}
			want, err := time.Parse(time.RFC3339, c.Want)
			if err != nil {
				t.Fatal(err)
			}
			if !ok || !got.Equal(want) {
				t.Fatalf("got %v (ok %v), want %v", got, ok, want)
			}
		})
	}
}

// TestParseResetDST: "tomorrow at 3pm" is a wall-clock time, not now+24h.
func TestParseResetDST(t *testing.T) {
	now := time.Date(2025, 3, 29, 16, 0, 0, 0, berlin) // the night before summer time
	got, ok := runtimes.ParseReset("resets 3pm", now, berlin)
	want := time.Date(2025, 3, 30, 15, 0, 0, 0, berlin)
	if !ok || !got.Equal(want) || got.Sub(now) != 22*time.Hour {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func FuzzParseReset(f *testing.F) {
	for _, s := range []string{
		"Your limit will reset at 3pm.", "resets 3pm (Europe/Berlin)", "Resets in 42 minutes.",
		"try again at 9:15 AM.", "resets Monday at 9:00 AM", "resets 2025-06-11T18:30:00Z",
		"limit reached|1749646800", "until 08:00", "in 99999999999999999999 hours", "(Nowhere/Zone) 3pm",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := runtimes.ParseReset(text, testNow, berlin)
		if ok && got.IsZero() {
			t.Fatal("ok with a zero time")
		}
		if !ok && !got.IsZero() {
			t.Fatal("a time without ok")
		}
	})
}
