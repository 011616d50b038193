package runner

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// runArg is one argument of the entry function.
type runArg struct {
	typ    ir.Type
	buf    *buffer.Buffer // memrefs
	scalar plan.Value     // scalars
	output bool
}

// parseAssignments parses argN=VALUE flags into a map keyed by argument
// index.
func parseAssignments(list []string, flag string) (map[int]string, error) {
	out := map[int]string{}
	for _, s := range list {
		name, val, ok := strings.Cut(s, "=")
		if !ok || val == "" {
			return nil, fmt.Errorf("%s expects argN=VALUE, not '%s'", flag, s)
		}
		i, err := argIndex(name)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", flag, s, err)
		}
		out[i] = val
	}
	return out, nil
}

func argIndex(name string) (int, error) {
	n := strings.TrimPrefix(strings.TrimPrefix(name, "%"), "arg")
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 {
		return 0, fmt.Errorf("'%s' is not an argument name (arg0, arg1, ...)", name)
	}
	return i, nil
}

// parseShape parses AxBxC.
func parseShape(s string) ([]int64, error) {
	var shape []int64
	for _, d := range strings.Split(s, "x") {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("'%s' is not a shape like 128x64", s)
		}
		shape = append(shape, n)
	}
	return shape, nil
}

// makeArgs builds the host values of the entry's arguments. With a
// RefCache (tmac tune run) the values generated for one variant are kept
// and copies of them given to the next variant with the same arguments,
// seed and distribution: the random inputs of an 8192^3 GEMM take
// seconds to draw, a copy a fraction of that.
func makeArgs(types []ir.Type, outputs []bool, shapes, sets map[int]string, opts *Options) ([]*runArg, error) {
	c := opts.RefCache
	var key string
	if c != nil {
		key = argsCacheKey(types, outputs, shapes, sets, opts)
		if kept, ok := c.args[key]; ok {
			return cloneArgs(kept), nil
		}
	}
	args, err := drawArgs(types, outputs, shapes, sets, opts)
	if err == nil && c != nil {
		c.args[key] = cloneArgs(args)
	}
	return args, err
}

// argsCacheKey says what decides makeArgs' values.
func argsCacheKey(types []ir.Type, outputs []bool, shapes, sets map[int]string, opts *Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d dist %s\n", opts.Seed, opts.Dist)
	for i, t := range types {
		fmt.Fprintf(&b, "%s output=%t shape=%q set=%q\n", t, outputs[i], shapes[i], sets[i])
	}
	return b.String()
}

// cloneArgs copies args, buffers included (the runner writes into its
// arguments' buffers: poisoned outputs, downloads).
func cloneArgs(args []*runArg) []*runArg {
	out := make([]*runArg, len(args))
	for i, a := range args {
		c := *a
		if a.buf != nil {
			c.buf = a.buf.Clone()
		}
		out[i] = &c
	}
	return out
}

// drawArgs draws the host values of the entry's arguments: random inputs
// from opts.Seed, poisoned outputs, the scalars given with --set.
func drawArgs(types []ir.Type, outputs []bool, shapes, sets map[int]string, opts *Options) ([]*runArg, error) {
	for i := range shapes {
		if i >= len(types) {
			return nil, fmt.Errorf("--shape arg%d: the entry function has %d arguments", i, len(types))
		}
		if _, ok := types[i].(*ir.MemRefType); !ok {
			return nil, fmt.Errorf("--shape arg%d: argument #%d is '%s', not a memref", i, i, types[i])
		}
	}
	for i := range sets {
		if i >= len(types) {
			return nil, fmt.Errorf("--set arg%d: the entry function has %d arguments", i, len(types))
		}
	}
	r := rand.New(rand.NewSource(opts.Seed))
	args := make([]*runArg, len(types))
	for i, t := range types {
		a := &runArg{typ: t, output: outputs[i]}
		args[i] = a
		switch t := t.(type) {
		case *ir.MemRefType:
			shape := append([]int64(nil), t.Shape()...)
			if s, ok := shapes[i]; ok {
				given, err := parseShape(s)
				if err != nil {
					return nil, fmt.Errorf("--shape arg%d: %v", i, err)
				}
				if len(given) != len(shape) {
					return nil, fmt.Errorf("--shape arg%d=%s: argument #%d has rank %d", i, s, i, len(shape))
				}
				for d := range shape {
					if shape[d] != ir.Dynamic && shape[d] != given[d] {
						return nil, fmt.Errorf("--shape arg%d=%s: dimension %d of '%s' is %d", i, s, d, t, shape[d])
					}
				}
				shape = given
			}
			for d := range shape {
				if shape[d] == ir.Dynamic {
					return nil, fmt.Errorf("argument #%d ('%s') has dynamic sizes: give them with --shape arg%d=AxB", i, t, i)
				}
			}
			if strides, _, ok := t.StridesAndOffset(); !ok || !isIdentity(t, strides) {
				return nil, fmt.Errorf("argument #%d ('%s'): only identity-layout memrefs can be entry arguments", i, t)
			}
			b, err := buffer.New(t.Elem, shape)
			if err != nil {
				return nil, fmt.Errorf("argument #%d ('%s'): %v", i, t, err)
			}
			if a.output {
				b.Poison()
			} else {
				b.FillRandom(r, buffer.Dist(opts.Dist))
			}
			a.buf = b
		case *ir.IntegerType, *ir.IndexType:
			s, ok := sets[i]
			if !ok {
				return nil, fmt.Errorf("argument #%d is an integer ('%s'): give its value with --set arg%d=N", i, t, i)
			}
			n, err := strconv.ParseInt(s, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("--set arg%d=%s: not an integer", i, s)
			}
			a.scalar = n
		case *ir.FloatType:
			if s, ok := sets[i]; ok {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("--set arg%d=%s: not a number", i, s)
				}
				a.scalar = v
			} else {
				b, _ := buffer.New(t, []int64{1})
				b.FillRandom(r, buffer.Dist(opts.Dist))
				a.scalar = b.Float(0)
			}
		default:
			return nil, fmt.Errorf("argument #%d has type '%s', which tmac run cannot provide", i, t)
		}
	}
	return args, nil
}

func isIdentity(t *ir.MemRefType, strides []int64) bool {
	s := int64(1)
	shape := t.Shape()
	for i := len(shape) - 1; i >= 0; i-- {
		if strides[i] != ir.Dynamic && strides[i] != s && shape[i] != 1 {
			return false
		}
		if shape[i] == ir.Dynamic {
			s = ir.Dynamic
			// Later (outer) strides are dynamic too; accept them.
			for j := i - 1; j >= 0; j-- {
				if strides[j] != ir.Dynamic {
					return false
				}
			}
			return true
		}
		s *= shape[i]
	}
	return true
}

// uploadArgs copies the memref arguments to the device.
func uploadArgs(dev plan.Device, args []*runArg) ([]plan.Value, []*plan.Mem, error) {
	vals := make([]plan.Value, len(args))
	mems := make([]*plan.Mem, len(args))
	for i, a := range args {
		if a.buf == nil {
			vals[i] = a.scalar
			continue
		}
		m, err := plan.Upload(dev, a.buf)
		if err != nil {
			return nil, nil, err
		}
		vals[i], mems[i] = m, m
	}
	return vals, mems, nil
}
