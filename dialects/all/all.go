// Package all links every dialect tmac supports into the binary; importing
// it registers their ops, types and attributes.
//
// go generate here writes each dialect's typed op accessors
// (dialects/<d>/ops_gen.go) from the registry; see internal/opgen.
package all

//go:generate go run -tags opgen ../../internal/opgen/cmd/opgen ../..

import (
	_ "github.com/tmac-dev/tmac/dialects/arith"
	_ "github.com/tmac-dev/tmac/dialects/builtin"
	_ "github.com/tmac-dev/tmac/dialects/cf"
	_ "github.com/tmac-dev/tmac/dialects/func"
	_ "github.com/tmac-dev/tmac/dialects/gpu"
	_ "github.com/tmac-dev/tmac/dialects/index"
	_ "github.com/tmac-dev/tmac/dialects/llvm"
	_ "github.com/tmac-dev/tmac/dialects/math"
	_ "github.com/tmac-dev/tmac/dialects/memref"
	_ "github.com/tmac-dev/tmac/dialects/nvgpu"
	_ "github.com/tmac-dev/tmac/dialects/nvvm"
	_ "github.com/tmac-dev/tmac/dialects/scf"
	_ "github.com/tmac-dev/tmac/dialects/tmac"
	_ "github.com/tmac-dev/tmac/dialects/vector"
)
