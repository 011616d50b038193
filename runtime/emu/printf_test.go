package emu

import "testing"

func TestCFormat(t *testing.T) {
	str := globalString{name: "s", text: "hi\x00"}
	for _, c := range []struct {
		format string
		args   []any
		want   string
	}{
		{"%d %i|%5d|%-5d|%05d\n\x00ignored", []any{int64(-3), int64(4), int64(42), int64(42), int64(42)}, "-3 4|   42|42   |00042\n"},
		{"%u %x %X %o", []any{int64(-1), int64(255), int64(255), int64(8)}, "4294967295 ff FF 10"},
		{"%lu %llx %ld", []any{int64(-1), int64(-1), int64(-5000000000)}, "18446744073709551615 ffffffffffffffff -5000000000"},
		{"%d", []any{int64(1) << 32}, "0"}, // an int is 32 bits
		{"%f %e %g %g %.3f %G", []any{1.5, 1234.5, 0.0001, 1e20, 2.0 / 3, 1e-10}, "1.500000 1.234500e+03 0.0001 1e+20 0.667 1E-10"},
		{"%s|%4s|%c%%", []any{str, str, int64('A')}, "hi|  hi|A%"},
		{"%#010x|%#x|%#6x|%-#6x|%#o|%#x", []any{int64(10), int64(255), int64(10), int64(10), int64(8), int64(0)}, "0x0000000a|0xff|   0xa|0xa   |010|0"},
	} {
		got, n, err := cFormat(c.format, c.args)
		if err != "" || got != c.want || n != len(c.args) {
			t.Errorf("cFormat(%q) = %q, %d, %q; want %q, %d", c.format, got, n, err, c.want, len(c.args))
		}
	}
	for _, c := range []struct {
		format string
		args   []any
	}{
		{"%d %d", []any{int64(1)}},
		{"%f", []any{int64(1)}},
		{"%d", []any{1.0}},
		{"%s", []any{int64(0)}},
		{"%n", []any{int64(0)}},
		{"%", nil},
	} {
		if _, _, err := cFormat(c.format, c.args); err == "" {
			t.Errorf("cFormat(%q) succeeded", c.format)
		}
	}
}
