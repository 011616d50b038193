package ir

// Memory effects declared on op definitions (OpDef.Effects): which operand
// an op reads or writes, and through which proxy. Passes ask these
// questions instead of keeping their own lists of op names and operand
// positions.

// EffectKind is what an op does to memory.
type EffectKind uint8

const (
	// Read: the op reads the memory.
	Read EffectKind = iota + 1
	// Write: the op writes the memory.
	Write
	// Allocate: the op's result is newly allocated memory.
	Allocate
	// Free: the op releases the memory.
	Free
)

var effectKindNames = [...]string{Read: "read", Write: "write", Allocate: "allocate", Free: "free"}

func (k EffectKind) String() string {
	if int(k) < len(effectKindNames) && effectKindNames[k] != "" {
		return effectKindNames[k]
	}
	return "unknown effect"
}

// Proxy is the path a memory access takes. PTX orders the generic proxy
// (ordinary loads and stores) and the async proxy (TMA, wgmma's shared-
// memory operands) separately: shared memory written through one and read
// through the other needs fence.proxy.async between them.
type Proxy uint8

const (
	GenericProxy Proxy = iota
	AsyncProxy
)

func (p Proxy) String() string {
	if p == AsyncProxy {
		return "async proxy"
	}
	return "generic proxy"
}

// Effect is one memory effect of an op.
type Effect struct {
	Kind EffectKind
	// Operand names the operand group (a memref or pointer) the effect is
	// on; empty: memory no operand names (a wgmma's descriptors, a
	// barrier), or for Allocate the op's result.
	Operand string
	Proxy   Proxy
}

// Effects returns the memory effects declared on op's definition.
func (op *Operation) Effects() []Effect { return op.def.Effects }

// HasNoMemoryEffect reports whether op reads and writes no memory: it is
// Pure or declared NoMemoryEffect (a division, which is not speculatable
// but touches no memory).
func (op *Operation) HasNoMemoryEffect() bool {
	return op.def.Traits&(Pure|NoMemoryEffect) != 0
}

// Writes reports whether op declares a write of the operand v.
func (op *Operation) Writes(v Value) bool { return op.affects(Write, v, nil) }

// Reads reports whether op declares a read of the operand v.
func (op *Operation) Reads(v Value) bool { return op.affects(Read, v, nil) }

// WritesThrough reports whether op declares a write of the operand v
// through proxy p (a TMA load writes its tile through the async proxy, a
// memref.store through the generic one).
func (op *Operation) WritesThrough(v Value, p Proxy) bool { return op.affects(Write, v, &p) }

// ReadsThrough reports whether op declares a read of the operand v through
// proxy p (a TMA store reads its tile through the async proxy).
func (op *Operation) ReadsThrough(v Value, p Proxy) bool { return op.affects(Read, v, &p) }

func (op *Operation) affects(k EffectKind, v Value, p *Proxy) bool {
	for _, e := range op.def.Effects {
		if e.Kind != k || e.Operand == "" || p != nil && e.Proxy != *p {
			continue
		}
		for _, x := range op.OperandGroup(e.Operand) {
			if x == v {
				return true
			}
		}
	}
	return false
}

// AccessesMemory reports whether op declares a read or write of memory of
// the given kind (Read or Write), on any operand or none.
func (op *Operation) AccessesMemory(k EffectKind) bool {
	for _, e := range op.def.Effects {
		if e.Kind == k {
			return true
		}
	}
	return false
}
