package gpu

import (
	"github.com/tmac-dev/tmac/ir"
)

// The sparse ops (cuSPARSE calls from the host: sparse matrix and dense
// tensor handles, SpMV, SpMM, SDDMM, SpGEMM) and their handle types. They
// parse, print and verify as upstream's; tmac runs no cuSPARSE, and
// `tmac run` rejects them as host ops it does not execute.

// The handle types.
var (
	DnTensorHandle = ir.DialectTypeOf("gpu", "sparse.dntensor_handle", "!gpu.sparse.dntensor_handle", nil)
	SpMatHandle    = ir.DialectTypeOf("gpu", "sparse.spmat_handle", "!gpu.sparse.spmat_handle", nil)
	SpGEMMHandle   = ir.DialectTypeOf("gpu", "sparse.spgemmop_handle", "!gpu.sparse.spgemmop_handle", nil)
	sparseHandles  = map[string]ir.Type{"sparse.dntensor_handle": DnTensorHandle, "sparse.spmat_handle": SpMatHandle, "sparse.spgemmop_handle": SpGEMMHandle}
)

var (
	dnTensorC = ir.TypeConstraint{Desc: "dense tensor handle type", OK: func(t ir.Type) bool { return t == ir.Type(DnTensorHandle) }, Fixed: DnTensorHandle}
	spMatC    = ir.TypeConstraint{Desc: "sparse matrix handle type", OK: func(t ir.Type) bool { return t == ir.Type(SpMatHandle) }, Fixed: SpMatHandle}
	spGEMMC   = ir.TypeConstraint{Desc: "SpGEMM operation handle type", OK: func(t ir.Type) bool { return t == ir.Type(SpGEMMHandle) }, Fixed: SpGEMMHandle}
	anyMemRef = ir.AnyMemRef
)

const sparseDoc = "**Not run by tmac.** A cuSPARSE call from the host; `tmac run` executes no cuSPARSE and rejects the program (the op parses, prints and verifies as upstream's)."

// sparseOp defines one sparse op: async dependencies first, then the
// operands; results named as upstream's printer names them (ops declaring
// several results).
func sparseOp(name, summary string, operands []ir.ArgSpec, results []ir.ArgSpec, attrs []ir.AttrSpec, format string) *ir.OpDef {
	d := &ir.OpDef{
		Name:        name,
		Summary:     summary + " (cuSPARSE; not run by tmac)",
		Operands:    asyncOperands(operands...),
		Results:     append(results, asyncResult),
		Attrs:       attrs,
		Format:      "custom<GPUAsyncDependencies>(type($asyncToken), $asyncDependencies) " + format,
		VerifyProps: propConversion,
		Doc:         sparseDoc,
	}
	if len(d.Results) > 1 {
		var names []string
		for _, r := range d.Results {
			names = append(names, r.Name)
		}
		d.ResultNames = nameResultGroups(names...)
	}
	for _, o := range operands {
		if o.Kind == ir.Variadic {
			d.Traits |= ir.AttrSizedOperandSegments
		}
	}
	return d
}

func arg(name string, t ir.TypeConstraint) ir.ArgSpec { return ir.ArgSpec{Name: name, Type: t} }

func indexArgs(names ...string) []ir.ArgSpec {
	var out []ir.ArgSpec
	for _, n := range names {
		out = append(out, arg(n, ir.IndexOnly))
	}
	return out
}

// A sparse matrix's constructor: sizes, then its memrefs.
func createSpMat(name, summary string, sizes []string, memrefs ...string) *ir.OpDef {
	ops := indexArgs(sizes...)
	var fmtArgs, fmtTypes string
	for i, s := range sizes {
		if i > 0 {
			fmtArgs += " `,` "
		}
		fmtArgs += "$" + s
	}
	for i, m := range memrefs {
		ops = append(ops, arg(m, anyMemRef))
		fmtArgs += " `,` $" + m
		if i > 0 {
			fmtTypes += " `,` "
		}
		fmtTypes += "type($" + m + ")"
	}
	return sparseOp(name, summary, ops, []ir.ArgSpec{arg("spmat", spMatC)}, nil, fmtArgs+" attr-dict `:` "+fmtTypes)
}

func transposeMode(opName, name string) ir.AttrSpec {
	s := MatTranspose.attr(opName, name, "transpose mode of sparse matrix supported by sparse tensor ops")
	s.Default = MatTranspose.Attr("NON_TRANSPOSE")
	return s
}

var computeTypeAttr = ir.AttrSpec{Name: "computeType", Constraint: ir.TypeAttrC}

