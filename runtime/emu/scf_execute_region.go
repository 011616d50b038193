package emu

import "github.com/tmac-dev/tmac/dialects/scf"

func init() {
	// scf.execute_region runs its region once in place; compileKernel
	// rejects a region of several blocks, as every unstructured region.
	register(direct(func(t *thread, in *instr) {
		res := t.runCode(in.regions[0], nil)
		for i := range in.out {
			t.set(in, i, res[i])
		}
	}), scf.ExecuteRegion)
}
