package codegen

import "testing"

// TestWgmmaRSAsmText: the RS form's operands are d, {a0..a3}, b-desc,
// scale-d, imm-scale-a, imm-scale-b, imm-trans-b (no imm-trans-a).
func TestWgmmaRSAsmText(t *testing.T) {
	cases := []struct {
		n     int64
		a, lb string
		nacc  int
		want  string
	}{
		{8, "bf16", "col", 4,
			"{\n.reg .pred p;\nsetp.ne.b32 p, $13, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, 1, 1, 0;\n}\n"},
		{16, "f16", "row", 8,
			"{\n.reg .pred p;\nsetp.ne.b32 p, $21, 0;\nwgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, {$16, $17, $18, $19}, $20, p, 1, 1, 1;\n}\n"},
	}
	for _, c := range cases {
		if got := wgmmaRSAsm(c.n, c.a, c.a, "f32", c.lb, c.nacc); got != c.want {
			t.Errorf("m64n%dk16 %s %s: got\n%q\nwant\n%q", c.n, c.a, c.lb, got, c.want)
		}
	}
}
