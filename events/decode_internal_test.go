package events

import "testing"

func TestIntValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lit         string
		n           int64
		isInt, fits bool
	}{
		{"0", 0, true, true},
		{"-0", 0, true, true},
		{"0.0e-5", 0, true, true},
		{"0e999999999999999999999", 0, true, true},
		{"7", 7, true, true},
		{"-7", -7, true, true},
		{"3.0", 3, true, true},
		{"3.10e1", 31, true, true},
		{"1e1", 10, true, true},
		{"1E+2", 100, true, true},
		{"1500e-3", 0, false, false},
		{"1500e-2", 15, true, true},
		{"0.5", 0, false, false},
		{"1.0000000000000000001", 0, false, false},
		{"9223372036854775807", 9223372036854775807, true, true},
		{"-9223372036854775808", -9223372036854775808, true, true},
		{"9223372036854775808", 0, true, false},
		{"1e19", 0, true, false},
		{"1e400", 0, true, false},
		{"1e99999999999999999999", 0, true, false},
		{"1e-99999999999999999999", 0, false, false},
		{"10e9223372036854775807", 0, true, false},
	} {
		n, isInt, fits := intValue(c.lit)
		if n != c.n || isInt != c.isInt || fits != c.fits {
			t.Errorf("intValue(%q)=%d,%v,%v, want %d,%v,%v", c.lit, n, isInt, fits, c.n, c.isInt, c.fits)
		}
	}
}

func TestInUnitInterval(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lit string
		in  bool
	}{
		{"0", true},
		{"-0", true},
		{"-0.0e7", true},
		{"0.5", true},
		{"5e-1", true},
		{"1", true},
		{"1.0", true},
		{"1.000", true},
		{"0.1e1", true},
		{"10e-1", true},
		{"100E-2", true},
		{"1e-400", true},
		{"7e-99999999999999999999", true},
		{"0.99999999999999999999", true},
		{"1.0000000000000000001", false},
		{"1.5", false},
		{"2", false},
		{"10e-2", true},
		{"11e-1", false},
		{"1e1", false},
		{"1e99999999999999999999", false},
		{"-1e-9", false},
		{"-0.5", false},
		{"-1", false},
	} {
		if got := inUnitInterval(c.lit); got != c.in {
			t.Errorf("inUnitInterval(%q)=%v, want %v", c.lit, got, c.in)
		}
	}
}
