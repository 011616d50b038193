package emu

import (
	"math"

	"github.com/tmac-dev/tmac/ir"
)

// Elementwise ops apply to scalars and to vectors (lane by lane). Integer
// results are sign-extended from their width, float results rounded to
// their type.

func init() {
	register(runConstant, "arith.constant", "llvm.mlir.constant")
	for name, f := range intBinary {
		register(intBin(f), name)
	}
	for name, f := range floatBinary {
		register(floatBin(f), name)
	}
	register(runCmpi, "arith.cmpi")
	register(runCmpf, "arith.cmpf")
	register(runSelect, "arith.select")
	register(runIntCast, "arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi", "arith.trunci")
	register(runFloatCast, "arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui")
	register(func(t *thread, in *instr) {
		t.set(in, 0, mapF(t.vals[in.in[0]], in.op.Result(0).Type(), func(x float64) float64 { return -x }))
	}, "arith.negf")
	register(runFMA, "math.fma", "vector.fma")
	for name, f := range floatUnary {
		f := f
		register(func(t *thread, in *instr) { t.set(in, 0, mapF(t.vals[in.in[0]], in.op.Result(0).Type(), f)) }, name)
	}
	register(func(t *thread, in *instr) {
		n := in.op.Result(0).Type().(*ir.VectorType).Shape()[0]
		var v vec
		switch x := t.vals[in.in[0]].(type) {
		case float64:
			v.f = make([]float64, n)
			for i := range v.f {
				v.f[i] = x
			}
		case int64:
			v.i = make([]int64, n)
			for i := range v.i {
				v.i[i] = x
			}
		}
		t.set(in, 0, v)
	}, "vector.broadcast", "vector.splat")
}

func runConstant(t *thread, in *instr) {
	ty := in.op.Result(0).Type()
	switch a := in.op.Attr("value").(type) {
	case *ir.IntegerAttr:
		t.set(in, 0, wrap(a.Int(), ty))
		return
	case *ir.FloatAttr:
		t.set(in, 0, round(a.Value, ty))
		return
	case *ir.DenseAttr:
		vt, ok := ty.(*ir.VectorType)
		if ok && len(vt.Shape()) == 1 {
			n := vt.Shape()[0]
			var v vec
			for i := int64(0); i < n; i++ {
				j := i
				if a.Splat {
					j = 0
				}
				if a.Floats != nil {
					v.f = append(v.f, round(a.Floats[j], vt.Elem))
				} else {
					v.i = append(v.i, wrap(a.Ints[j], vt.Elem))
				}
			}
			t.set(in, 0, v)
			return
		}
	}
	t.failf(in.op, "constant %s of type %s is not emulated", in.op.Attr("value"), ty)
}

var intBinary = map[string]func(x, y int64, ty ir.Type) (int64, bool){
	"arith.addi": func(x, y int64, _ ir.Type) (int64, bool) { return x + y, true },
	"arith.subi": func(x, y int64, _ ir.Type) (int64, bool) { return x - y, true },
	"arith.muli": func(x, y int64, _ ir.Type) (int64, bool) { return x * y, true },
	"arith.andi": func(x, y int64, _ ir.Type) (int64, bool) { return x & y, true },
	"arith.ori":  func(x, y int64, _ ir.Type) (int64, bool) { return x | y, true },
	"arith.xori": func(x, y int64, _ ir.Type) (int64, bool) { return x ^ y, true },
	"arith.divui": func(x, y int64, ty ir.Type) (int64, bool) {
		if zext(y, ty) == 0 {
			return 0, false
		}
		return int64(zext(x, ty) / zext(y, ty)), true
	},
	"arith.remui": func(x, y int64, ty ir.Type) (int64, bool) {
		if zext(y, ty) == 0 {
			return 0, false
		}
		return int64(zext(x, ty) % zext(y, ty)), true
	},
	"arith.divsi": func(x, y int64, _ ir.Type) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		return x / y, true
	},
	"arith.remsi": func(x, y int64, _ ir.Type) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		return x % y, true
	},
	"arith.ceildivsi": func(x, y int64, _ ir.Type) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		q := x / y
		if (x%y != 0) && ((x < 0) == (y < 0)) {
			q++
		}
		return q, true
	},
	"arith.floordivsi": func(x, y int64, _ ir.Type) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		q := x / y
		if (x%y != 0) && ((x < 0) != (y < 0)) {
			q--
		}
		return q, true
	},
	"arith.shli": func(x, y int64, ty ir.Type) (int64, bool) {
		return x << zext(y, ty), zext(y, ty) < uint64(ir.BitWidth(ty))
	},
	"arith.shrui": func(x, y int64, ty ir.Type) (int64, bool) {
		return int64(zext(x, ty) >> zext(y, ty)), zext(y, ty) < uint64(ir.BitWidth(ty))
	},
	"arith.shrsi": func(x, y int64, ty ir.Type) (int64, bool) {
		return x >> zext(y, ty), zext(y, ty) < uint64(ir.BitWidth(ty))
	},
	"arith.minsi": func(x, y int64, _ ir.Type) (int64, bool) { return min(x, y), true },
	"arith.maxsi": func(x, y int64, _ ir.Type) (int64, bool) { return max(x, y), true },
	"arith.minui": func(x, y int64, ty ir.Type) (int64, bool) {
		if zext(x, ty) < zext(y, ty) {
			return x, true
		}
		return y, true
	},
	"arith.maxui": func(x, y int64, ty ir.Type) (int64, bool) {
		if zext(x, ty) > zext(y, ty) {
			return x, true
		}
		return y, true
	},
}

