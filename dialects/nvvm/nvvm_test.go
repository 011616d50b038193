package nvvm

import (
	"testing"

	"github.com/tmac-dev/tmac/dialects/llvm"
)

func TestSMVersion(t *testing.T) {
	cases := []struct {
		chip string
		ver  int
		arch bool
		ok   bool
	}{
		{"sm_90a", 90, true, true}, {"sm_90", 90, false, true}, {"sm_100f", 100, false, true},
		{"sm_20", 20, false, true}, {"foo", 0, false, false}, {"sm_", 0, false, false},
	}
	for _, c := range cases {
		v, a, ok := SMVersion(c.chip)
		if v != c.ver || a != c.arch || ok != c.ok {
			t.Errorf("SMVersion(%q) = %d, %v, %v", c.chip, v, a, ok)
		}
	}
}

func TestWGMMARules(t *testing.T) {
	if !WGMMANValid("f16", 8) || WGMMANValid("f16", 12) || !WGMMANValid("f16", 256) || WGMMANValid("f16", 264) {
		t.Error("f16 n rules")
	}
	if !WGMMANValid("s8", 24) || WGMMANValid("s8", 40) || !WGMMANValid("s8", 48) {
		t.Error("s8 n rules")
	}
	if WGMMAK("tf32") != 8 || WGMMAK("b1") != 256 || WGMMAK("e4m3") != 32 || WGMMAK("bf16") != 16 {
		t.Error("k rules")
	}
	if !wgmmaTypesOK("e4m3", "e5m2", "f16") || wgmmaTypesOK("f16", "bf16", "f32") || wgmmaTypesOK("tf32", "tf32", "f16") {
		t.Error("type combinations")
	}
}

func TestAttrText(t *testing.T) {
	if s := ShflKind.Attr("bfly").String(); s != "#nvvm<shfl_kind bfly>" {
		t.Error(s)
	}
	if s := ProxyKind.Attr("async.shared").String(); s != "#nvvm.proxy_kind<async.shared>" {
		t.Error(s)
	}
	if s := Target(TargetData{O: 3, Triple: DefaultTriple, Chip: "sm_90", Features: "+ptx80", VerifyTarget: true}).String(); s != `#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">` {
		t.Error(s)
	}
	if s := llvm.ConstantRange(32, 4294967295, 4294967295).String(); s != "#llvm.constant_range<i32, -1, -1>" {
		t.Error(s)
	}
}
