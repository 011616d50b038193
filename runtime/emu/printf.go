package emu

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// printf in kernels: gpu.printf, and llvm.call @printf with its format an
// llvm.mlir.addressof of a constant string global. What each thread
// prints is kept and written to standard error when the launch ends, in
// thread order (blocks in grid order, the threads of a block in order,
// each thread's lines in program order), so a run prints the same text
// whatever the schedule. printf returns the number of arguments it read,
// as CUDA's does. The text is what C's printf writes for the
// format (the conversions d i u x X o c s e E f g G and %%, flags, width,
// precision and the h, l, ll and z length modifiers; hh is rejected, see
// gpu.PrintfFormatProblem).

// globalString is the value of an llvm.mlir.addressof of a string global.
type globalString struct {
	name string
	text string
}

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		ref, _ := llvm.MlirAddressofOp{Op: op}.GlobalName().(*ir.SymbolRefAttr)
		text, ok := llvm.AddressedString(op)
		return func(t *thread, in *instr) {
			if !ok {
				t.failf(in.op, "'%s' of @%s is not emulated: only the address of a string llvm.mlir.global (a printf format) is", in.op.Name(), ref.Leaf())
			}
			t.set(in, 0, globalString{name: ref.Leaf(), text: text})
		}
	}, llvm.MlirAddressof)
	register(prepareLLVMCall, llvm.Call)
	register(func(k *kernel, op *ir.Operation) runFunc {
		p := gpu.PrintfOp{Op: op}
		format, _ := p.Format().(*ir.StringAttr)
		args := k.slots(p.Args())
		return func(t *thread, in *instr) {
			text, _, err := cFormat(format.Value, t.values(args))
			if err != "" {
				t.failf(in.op, "printf format %s: %s", ir.QuoteString(format.Value), err)
			}
			t.b.dev.printed.add(t, text)
		}
	}, gpu.Printf)
}

func prepareLLVMCall(k *kernel, op *ir.Operation) runFunc {
	callee := llvm.CalleeOf(op)
	args := k.slots(llvm.CallOp{Op: op}.CalleeOperands())
	isPrintf := callee != nil && callee.SymbolName() == "printf" && callee.Region(0).Empty()
	return func(t *thread, in *instr) {
		if !isPrintf {
			t.failf(in.op, "'%s' is not emulated: calls are emulated only to a declared printf", in.op.Name())
		}
		format, ok := t.vals[args[0]].(globalString)
		if !ok {
			t.failf(in.op, "the format of printf is not emulated: it must be an llvm.mlir.addressof of a string llvm.mlir.global")
		}
		text, n, err := cFormat(format.text, t.values(args[1:]))
		if err != "" {
			t.failf(in.op, "printf format %s: %s", ir.QuoteString(format.text), err)
		}
		t.b.dev.printed.add(t, text)
		if in.op.NumResults() > 0 {
			t.set(in, 0, int64(n))
		}
	}
}

// printLog keeps the text threads print during a launch.
type printLog struct {
	mu      sync.Mutex
	entries []printEntry
}

type printEntry struct {
	block, thread int
	text          string
}

func (l *printLog) add(t *thread, text string) {
	g, b := t.b.grid, t.c.bid
	block := int(b[0] + g[0]*(b[1]+g[1]*b[2]))
	l.mu.Lock()
	l.entries = append(l.entries, printEntry{block, t.linear, text})
	l.mu.Unlock()
}

// flush writes what was printed in thread order and forgets it.
func (l *printLog) flush(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.SliceStable(l.entries, func(i, j int) bool {
		a, b := l.entries[i], l.entries[j]
		return a.block < b.block || a.block == b.block && a.thread < b.thread
	})
	var sb strings.Builder
	for _, e := range l.entries {
		sb.WriteString(e.text)
	}
	io.WriteString(w, sb.String())
	l.entries = nil
}

