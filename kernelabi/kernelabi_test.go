package kernelabi

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/ir"
)

// argTypes parses the argument types of a function written in IR.
func argTypes(t *testing.T, args string) []ir.Type {
	t.Helper()
	mod, err := ir.Parse("t.tma", "func.func private @f("+args+")", ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fn := mod.Region(0).Entry().Ops()[0]
	return fn.Attr("function_type").(*ir.TypeAttr).Value.(*ir.FunctionType).Inputs
}

func describe(ps []Param) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s:%d:%s:%d", p.Name, p.Arg, p.Role, p.Dim))
	}
	return strings.Join(parts, " ")
}

// TestParams lays out every kind of argument: a memref's base, then its
// dynamic offset, sizes and strides in that order; static ones are not
// passed; a tensor map is one parameter; scalars pass as themselves.
func TestParams(t *testing.T) {
	args := argTypes(t, "%s: f32, %m: memref<?x8x?xbf16, strided<[?, ?, 1], offset: ?>>, %d: !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>, %n: memref<4x4xi32>, %i: index")
	ps, err := Params(args, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "arg0:0:scalar:0 arg1:1:base:0 arg1.offset:1:offset:0 arg1.size0:1:size:0 arg1.size2:1:size:2 arg1.stride0:1:stride:0 arg1.stride1:1:stride:1 " +
		"arg2:2:tensormap:0 arg3:3:base:0 arg4:4:scalar:0"
	if got := describe(ps); got != want {
		t.Errorf("layout\n%s\nwant\n%s", got, want)
	}
}

// TestParamsRefuses: a kernel cannot take shared memory (a device
// function can), and vet is asked in argument order, so the first
// argument that cannot be passed is reported.
func TestParamsRefuses(t *testing.T) {
	shared := argTypes(t, "%a: memref<4xf32, 3>")
	if _, err := Params(shared, true, nil); err == nil || err.Error() != "argument #0: a kernel cannot take a shared-memory memref ('memref<4xf32, 3>')" {
		t.Errorf("shared memref in a kernel: %v", err)
	}
	if _, err := Params(shared, false, nil); err != nil {
		t.Errorf("shared memref in a device function: %v", err)
	}
	args := argTypes(t, "%a: memref<4xf32>, %b: i32, %c: memref<4xf16, 3>")
	var asked []string
	vet := func(t ir.Type) error {
		asked = append(asked, t.String())
		if t.String() == "i32" {
			return errors.New("i32 refused")
		}
		return nil
	}
	if _, err := Params(args, true, vet); err == nil || err.Error() != "argument #1: i32 refused" {
		t.Errorf("vetted: %v", err)
	}
	if got := strings.Join(asked, " "); got != "f32 i32" {
		t.Errorf("vet asked about %s, want the element type of #0, then #1", got)
	}
}

func TestRoleNames(t *testing.T) {
	for r := RoleScalar; r <= RoleTensorMap; r++ {
		back, ok := ParseRole(r.String())
		if !ok || back != r {
			t.Errorf("%v does not parse back: %v %v", r, back, ok)
		}
	}
	if _, ok := ParseRole("pointer"); ok {
		t.Errorf("an unknown role parsed")
	}
}
