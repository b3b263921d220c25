package mysql

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPosition_Order checks that positions compare byte by byte as their
// (time, id) pairs do, times before 1970 and ids that are prefixes of
// others included.
func TestPosition_Order(t *testing.T) {
	times := []time.Time{
		time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Unix(0, 0),
		time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC),
		time.Date(2026, 11, 21, 10, 0, 0, 123457000, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
	}
	ids := []string{"ct_", "ct_0", "ct_A", "ct_B", "ct_a", "ct_a0", "ct_~"}
	cmp := func(t1 time.Time, id1 string, t2 time.Time, id2 string) int {
		if c := t1.Compare(t2); c != 0 {
			return c
		}
		return bytes.Compare([]byte(id1), []byte(id2))
	}
	for range 2000 {
		t1, t2 := times[rand.N(len(times))], times[rand.N(len(times))]
		id1, id2 := ids[rand.N(len(ids))], ids[rand.N(len(ids))]
		want := cmp(t1, id1, t2, id2)
		if got := bytes.Compare(position(t1, id1), position(t2, id2)); got != want {
			t.Fatalf("position(%v, %q) vs position(%v, %q) = %d, want %d", t1, id1, t2, id2, got, want)
		}
	}
}
