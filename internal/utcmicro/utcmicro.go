// Package utcmicro formats times as RFC 3339 timestamps in UTC with exactly
// six fractional digits, "2026-11-21T10:15:30.123456Z", the form of every
// time in a list response and a cursor. It writes what Time.AppendFormat
// writes, with the calendar worked out by integer arithmetic instead of the
// time package's general layout interpreter: a page of contacts holds one
// such time per item, and the benchmark against AppendFormat shows what
// that saves.
package utcmicro

import "time"

// Layout is the layout Append writes, as the time package spells it.
const Layout = "2006-01-02T15:04:05.000000Z"

// Unix times of the first and last second whose year has four digits,
// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
const (
	minFourDigitUnix = -62167219200
	maxFourDigitUnix = 253402300799
)

// Append appends t to dst in Layout, converted to UTC and truncated to
// microseconds, exactly as t.UTC().Truncate(time.Microsecond).AppendFormat(dst,
// Layout) does, and returns the extended slice. Times whose UTC year is
// outside 0 to 9999, which four digits cannot hold, are written by
// AppendFormat itself.
func Append(dst []byte, t time.Time) []byte {
	sec := t.Unix()
	if sec < minFourDigitUnix || sec > maxFourDigitUnix {
		return t.UTC().Truncate(time.Microsecond).AppendFormat(dst, Layout)
	}
	s := uint64(sec - minFourDigitUnix) // seconds since 0000-01-01
	days := uint32(s / 86400)
	clock := uint32(s - uint64(days)*86400)
	year, month, day := civilDate(days)
	us := uint32(t.Nanosecond()) / 1000
	// The fields in two-digit groups, at their places in Layout.
	text := [len(Layout)]byte{4: '-', 7: '-', 10: 'T', 13: ':', 16: ':', 19: '.', 26: 'Z'}
	for _, f := range [...]struct {
		at    int
		value uint32
	}{
		{0, year / 100}, {2, year % 100}, {5, month}, {8, day},
		{11, clock / 3600}, {14, clock / 60 % 60}, {17, clock % 60},
		{20, us / 10000}, {22, us / 100 % 100}, {24, us % 100},
	} {
		text[f.at], text[f.at+1] = byte('0'+f.value/10), byte('0'+f.value%10)
	}
	return append(dst, text[:]...)
}

// Days in 400 Gregorian years, and from 0000-01-01 to 0000-03-01 (year 0 is
// a leap year).
const (
	daysPer400Years = 146097
	daysJanFeb0     = 60
)

// civilDate returns the proleptic Gregorian date days after 0000-01-01, for
// days from 0 to the end of year 9999. It counts years from March 1, so
// that the leap day ends a year, and 400 years ahead, so that January and
// February of year 0 count from a March 1 too (C. Neri and L. Schneider,
// "Euclidean affine functions and their application to calendar
// algorithms", 2023).
func civilDate(days uint32) (year, month, day uint32) {
	n := 4*(days-daysJanFeb0+daysPer400Years) + 3
	century := n / daysPer400Years
	cd := n%daysPer400Years | 3 // 4*(day of century)+3
	cyear := cd / 1461
	yday := cd % 1461 / 4 // day of the March-based year, 0..365
	md := 2141*yday + 197913
	month, day = md>>16, (md&0xffff)/2141+1 // month 3..14
	year = century*100 + cyear
	if month > 12 {
		month -= 12
		year++
	}
	return year - 400, month, day
}
