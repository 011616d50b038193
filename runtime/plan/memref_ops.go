package plan

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// memref.copy and memref.realloc on the host: a copy between host and
// device memory in either direction (contiguous memrefs of the same
// shape), and a reallocation that copies the elements both sizes hold
// into a new buffer where the source lived (host or device) and frees
// the source.

func init() {
	hostOps[memref.Copy] = (*Exec).copyOp
	hostOps[memref.Realloc] = (*Exec).realloc
}

func (x *Exec) copyOp(op *ir.Operation) error {
	c := memref.CopyOp{Op: op}
	src, _ := x.vals[c.Source()].(*Mem)
	dst, _ := x.vals[c.Target()].(*Mem)
	if src == nil || dst == nil {
		return errAt(op, "operands are not memrefs")
	}
	if fmt.Sprint(src.Shape) != fmt.Sprint(dst.Shape) {
		return errAt(op, "the source has shape %v and the target %v", src.Shape, dst.Shape)
	}
	if !src.Contiguous() || !dst.Contiguous() {
		return errAt(op, "memref.copy on the host needs contiguous memrefs")
	}
	if err := x.memcpy(dst, src); err != nil {
		return errAt(op, "%v", err)
	}
	return nil
}

func (x *Exec) realloc(op *ir.Operation) error {
	r := memref.ReallocOp{Op: op}
	src, _ := x.vals[r.Source()].(*Mem)
	if src == nil || !src.Contiguous() {
		return errAt(op, "the source is not a contiguous memref")
	}
	n := r.Result().Type().(*ir.MemRefType).Shape()[0]
	if d := r.DynamicResultSize(); d != nil {
		n = x.int(d)
	}
	m, err := NewMem(src.Elem, []int64{n})
	if err != nil {
		return errAt(op, "%v", err)
	}
	keep := *src
	keep.Shape = []int64{min(n, src.Shape[0])}
	part := *m
	part.Shape = keep.Shape
	if src.OnDevice() {
		if m.Dev, err = x.Dev.Alloc(max(m.Bytes(), 1)); err != nil {
			return errAt(op, "%v", err)
		}
		x.allocs = append(x.allocs, m.Dev)
		part.Dev = m.Dev
	} else {
		m.Host = make([]byte, m.Bytes())
		part.Host = m.Host
	}
	if err := x.memcpy(&part, &keep); err != nil {
		return errAt(op, "%v", err)
	}
	for i, a := range x.allocs {
		if src.OnDevice() && a == src.Dev {
			if err := x.Dev.Free(a); err != nil {
				return errAt(op, "%v", err)
			}
			x.allocs = append(x.allocs[:i], x.allocs[i+1:]...)
			break
		}
	}
	x.setResults(op, m)
	return nil
}
