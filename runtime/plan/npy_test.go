package plan

import (
	"bytes"
	"encoding/binary"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// readNPY is a minimal independent .npy reader for the tests: it checks
// the preamble, the alignment and the dictionary's form, and returns the
// descr, the shape and the data bytes.
func readNPY(t *testing.T, data []byte) (string, []int64, []byte) {
	t.Helper()
	if len(data) < 10 || string(data[:6]) != "\x93NUMPY" {
		t.Fatalf("no .npy magic: %q", data[:min(len(data), 10)])
	}
	var hlen, pre int
	switch data[6] {
	case 1:
		hlen, pre = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2:
		hlen, pre = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		t.Fatalf("version %d.%d", data[6], data[7])
	}
	if data[7] != 0 {
		t.Fatalf("minor version %d", data[7])
	}
	if (pre+hlen)%64 != 0 {
		t.Errorf("data starts at byte %d, not a multiple of 64", pre+hlen)
	}
	header := string(data[pre : pre+hlen])
	if !strings.HasSuffix(header, "\n") {
		t.Errorf("header does not end with a newline: %q", header)
	}
	m := regexp.MustCompile(`^\{'descr': '([<|>][a-z][0-9]+)', 'fortran_order': False, 'shape': \(([0-9, ]*)\), \} *\n$`).FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("header %q is not of the expected form", header)
	}
	var shape []int64
	for _, f := range strings.Split(m[2], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("shape %q: %v", m[2], err)
		}
		shape = append(shape, n)
	}
	return m[1], shape, data[pre+hlen:]
}

func TestNPYHeaderExact(t *testing.T) {
	h := NPYHeader("<f4", []int64{2, 3})
	dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	// 10 + 59 + 1 bytes round up to 128: numpy writes a 118-byte header.
	want := "\x93NUMPY\x01\x00" + string([]byte{118, 0}) + dict + strings.Repeat(" ", 128-10-len(dict)-1) + "\n"
	if string(h) != want {
		t.Fatalf("header\n%q\nwant\n%q", h, want)
	}
	// One dimension is written as a one-element tuple, zero as ().
	if h := string(NPYHeader("<f2", []int64{5})); !strings.Contains(h, "'shape': (5,), }") {
		t.Errorf("1-D header %q", h)
	}
	if h := string(NPYHeader("<f8", nil)); !strings.Contains(h, "'shape': (), }") {
		t.Errorf("0-D header %q", h)
	}
	// Every header pads the data to 64 bytes, whatever the length of the
	// dictionary.
	for n := int64(1); n < 1e12; n = n*7 + 3 {
		h := NPYHeader("<i8", []int64{n, 1, n + 1})
		if len(h)%64 != 0 || h[len(h)-1] != '\n' || int(binary.LittleEndian.Uint16(h[8:10])) != len(h)-10 {
			t.Fatalf("header for %d: length %d, declared %d", n, len(h), binary.LittleEndian.Uint16(h[8:10]))
		}
	}
}

func TestNPYHeaderVersion2(t *testing.T) {
	shape := make([]int64, 30000) // a dictionary over 65535 bytes
	for i := range shape {
		shape[i] = 1
	}
	h := NPYHeader("<f4", shape)
	if h[6] != 2 || h[7] != 0 {
		t.Fatalf("version %d.%d, want 2.0", h[6], h[7])
	}
	if int(binary.LittleEndian.Uint32(h[8:12])) != len(h)-12 || len(h)%64 != 0 {
		t.Fatalf("declared length %d, header %d bytes", binary.LittleEndian.Uint32(h[8:12]), len(h))
	}
	_, got, _ := readNPY(t, h)
	if len(got) != len(shape) {
		t.Fatalf("read back %d dimensions", len(got))
	}
}