// cFormat formats args (int64 for integers, float64 for floats,
// globalString for strings) as C's printf does with format, up to its
// first NUL, and returns the text and what CUDA's printf returns (the
// number of arguments it read, not C's count of characters), or why it
// cannot.
func cFormat(format string, args []any) (string, int, string) {
	if i := strings.IndexByte(format, 0); i >= 0 {
		format = format[:i]
	}
	if msg := gpu.PrintfFormatProblem(format); msg != "" {
		return "", 0, msg
	}
	var sb strings.Builder
	next := 0
	arg := func() (any, string) {
		if next >= len(args) {
			return nil, fmt.Sprintf("conversion #%d has no argument (%d given)", next+1, len(args))
		}
		next++
		return args[next-1], ""
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.') {
			j++
		}
		spec := format[i:j] // %, flags, width and precision
		long := false
		for j < len(format) && strings.IndexByte("hlzjt", format[j]) >= 0 {
			long = long || format[j] != 'h'
			j++
		}
		if j >= len(format) {
			return "", 0, "it ends inside a conversion"
		}
		conv := format[j]
		i = j
		if conv == '%' {
			sb.WriteByte('%')
			continue
		}
		v, msg := arg()
		if msg != "" {
			return "", 0, msg
		}
		switch conv {
		case 'd', 'i', 'u', 'x', 'X', 'o', 'c':
			x, ok := v.(int64)
			if !ok {
				return "", 0, fmt.Sprintf("%%%c takes an integer, argument #%d is %s", conv, next, kindOf(v))
			}
			switch {
			case conv == 'c':
				sb.WriteString(fmt.Sprintf(spec+"c", rune(byte(x))))
			case conv == 'd' || conv == 'i':
				if !long {
					x = int64(int32(x))
				}
				sb.WriteString(fmt.Sprintf(spec+"d", x))
			default:
				u := uint64(x)
				if !long {
					u = uint64(uint32(x))
				}
				verb := map[byte]string{'u': "d", 'x': "x", 'X': "X", 'o': "o"}[conv]
				if strings.Contains(spec, "#") && conv != 'u' {
					sb.WriteString(cAlternate(spec, verb, u))
				} else {
					sb.WriteString(fmt.Sprintf(spec+verb, u))
				}
			}
		case 'e', 'E', 'f', 'F', 'g', 'G':
			x, ok := v.(float64)
			if !ok {
				return "", 0, fmt.Sprintf("%%%c takes a double, argument #%d is %s", conv, next, kindOf(v))
			}
			if !strings.Contains(spec, ".") {
				spec += ".6" // C's default precision (Go's %g has none)
			}
			verb := string(conv)
			if conv == 'F' {
				verb = "f"
			}
			sb.WriteString(fmt.Sprintf(spec+verb, x))
		case 's':
			s, ok := v.(globalString)
			if !ok {
				return "", 0, fmt.Sprintf("%%s takes a string global, argument #%d is %s", next, kindOf(v))
			}
			text := s.text
			if k := strings.IndexByte(text, 0); k >= 0 {
				text = text[:k]
			}
			sb.WriteString(fmt.Sprintf(spec+"s", text))
		default:
			return "", 0, fmt.Sprintf("the conversion %%%c is not emulated", conv)
		}
	}
	return sb.String(), next, ""
}

func kindOf(v any) string {
	switch v.(type) {
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case globalString:
		return "a string"
	}
	return fmt.Sprintf("a %T", v)
}

// cAlternate formats u with C's # flag for %x, %X and %o: the 0x, 0X or 0
// prefix counts in the field width and zero padding goes after it (Go's
// fmt pads the digits to the width on their own).
func cAlternate(spec, verb string, u uint64) string {
	flags := strings.TrimLeft(spec[1:], "-+ #0")
	flagSet := spec[1 : len(spec)-len(flags)]
	digits := fmt.Sprintf("%"+strings.TrimLeft(flags, "0123456789")+verb, u) // precision only
	prefix := ""
	switch {
	case verb == "o" && !strings.HasPrefix(digits, "0"):
		prefix = "0"
	case verb != "o" && u != 0:
		prefix = "0" + verb
	}
	width := 0
	fmt.Sscanf(flags, "%d", &width)
	pad := width - len(prefix) - len(digits)
	switch {
	case pad <= 0:
		return prefix + digits
	case strings.Contains(flagSet, "-"):
		return prefix + digits + strings.Repeat(" ", pad)
	case strings.Contains(flagSet, "0") && !strings.Contains(flags, "."):
		return prefix + strings.Repeat("0", pad) + digits
	}
	return strings.Repeat(" ", pad) + prefix + digits
}
