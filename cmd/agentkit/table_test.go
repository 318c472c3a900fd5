package main

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	var tb table
	tb.add("CODE", "SUMMARY")
	tb.add("BCDFGH", "gate failed")
	tb.add("XZ", "héllo wörld")
	var b strings.Builder
	if err := tb.write(&b); err != nil {
		t.Fatal(err)
	}
	want := "CODE    SUMMARY\nBCDFGH  gate failed\nXZ      héllo wörld\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}