var floatBinary = map[string]func(x, y float64) float64{
	"arith.addf":     func(x, y float64) float64 { return x + y },
	"arith.subf":     func(x, y float64) float64 { return x - y },
	"arith.mulf":     func(x, y float64) float64 { return x * y },
	"arith.divf":     func(x, y float64) float64 { return x / y },
	"arith.maxnumf":  maxNum,
	"arith.minnumf":  func(x, y float64) float64 { return -maxNum(-x, -y) },
	"arith.maximumf": maximum,
	"arith.minimumf": func(x, y float64) float64 { return -maximum(-x, -y) },
	"arith.remf":     math.Mod,
}

var floatUnary = map[string]func(x float64) float64{
	"math.exp":   math.Exp,
	"math.exp2":  math.Exp2,
	"math.log":   math.Log,
	"math.sqrt":  math.Sqrt,
	"math.rsqrt": func(x float64) float64 { return 1 / math.Sqrt(x) },
	"math.absf":  math.Abs,
	"math.tanh":  math.Tanh,
	"math.sin":   math.Sin,
	"math.cos":   math.Cos,
	"math.floor": math.Floor,
	"math.ceil":  math.Ceil,
}

func maxNum(x, y float64) float64 {
	if math.IsNaN(x) {
		return y
	}
	if math.IsNaN(y) {
		return x
	}
	return math.Max(x, y)
}

func maximum(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return math.Max(x, y)
}

// elemType is the scalar type of t (the element type of a vector).
func elemType(t ir.Type) ir.Type {
	if v, ok := t.(*ir.VectorType); ok {
		return v.Elem
	}
	return t
}

func intBin(f func(x, y int64, ty ir.Type) (int64, bool)) func(t *thread, in *instr) {
	return func(t *thread, in *instr) {
		ty := elemType(in.op.Result(0).Type())
		apply := func(x, y int64) int64 {
			r, ok := f(x, y, ty)
			if !ok {
				t.failf(in.op, "undefined result (division by zero or an oversized shift): %d, %d", x, y)
			}
			return wrap(r, ty)
		}
		switch a := t.vals[in.in[0]].(type) {
		case int64:
			t.set(in, 0, apply(a, t.int(in, 1)))
		case vec:
			b := t.vals[in.in[1]].(vec)
			r := vec{i: make([]int64, len(a.i))}
			for i := range a.i {
				r.i[i] = apply(a.i[i], b.i[i])
			}
			t.set(in, 0, r)
		default:
			t.failf(in.op, "unexpected operand %T", a)
		}
	}
}

func floatBin(f func(x, y float64) float64) func(t *thread, in *instr) {
	return func(t *thread, in *instr) {
		ty := elemType(in.op.Result(0).Type())
		switch a := t.vals[in.in[0]].(type) {
		case float64:
			t.set(in, 0, round(f(a, t.float(in, 1)), ty))
		case vec:
			b := t.vals[in.in[1]].(vec)
			r := vec{f: make([]float64, len(a.f))}
			for i := range a.f {
				r.f[i] = round(f(a.f[i], b.f[i]), ty)
			}
			t.set(in, 0, r)
		default:
			t.failf(in.op, "unexpected operand %T", a)
		}
	}
}

// mapF applies f to a float scalar or each lane of a float vector.
func mapF(v any, rt ir.Type, f func(float64) float64) any {
	ty := elemType(rt)
	switch x := v.(type) {
	case float64:
		return round(f(x), ty)
	case vec:
		r := vec{f: make([]float64, len(x.f))}
		for i := range x.f {
			r.f[i] = round(f(x.f[i]), ty)
		}
		return r
	}
	return nil
}

func runFMA(t *thread, in *instr) {
	ty := elemType(in.op.Result(0).Type())
	switch a := t.vals[in.in[0]].(type) {
	case float64:
		t.set(in, 0, round(math.FMA(a, t.float(in, 1), t.float(in, 2)), ty))
	case vec:
		b, c := t.vals[in.in[1]].(vec), t.vals[in.in[2]].(vec)
		r := vec{f: make([]float64, len(a.f))}
		for i := range a.f {
			r.f[i] = round(math.FMA(a.f[i], b.f[i], c.f[i]), ty)
		}
		t.set(in, 0, r)
	}
}