func TestWriteNPYRoundTrip(t *testing.T) {
	cases := []struct {
		elem  ir.Type
		descr string
		note  bool
	}{
		{ir.FloatTypeOf(ir.F16), "<f2", false},
		{ir.FloatTypeOf(ir.BF16), "<u2", true},
		{ir.FloatTypeOf(ir.F32), "<f4", false},
		{ir.FloatTypeOf(ir.TF32), "<f4", true},
		{ir.FloatTypeOf(ir.F64), "<f8", false},
		{ir.FloatTypeOf(ir.F8E4M3FN), "|u1", true},
		{ir.IntegerTypeOf(1), "|u1", true},
		{ir.IntegerTypeOf(8), "|i1", false},
		{ir.IntegerTypeWithSign(16, ir.Unsigned), "<u2", false},
		{ir.IntegerTypeOf(32), "<i4", false},
		{ir.Index, "<i8", false},
	}
	for _, c := range cases {
		b, err := buffer.New(c.elem, []int64{3, 4})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < b.Len(); i++ {
			b.SetFloatOrInt(i, float64(i%2))
		}
		var w bytes.Buffer
		nt, err := WriteNPY(&w, b)
		if err != nil {
			t.Fatalf("%s: %v", c.elem, err)
		}
		if nt.Descr != c.descr || (nt.Note != "") != c.note {
			t.Errorf("%s: dtype %+v, want %s (note: %v)", c.elem, nt, c.descr, c.note)
		}
		descr, shape, data := readNPY(t, w.Bytes())
		if descr != c.descr || len(shape) != 2 || shape[0] != 3 || shape[1] != 4 || !bytes.Equal(data, b.Bytes) {
			t.Errorf("%s: read back %s %v and %d bytes", c.elem, descr, shape, len(data))
		}
	}
}

// The values themselves: f16 1.5 is 0x3e00 and bf16 -2 is 0xc000, little
// endian, and an f32 NaN stays a NaN.
func TestWriteNPYValues(t *testing.T) {
	f16, _ := buffer.New(ir.FloatTypeOf(ir.F16), []int64{2})
	f16.SetFloat(0, 1.5)
	f16.SetFloat(1, math.Copysign(0, -1))
	bf16, _ := buffer.New(ir.FloatTypeOf(ir.BF16), []int64{1})
	bf16.SetFloat(0, -2)
	f32, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{1})
	f32.SetFloat(0, math.NaN())
	for _, c := range []struct {
		b    *buffer.Buffer
		want []byte
	}{
		{f16, []byte{0x00, 0x3e, 0x00, 0x80}},
		{bf16, []byte{0x00, 0xc0}},
	} {
		var w bytes.Buffer
		if _, err := WriteNPY(&w, c.b); err != nil {
			t.Fatal(err)
		}
		if _, _, data := readNPY(t, w.Bytes()); !bytes.Equal(data, c.want) {
			t.Errorf("%s: data % x, want % x", c.b.Elem, data, c.want)
		}
	}
	var w bytes.Buffer
	if _, err := WriteNPY(&w, f32); err != nil {
		t.Fatal(err)
	}
	_, _, data := readNPY(t, w.Bytes())
	if v := math.Float32frombits(binary.LittleEndian.Uint32(data)); !math.IsNaN(float64(v)) {
		t.Errorf("NaN written as %v", v)
	}
}

func TestWriteNPYErrors(t *testing.T) {
	if _, err := NPYTypeOf(ir.ComplexTypeOf(ir.FloatTypeOf(ir.F32))); err == nil || !strings.Contains(err.Error(), "cannot be written to a .npy file") {
		t.Errorf("complex: %v", err)
	}
	b := &buffer.Buffer{Elem: ir.FloatTypeOf(ir.F32), Shape: []int64{4}, Bytes: make([]byte, 12)}
	if _, err := WriteNPY(&bytes.Buffer{}, b); err == nil || !strings.Contains(err.Error(), "holds 12 bytes, not 16") {
		t.Errorf("short buffer: %v", err)
	}
}
