package plan

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// NPYType is how a memref element type is written to a NumPy .npy file.
type NPYType struct {
	// Descr is the NumPy dtype string of the file ('<f2', '<u2', ...).
	Descr string
	// Note says how to read the values when Descr is not their meaning
	// (bf16, tf32, fp8 and i1 are stored as raw bits); empty otherwise.
	Note string
}

// NPYTypeOf gives the .npy dtype of elem. The bytes are always the
// element's own encoding, exactly as on the device (buffer.Buffer): types
// NumPy lacks are written as unsigned integers of the same width, with a
// note.
func NPYTypeOf(elem ir.Type) (NPYType, error) {
	switch t := elem.(type) {
	case *ir.FloatType:
		switch t.Kind {
		case ir.F16:
			return NPYType{Descr: "<f2"}, nil
		case ir.BF16:
			return NPYType{Descr: "<u2", Note: "bfloat16 bits (view as torch.bfloat16, or shift left 16 into float32)"}, nil
		case ir.F32:
			return NPYType{Descr: "<f4"}, nil
		case ir.TF32:
			return NPYType{Descr: "<f4", Note: "tf32 values stored as float32 (low 13 mantissa bits zero)"}, nil
		case ir.F64:
			return NPYType{Descr: "<f8"}, nil
		case ir.F8E4M3FN:
			return NPYType{Descr: "|u1", Note: "float8_e4m3fn bits (view as torch.float8_e4m3fn)"}, nil
		case ir.F8E5M2:
			return NPYType{Descr: "|u1", Note: "float8_e5m2 bits (view as torch.float8_e5m2)"}, nil
		}
	case *ir.IntegerType:
		if t.Width == 1 {
			return NPYType{Descr: "|u1", Note: "i1 stored as one byte, 0 or 1"}, nil
		}
		kind := "i"
		if t.Signedness == ir.Unsigned {
			kind = "u"
		}
		switch t.Width {
		case 8:
			return NPYType{Descr: "|" + kind + "1"}, nil
		case 16, 32, 64:
			return NPYType{Descr: "<" + kind + strconv.Itoa(t.Width/8)}, nil
		}
	case *ir.IndexType:
		return NPYType{Descr: "<i8"}, nil
	}
	return NPYType{}, fmt.Errorf("element type '%s' cannot be written to a .npy file", elem)
}

// NPYHeader builds the header of a .npy file holding a C-order array of
// the given dtype and shape: the magic string, the format version, the
// header length and the header dictionary, padded with spaces and a final
// newline so that the data starts at a multiple of 64 bytes. Version 1.0
// is used unless the dictionary needs more than 65535 bytes (then 2.0, with
// a 4-byte length).
func NPYHeader(descr string, shape []int64) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + tuple + ", }"
	build := func(major byte, lenBytes int) []byte {
		pre := 6 + 2 + lenBytes
		n := len(dict) + 1 // the newline
		n += (64 - (pre+n)%64) % 64
		out := make([]byte, 0, pre+n)
		out = append(out, "\x93NUMPY"...)
		out = append(out, major, 0)
		if lenBytes == 2 {
			out = binary.LittleEndian.AppendUint16(out, uint16(n))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(n))
		}
		out = append(out, dict...)
		for len(out) < pre+n-1 {
			out = append(out, ' ')
		}
		return append(out, '\n')
	}
	h := build(1, 2)
	if len(h)-10 > 0xffff {
		h = build(2, 4)
	}
	return h
}

// WriteNPY writes b to w as a .npy file (C order, little-endian, dtype
// from NPYTypeOf).
func WriteNPY(w io.Writer, b *buffer.Buffer) (NPYType, error) {
	nt, err := NPYTypeOf(b.Elem)
	if err != nil {
		return nt, err
	}
	size, err := buffer.ElemSize(b.Elem)
	if err != nil {
		return nt, err
	}
	n := int64(1)
	for _, d := range b.Shape {
		n *= d
	}
	if n*int64(size) != int64(len(b.Bytes)) {
		return nt, fmt.Errorf("buffer of shape %v holds %d bytes, not %d", b.Shape, len(b.Bytes), n*int64(size))
	}
	if _, err := w.Write(NPYHeader(nt.Descr, b.Shape)); err != nil {
		return nt, err
	}
	_, err = w.Write(b.Bytes)
	return nt, err
}
