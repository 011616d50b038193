package pipecheck

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// Matrix is a row-major buffer of rows x cols elements, with its values
// (for the references the tests compute).
type Matrix struct {
	*buffer.Buffer
	Cols int
	vals []float64
}

// NewInput returns a rows x cols buffer of small random integers (exact
// in f16, and in f32 sums of products), drawn from seed.
func NewInput(elem ir.Type, rows, cols int, seed int64) Matrix {
	b, err := buffer.New(elem, []int64{int64(rows), int64(cols)})
	if err != nil {
		panic(err)
	}
	b.FillRandom(rand.New(rand.NewSource(seed)), buffer.Ints)
	return newMatrix(b, cols)
}

func newMatrix(b *buffer.Buffer, cols int) Matrix {
	m := Matrix{b, cols, make([]float64, b.Len())}
	for i := range m.vals {
		m.vals[i] = b.Float(i)
	}
	return m
}

// NewOutput returns a rows x cols buffer filled with NaN, so an element
// the kernel should write and does not is caught.
func NewOutput(elem ir.Type, rows, cols int) Matrix {
	b, err := buffer.New(elem, []int64{int64(rows), int64(cols)})
	if err != nil {
		panic(err)
	}
	b.Poison()
	return newMatrix(b, cols)
}

// At and Set address element (r, c); Set changes the values, not the
// buffer.
func (m Matrix) At(r, c int) float64     { return m.vals[r*m.Cols+c] }
func (m Matrix) Set(r, c int, v float64) { m.vals[r*m.Cols+c] = v }

// Row returns the values of row r.
func (m Matrix) Row(r int) []float64 { return m.vals[r*m.Cols : (r+1)*m.Cols] }

// Clone copies m.
func (m Matrix) Clone() Matrix {
	return Matrix{m.Buffer.Clone(), m.Cols, append([]float64(nil), m.vals...)}
}

// Same reports the first element where got differs from want's values
// (NaN equal to NaN: the inputs are integers, so every result is exact).
func Same(got *buffer.Buffer, want Matrix) error {
	for i, w := range want.vals {
		g := got.Float(i)
		if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
			return fmt.Errorf("element (%d, %d) is %v, the reference %v", i/want.Cols, i%want.Cols, g, w)
		}
	}
	return nil
}
