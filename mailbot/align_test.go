package mailbot

import "testing"

func TestAlignment(t *testing.T) {
	relaxed := []struct {
		a, b string
		want bool
	}{
		{"owner.test", "owner.test", true},
		{"mail.owner.test", "owner.test", true},
		{"OWNER.test.", "owner.test", true},
		{"owner.test", "attacker.test", false},
		{"test", "owner.test", false},
		{"gmail.com", "googlemail.com", false},
		{"bar.co.uk", "foo.bar.co.uk", true},
		{"foo.co.uk", "bar.co.uk", false},
		{"alice.github.io", "bob.github.io", false}, // private public suffix
		{"bücher.example", "xn--bcher-kva.example", true},
		{"", "owner.test", false},
	}
	for _, c := range relaxed {
		if got := alignedRelaxed(c.a, c.b); got != c.want {
			t.Errorf("alignedRelaxed(%q, %q) = %v", c.a, c.b, got)
		}
	}
	if alignedStrict("mail.owner.test", "owner.test") || !alignedStrict("Owner.Test", "owner.test") {
		t.Error("alignedStrict is wrong")
	}
	for in, want := range map[string]string{"jane@Owner.Test": "owner.test", "@owner.test": "owner.test", "<a@b.test>": "b.test", "owner.test": "owner.test", "a@b c": ""} {
		if got := domainOf(in); got != want {
			t.Errorf("domainOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatchHost(t *testing.T) {
	pats := []string{"*.messagingengine.com", "mx.google.com"}
	for host, want := range map[string]bool{
		"mx5.messagingengine.com":  true,
		"MX5.MessagingEngine.com.": true,
		"messagingengine.com":      false,
		"evilmessagingengine.com":  false,
		"mx.google.com":            true,
		"mx.google.com.evil.test":  false,
		"google.com":               false,
	} {
		if got := matchHost(host, pats); got != want {
			t.Errorf("matchHost(%q) = %v", host, got)
		}
	}
}

func TestParseReceived(t *testing.T) {
	cases := map[string]receivedHop{
		"from mail-wr1-f43.google.com (mail-wr1-f43.google.com [209.85.221.43])\r\n\tby mx.example.net (Postfix) with ESMTPS id 4F2A1\r\n\tfor <bot@example.net>; Tue, 10 Mar 2026 11:55:02 +0000": {"mail-wr1-f43.google.com", "mx.example.net"},
		"by 2002:a05:6a10:1234::1 with SMTP id x; Tue, 10 Mar 2026 11:55:02 -0700":        {"", "2002:a05:6a10:1234::1"},
		"from [192.0.2.1] (helo=laptop; by the way) by mx1.example.net. with esmtp; date": {"[192.0.2.1]", "mx1.example.net"},
		"from x (comment with by evil.test inside) by mx.example.net; date":               {"x", "mx.example.net"},
	}
	for in, want := range cases {
		if got := parseReceived(in); got != want {
			t.Errorf("parseReceived(%q) = %+v, want %+v", in, got, want)
		}
	}
}
