package plan

import "github.com/tmac-dev/tmac/ir"

// RefSampleAttr on the entry function, `tmac.ref_sample = N : i64`, makes
// tmac run check against a sampled @reference by default (as with
// --ref-sample N): the CPU interpreter runs only N iterations of the
// reference's outermost loop and only the output elements they write are
// compared. For references too large to interpret in full.
const RefSampleAttr = "tmac.ref_sample"

// RefSample returns the entry's tmac.ref_sample value, 0 when it has none.
// The value must be an integer of at least 2 (the first and the last
// iteration are always sampled).
func RefSample(entry *ir.Operation) (int64, error) {
	a := entry.Attr(RefSampleAttr)
	if a == nil {
		return 0, nil
	}
	n, ok := a.(*ir.IntegerAttr)
	if !ok || n.Int() < 2 {
		return 0, entry.EmitError("'%s' must be an integer >= 2 (iterations of @%s's outermost loop to check), got %s", RefSampleAttr, ReferenceName, a)
	}
	return n.Int(), nil
}
