package runtimes

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zone names in messages ("resets 3pm (Europe/Berlin)") must load on every OS
)

var (
	isoRe      = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|UTC\b|GMT\b|[+-]\d{2}:?\d{2})?`)
	epochRe    = regexp.MustCompile(`\|\s*(\d{10})\b`)
	relRe      = regexp.MustCompile(`(?i)\b(?:in|after)\s+((?:\d+\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|[smhd])\b[\s,]*(?:and\s+)?)+)`)
	relPartRe  = regexp.MustCompile(`(?i)(\d+)\s*(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|[smhd])\b`)
	retryRe    = regexp.MustCompile(`(?i)\bretry[- ]after:?\s*(\d+)\b`)
	weekdayRe  = regexp.MustCompile(`(?i)\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu|thurs?|fri|sat|sun)\b\.?`)
	weeklyRe   = regexp.MustCompile(`(?i)\bweek(ly)?\b`)
	clock12Re  = regexp.MustCompile(`(?i)\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?`)
	bareClkRe  = regexp.MustCompile(`\b(\d{1,2}):(\d{2})\b`)
	clock24Re  = regexp.MustCompile(`(?i)\b(?:at|until|resets?(?:\s+at)?)\s+(\d{1,2}):(\d{2})\b`)
	zoneNameRe = regexp.MustCompile(`\(\s*([A-Za-z]+(?:/[A-Za-z0-9_+\-]+)+|UTC|GMT)\s*\)`)
	zoneUTCRe  = regexp.MustCompile(`(?:\d|[ap]m)\s*(UTC|GMT)\b`)
)

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// ParseReset finds when a usage or rate limit resets in a provider's message,
// trying in order: an ISO timestamp; a Unix time after "|" (Claude's "limit
// reached|1749924000"); "in N seconds|minutes|hours|days" (or "after N ...",
// or "Retry-After: N" seconds); a weekday, with a clock time if one is given;
// a 12-hour clock ("3pm", "9:15 AM"); a 24-hour clock after at, until or
// resets. Clock times are read in the zone the message names
// ("(Europe/Berlin)"), else in loc; a clock time already past means the next
// day. A weekly limit without a weekday has no known reset. ok is false when
// the message does not say.
func ParseReset(text string, now time.Time, loc *time.Location) (t time.Time, ok bool) {
	if loc == nil {
		loc = time.Local
	}
	text = quoteReplacer.Replace(text)
	zone := zoneIn(text, loc)

	if m := isoRe.FindStringSubmatch(text); m != nil {
		if t, ok := isoTime(m, zone); ok {
			return t, true
		}
	}
	if m := epochRe.FindStringSubmatch(text); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return time.Unix(sec, 0).In(zone), true
		}
	}
	if m := relRe.FindStringSubmatch(text); m != nil {
		if d, ok := relDuration(m[1]); ok {
			return now.Add(d), true
		}
	}
	if m := retryRe.FindStringSubmatch(text); m != nil {
		// An HTTP Retry-After header: a number of seconds.
		if d, ok := relDuration(m[1] + "s"); ok {
			return now.Add(d), true
		}
	}
	h, mi, hasClock := clockIn(text)
	if loc := weekdayRe.FindStringSubmatchIndex(text); loc != nil {
		wd := weekdays[strings.ToLower(text[loc[2]:loc[3]])[:3]]
		if !hasClock {
			// "resets Thu 14:00": after a weekday a bare 24-hour clock counts.
			h, mi, _ = bareClock(text[loc[1]:])
		}
		local := now.In(zone)
		days := (int(wd) - int(local.Weekday()) + 7) % 7
		t := time.Date(local.Year(), local.Month(), local.Day()+days, h, mi, 0, 0, zone)
		if !t.After(now) {
			t = time.Date(local.Year(), local.Month(), local.Day()+days+7, h, mi, 0, 0, zone)
		}
		return t, true
	}
	if weeklyRe.MatchString(text) || !hasClock {
		return time.Time{}, false
	}
	local := now.In(zone)
	t = time.Date(local.Year(), local.Month(), local.Day(), h, mi, 0, 0, zone)
	if !t.After(now) {
		t = time.Date(local.Year(), local.Month(), local.Day()+1, h, mi, 0, 0, zone)
	}
	return t, true
}

// zoneIn returns the zone a message names, or def.
func zoneIn(text string, def *time.Location) *time.Location {
	if m := zoneNameRe.FindStringSubmatch(text); m != nil {
		if m[1] == "UTC" || m[1] == "GMT" {
			return time.UTC
		}
		if l, err := time.LoadLocation(m[1]); err == nil {
			return l
		}
	}
	if zoneUTCRe.MatchString(text) {
		return time.UTC
	}
	return def
}

// isoTime builds the time of an isoRe match; a timestamp without an offset is in zone.
func isoTime(m []string, zone *time.Location) (time.Time, bool) {
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	year, month, day, hour, minute, sec := n(m[1]), n(m[2]), n(m[3]), n(m[4]), n(m[5]), n(m[6])
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, false
	}
	switch off := m[7]; {
	case off == "Z" || off == "UTC" || off == "GMT":
		zone = time.UTC
	case off != "":
		sign := 1
		if off[0] == '-' {
			sign = -1
		}
		digits := strings.ReplaceAll(off[1:], ":", "")
		oh, om := n(digits[:2]), n(digits[2:])
		if oh > 23 || om > 59 {
			return time.Time{}, false
		}
		zone = time.FixedZone(off, sign*(oh*3600+om*60))
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, zone), true
}

// relDuration adds up "4 days 23 hours 59 minutes".
func relDuration(s string) (time.Duration, bool) {
	var total time.Duration
	for _, p := range relPartRe.FindAllStringSubmatch(s, -1) {
		v, err := strconv.ParseInt(p[1], 10, 64)
		if err != nil || v > 10000 {
			return 0, false
		}
		unit := time.Second
		switch u := strings.ToLower(p[2]); {
		case strings.HasPrefix(u, "d"):
			unit = 24 * time.Hour
		case strings.HasPrefix(u, "h"):
			unit = time.Hour
		case strings.HasPrefix(u, "m"):
			unit = time.Minute
		}
		total += time.Duration(v) * unit
	}
	return total, total > 0
}

// clockIn finds a 12-hour clock time, else a 24-hour one after at, until or resets.
func clockIn(text string) (hour, minute int, ok bool) {
	for _, m := range clock12Re.FindAllStringSubmatch(text, -1) {
		h, _ := strconv.Atoi(m[1])
		mi := 0
		if m[2] != "" {
			mi, _ = strconv.Atoi(m[2])
		}
		if h < 1 || h > 12 || mi > 59 {
			continue
		}
		h %= 12
		if strings.EqualFold(m[3], "p") {
			h += 12
		}
		return h, mi, true
	}
	for _, m := range clock24Re.FindAllStringSubmatch(text, -1) {
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		if h > 23 || mi > 59 {
			continue
		}
		return h, mi, true
	}
	return 0, 0, false
}

// bareClock finds the first h:mm 24-hour clock time in text; 0:00 when there is none.
func bareClock(text string) (hour, minute int, ok bool) {
	for _, m := range bareClkRe.FindAllStringSubmatch(text, -1) {
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		if h <= 23 && mi <= 59 {
			return h, mi, true
		}
	}
	return 0, 0, false
}
