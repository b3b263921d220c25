package utcmicro

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reference is what Append must write: the time package's own formatting.
func reference(dst []byte, t time.Time) []byte {
	return t.UTC().Truncate(time.Microsecond).AppendFormat(dst, Layout)
}

func TestAppend(t *testing.T) {
	east, west := time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600-30*60)
	for _, at := range []time.Time{
		{},
		time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC),
		time.Date(2026, 11, 21, 10, 15, 30, 999, time.UTC),
		time.Date(1999, 1, 2, 3, 4, 5, 999, time.FixedZone("x", -7*3600)),
		time.Date(2026, 1, 1, 1, 0, 0, 0, east),
		time.Date(2026, 12, 31, 20, 0, 0, 0, west),
		time.Date(2000, 2, 29, 0, 0, 0, 1000, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, west), // year 0 in UTC
		time.Date(0, 1, 1, 0, 0, 0, 0, east), // year -1 in UTC: AppendFormat's path
		time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, west), // year 10000 in UTC
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(123456, 7, 8, 9, 10, 11, 12000, time.UTC),
		time.Unix(0, 0),
		time.Now(), // with a monotonic reading and the local zone
	} {
		want := string(reference([]byte("prefix "), at))
		require.Equal(t, want, string(Append([]byte("prefix "), at)), "%v", at)
	}
}

// TestAppend_EveryDay checks Append against the time package on every day
// of years 0 to 9999, which covers civilDate everywhere it is used, at a
// time of day and a fraction that vary from day to day.
func TestAppend_EveryDay(t *testing.T) {
	var got, want []byte
	for day := int64(0); ; day++ {
		sec := minFourDigitUnix + day*86400
		if sec > maxFourDigitUnix {
			break
		}
		at := time.Unix(sec+day*7919%86400, day*999983%1e9)
		got, want = Append(got[:0], at), reference(want[:0], at)
		if string(got) != string(want) {
			t.Fatalf("Append(%v) = %s, want %s", at, got, want)
		}
	}
}

// FuzzAppend checks Append against the time package over the whole range
// of times, zones included.
func FuzzAppend(f *testing.F) {
	f.Add(int64(0), int64(0), int32(0))
	f.Add(int64(1795291650), int64(848227000), int32(3600))
	f.Add(int64(minFourDigitUnix), int64(0), int32(0))
	f.Add(int64(maxFourDigitUnix), int64(999999999), int32(-60))
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int32) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", int(offset%(26*3600))))
		if got, want := string(Append(nil, at)), string(reference(nil, at)); got != want {
			t.Fatalf("Append(%v) = %s, want %s", at, got, want)
		}
	})
}

// BenchmarkAppend compares Append with the time package's AppendFormat.
// Compare with benchstat -col /impl.
func BenchmarkAppend(b *testing.B) {
	at := time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC)
	for _, impl := range []struct {
		name   string
		append func([]byte, time.Time) []byte
	}{{"time", reference}, {"utcmicro", Append}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				buf = impl.append(buf[:0], at)
			}
		})
	}
}
