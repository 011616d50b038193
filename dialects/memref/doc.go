// Package memref registers the memref dialect: allocation (alloc, alloca,
// dealloc), element access (load, store), views (view, subview, cast,
// reinterpret_cast), globals (global, get_global), assume_alignment and dim.
//
// It also exports the layout helpers later passes use: strides and offsets
// of memref types (StridesAndOffset), subview result-type inference and
// checking (InferSubViewResultType, InferRankReducedSubViewResultType,
// CheckSubViewResult), cast compatibility (IsCastCompatible), and the
// custom<DynamicIndexList> directive (ParseDynamicIndexList,
// FormatDynamicIndexList) that other dialects' formats may use.
package memref