func init() {
	ir.Register(
		sparseOp("gpu.create_dn_tensor", "Creates a dense tensor handle",
			[]ir.ArgSpec{arg("memref", anyMemRef), {Name: "dims", Kind: ir.Variadic, Type: ir.IndexOnly}},
			[]ir.ArgSpec{arg("dnTensor", dnTensorC)}, nil,
			"$memref `,` $dims attr-dict `:` type($dims) `into` type($memref)"),
		sparseOp("gpu.destroy_dn_tensor", "Destroys a dense tensor handle",
			[]ir.ArgSpec{arg("dnTensor", dnTensorC)}, nil, nil, "$dnTensor attr-dict"),
		createSpMat("gpu.create_coo", "Creates a sparse matrix handle in COO format", []string{"rows", "cols", "nnz"}, "rowIdxs", "colIdxs", "values"),
		createSpMat("gpu.create_coo_aos", "Creates a sparse matrix handle in COO format with interleaved coordinates", []string{"rows", "cols", "nnz"}, "idxs", "values"),
		createSpMat("gpu.create_csr", "Creates a sparse matrix handle in CSR format", []string{"rows", "cols", "nnz"}, "rowPos", "colIdxs", "values"),
		createSpMat("gpu.create_csc", "Creates a sparse matrix handle in CSC format", []string{"rows", "cols", "nnz"}, "colPos", "rowIdxs", "values"),
		createSpMat("gpu.create_bsr", "Creates a sparse matrix handle in BSR format", []string{"brows", "bcols", "bnnz", "rBlockSize", "cBlockSize"}, "bRowPos", "bColIdxs", "values"),
		sparseOp("gpu.create_2to4_spmat", "Creates a 2:4 structured sparse matrix handle",
			append(indexArgs("rows", "cols"), arg("memref", anyMemRef)),
			[]ir.ArgSpec{arg("spMat", spMatC)},
			[]ir.AttrSpec{{Name: "pruneFlag", Constraint: Prune2To4.constraint("pruning strategy for 2:4 sparse matrix"), Default: Prune2To4.Attr("PRUNE_AND_CHECK"), Syntax: Prune2To4.syntax("gpu.create_2to4_spmat")}},
			"`{` $pruneFlag `}` $rows `,` $cols `,` $memref attr-dict `:` type($memref)"),
		sparseOp("gpu.destroy_sp_mat", "Destroys a sparse matrix handle",
			[]ir.ArgSpec{arg("spmat", spMatC)}, nil, nil, "$spmat attr-dict"),
		sparseOp("gpu.spmv_buffer_size", "Buffer size for SpMV",
			[]ir.ArgSpec{arg("spmatA", spMatC), arg("dnX", dnTensorC), arg("dnY", dnTensorC)},
			[]ir.ArgSpec{arg("bufferSz", ir.IndexOnly)},
			[]ir.AttrSpec{transposeMode("gpu.spmv_buffer_size", "modeA"), computeTypeAttr},
			"$spmatA (`{` $modeA^ `}`)? `,` $dnX `,` $dnY attr-dict `into` $computeType"),
		sparseOp("gpu.spmv", "Sparse matrix times dense vector",
			[]ir.ArgSpec{arg("spmatA", spMatC), arg("dnX", dnTensorC), arg("dnY", dnTensorC), arg("buffer", anyMemRef)}, nil,
			[]ir.AttrSpec{transposeMode("gpu.spmv", "modeA"), computeTypeAttr},
			"$spmatA (`{` $modeA^ `}`)? `,` $dnX `,` $dnY `,` $buffer attr-dict `:` type($buffer) `into` $computeType"),
		withResultSegments(sparseOp("gpu.spmm_buffer_size", "Buffer sizes for SpMM",
			[]ir.ArgSpec{arg("spmatA", spMatC), arg("dnmatB", dnTensorC), arg("dnmatC", dnTensorC)},
			[]ir.ArgSpec{{Name: "bufferSzs", Kind: ir.Variadic, Type: ir.IndexOnly}},
			[]ir.AttrSpec{transposeMode("gpu.spmm_buffer_size", "modeA"), transposeMode("gpu.spmm_buffer_size", "modeB"), computeTypeAttr},
			"$spmatA (`{` $modeA^ `}`)? `,` $dnmatB (`{` $modeB^ `}`)? `,` $dnmatC attr-dict `:` type($bufferSzs) `into` $computeType")),
		sparseOp("gpu.spmm", "Sparse matrix times dense matrix",
			[]ir.ArgSpec{arg("spmatA", spMatC), arg("dnmatB", dnTensorC), arg("dnmatC", dnTensorC), {Name: "buffers", Kind: ir.Variadic, Type: anyMemRef}}, nil,
			[]ir.AttrSpec{transposeMode("gpu.spmm", "modeA"), transposeMode("gpu.spmm", "modeB"), computeTypeAttr},
			"$spmatA (`{` $modeA^ `}`)? `,` $dnmatB (`{` $modeB^ `}`)? `,` $dnmatC `,` $buffers attr-dict `:` type($buffers) `into` $computeType"),
		sparseOp("gpu.sddmm_buffer_size", "Buffer size for SDDMM",
			[]ir.ArgSpec{arg("dnmatA", dnTensorC), arg("dnmatB", dnTensorC), arg("spmatC", spMatC)},
			[]ir.ArgSpec{arg("bufferSz", ir.IndexOnly)},
			[]ir.AttrSpec{transposeMode("gpu.sddmm_buffer_size", "modeA"), transposeMode("gpu.sddmm_buffer_size", "modeB"), computeTypeAttr},
			"$dnmatA (`{` $modeA^ `}`)? `,` $dnmatB (`{` $modeB^ `}`)? `,` $spmatC attr-dict `into` $computeType"),
		sparseOp("gpu.sddmm", "Sampled dense-dense matrix product",
			[]ir.ArgSpec{arg("dnmatA", dnTensorC), arg("dnmatB", dnTensorC), arg("spmatC", spMatC), arg("buffer", anyMemRef)}, nil,
			[]ir.AttrSpec{transposeMode("gpu.sddmm", "modeA"), transposeMode("gpu.sddmm", "modeB"), computeTypeAttr},
			"$dnmatA (`{` $modeA^ `}`)? `,` $dnmatB (`{` $modeB^ `}`)? `,` $spmatC `,` $buffer attr-dict `:` type($buffer) `into` $computeType"),
		sparseOp("gpu.spgemm_create_descr", "Creates an SpGEMM operation descriptor",
			nil, []ir.ArgSpec{arg("desc", spGEMMC)}, nil, "attr-dict"),
		sparseOp("gpu.spgemm_destroy_descr", "Destroys an SpGEMM operation descriptor",
			[]ir.ArgSpec{arg("desc", spGEMMC)}, nil, nil, "$desc attr-dict"),
		sparseOp("gpu.spgemm_work_estimation_or_compute", "SpGEMM work estimation or computation",
			[]ir.ArgSpec{arg("desc", spGEMMC), arg("spmatA", spMatC), arg("spmatB", spMatC), arg("spmatC", spMatC), arg("bufferSz", ir.IndexOnly), arg("buffer", anyMemRef)},
			[]ir.ArgSpec{arg("bufferSzNew", ir.IndexOnly)},
			[]ir.AttrSpec{transposeMode("gpu.spgemm_work_estimation_or_compute", "modeA"), transposeMode("gpu.spgemm_work_estimation_or_compute", "modeB"), computeTypeAttr,
				SpGEMMKind.attr("gpu.spgemm_work_estimation_or_compute", "kind", "choose whether spgemm_work_estimation_or_compute does work estimation or compute")},
			"`{` $kind `}` $spmatA (`{` $modeA^ `}`)? `,` $spmatB (`{` $modeB^ `}`)? `,` $spmatC `,` $desc `,` $bufferSz `,` $buffer attr-dict `:` $computeType `into` type($buffer)"),
		sparseOp("gpu.spgemm_copy", "Copies the SpGEMM result",
			[]ir.ArgSpec{arg("desc", spGEMMC), arg("spmatA", spMatC), arg("spmatB", spMatC), arg("spmatC", spMatC)}, nil,
			[]ir.AttrSpec{transposeMode("gpu.spgemm_copy", "modeA"), transposeMode("gpu.spgemm_copy", "modeB"), computeTypeAttr},
			"$spmatA (`{` $modeA^ `}`)? `,` $spmatB (`{` $modeB^ `}`)? `,` $spmatC `,` $desc attr-dict `:` $computeType"),
		sparseOp("gpu.spmat_get_size", "The sizes of a sparse matrix",
			[]ir.ArgSpec{arg("spmat", spMatC)},
			indexArgs("rows", "cols", "nnz"), nil, "$spmat attr-dict"),
		sparseOp("gpu.set_csr_pointers", "Sets the CSR buffers of a sparse matrix",
			[]ir.ArgSpec{arg("spmat", spMatC), arg("positions", anyMemRef), arg("coordinates", anyMemRef), arg("values", anyMemRef)}, nil, nil,
			"$spmat `,` $positions `,` $coordinates `,` $values attr-dict `:` type($positions) `,` type($coordinates) `,` type($values)"),
	)
}

func withResultSegments(d *ir.OpDef) *ir.OpDef {
	d.Traits |= ir.AttrSizedResultSegments
	return d
}

// nameResultGroups names the results of an op by its declared result
// groups (a variadic group prints as one name, %name:N), as upstream's
// printer does for ops declaring several results.
func nameResultGroups(names ...string) func(op *ir.Operation, name func(ir.Value, string)) {
	return func(op *ir.Operation, name func(ir.Value, string)) {
		for _, n := range names {
			if g := op.ResultGroup(n); len(g) > 0 {
				name(g[0], n)
			}
		}
	}
}