func runCmpi(t *thread, in *instr) {
	p, _ := ir.AttrInt(in.op.Attr("predicate"))
	ty := elemType(in.op.Operand(0).Type())
	cmp := func(x, y int64) int64 {
		var r bool
		switch p {
		case 0:
			r = x == y
		case 1:
			r = x != y
		case 2:
			r = x < y
		case 3:
			r = x <= y
		case 4:
			r = x > y
		case 5:
			r = x >= y
		case 6:
			r = zext(x, ty) < zext(y, ty)
		case 7:
			r = zext(x, ty) <= zext(y, ty)
		case 8:
			r = zext(x, ty) > zext(y, ty)
		case 9:
			r = zext(x, ty) >= zext(y, ty)
		}
		if r {
			return 1
		}
		return 0
	}
	switch a := t.vals[in.in[0]].(type) {
	case int64:
		t.set(in, 0, cmp(a, t.int(in, 1)))
	case vec:
		b := t.vals[in.in[1]].(vec)
		r := vec{i: make([]int64, len(a.i))}
		for i := range a.i {
			r.i[i] = cmp(a.i[i], b.i[i])
		}
		t.set(in, 0, r)
	}
}

func runCmpf(t *thread, in *instr) {
	p, _ := ir.AttrInt(in.op.Attr("predicate"))
	cmp := func(x, y float64) int64 {
		uno := math.IsNaN(x) || math.IsNaN(y)
		var r bool
		switch p {
		case 0:
			r = false
		case 1:
			r = !uno && x == y
		case 2:
			r = !uno && x > y
		case 3:
			r = !uno && x >= y
		case 4:
			r = !uno && x < y
		case 5:
			r = !uno && x <= y
		case 6:
			r = !uno && x != y
		case 7:
			r = !uno
		case 8:
			r = uno || x == y
		case 9:
			r = uno || x > y
		case 10:
			r = uno || x >= y
		case 11:
			r = uno || x < y
		case 12:
			r = uno || x <= y
		case 13:
			r = uno || x != y
		case 14:
			r = uno
		case 15:
			r = true
		}
		if r {
			return 1
		}
		return 0
	}
	switch a := t.vals[in.in[0]].(type) {
	case float64:
		t.set(in, 0, cmp(a, t.float(in, 1)))
	case vec:
		b := t.vals[in.in[1]].(vec)
		r := vec{i: make([]int64, len(a.f))}
		for i := range a.f {
			r.i[i] = cmp(a.f[i], b.f[i])
		}
		t.set(in, 0, r)
	}
}

func runSelect(t *thread, in *instr) {
	if c, ok := t.vals[in.in[0]].(int64); ok {
		if c&1 != 0 {
			t.set(in, 0, t.vals[in.in[1]])
		} else {
			t.set(in, 0, t.vals[in.in[2]])
		}
		return
	}
	c, ok := t.vals[in.in[0]].(vec)
	a, okA := t.vals[in.in[1]].(vec)
	b, okB := t.vals[in.in[2]].(vec)
	if !ok || !okA || !okB {
		t.failf(in.op, "unexpected operands")
	}
	var r vec
	for i, ci := range c.i {
		if ci&1 != 0 {
			if a.f != nil {
				r.f = append(r.f, a.f[i])
			} else {
				r.i = append(r.i, a.i[i])
			}
		} else if b.f != nil {
			r.f = append(r.f, b.f[i])
		} else {
			r.i = append(r.i, b.i[i])
		}
	}
	t.set(in, 0, r)
}

func runIntCast(t *thread, in *instr) {
	from, to := in.op.Operand(0).Type(), in.op.Result(0).Type()
	x := t.int(in, 0)
	switch in.op.Name() {
	case "arith.extui", "arith.index_castui":
		t.set(in, 0, wrap(int64(zext(x, from)), to))
	default:
		t.set(in, 0, wrap(x, to))
	}
}

func runFloatCast(t *thread, in *instr) {
	from, to := elemType(in.op.Operand(0).Type()), elemType(in.op.Result(0).Type())
	conv := func(v any) any {
		switch in.op.Name() {
		case "arith.extf", "arith.truncf":
			return round(v.(float64), to)
		case "arith.sitofp":
			return round(float64(v.(int64)), to)
		case "arith.uitofp":
			return round(float64(zext(v.(int64), from)), to)
		case "arith.fptosi", "arith.fptoui":
			return wrap(int64(v.(float64)), to)
		}
		return nil
	}
	switch x := t.vals[in.in[0]].(type) {
	case vec:
		var r vec
		n := len(x.f) + len(x.i)
		for i := 0; i < n; i++ {
			var e any
			if x.f != nil {
				e = x.f[i]
			} else {
				e = x.i[i]
			}
			switch c := conv(e).(type) {
			case float64:
				r.f = append(r.f, c)
			case int64:
				r.i = append(r.i, c)
			}
		}
		t.set(in, 0, r)
	default:
		t.set(in, 0, conv(x))
	}
}
