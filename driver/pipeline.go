package driver

import (
	"fmt"
	"strings"

	_ "github.com/tmac-dev/tmac/passes/all" // the passes DefaultSteps names
)

// PipelineStep is one pass of the default pipeline and why it runs there.
type PipelineStep struct {
	Pass, Reason string
}

// DefaultSteps is the pass pipeline `tmac compile` (and `tmac run`,
// `tmac tune` and `tmac explain` on .tma input) runs before code
// generation, in order. The passes' own needs (passes.Info.Needs) are
// checked whenever the pipeline is parsed.
var DefaultSteps = []PipelineStep{
	{"outline-kernels", "gpu.launch bodies become gpu.func kernels launched by gpu.launch_func"},
	{"warp-specialize", "loops marked tmac.warp_specialize become producer and consumer warpgroups (before tma-pipeline takes the other tile loops)"},
	{"tma-pipeline", "the other tile loops become multistage TMA pipelines"},
	{"mbarrier-phase", "computes the parities of the waits tma-pipeline wrote and checks the explicit ones"},
	{"smem-plan", "places the data buffers while their TMA and wgmma readers are still nvgpu ops, which tell it each buffer's alignment and when its last read ends (so buffers share bytes)"},
	{"lower-nvgpu", "nvgpu becomes nvvm; each barrier group becomes shared memory marked tmac.mbarriers"},
	{"wgmma-acc-init", "a loop that resets its wgmma accumulator to zero starts the next accumulation with the wgmma's scale-d = 0 instead (zeros in the registers make ptxas serialise every wgmma)"},
	{"smem-plan", "places that barrier memory after the data buffers, live for the whole kernel"},
	{"canonicalize", "folds the constants and index arithmetic the passes left"},
	{"cse", "merges the duplicate constants and pure ops"},
}

// DefaultPipeline is DefaultSteps as a textual pipeline, the default of
// --pass-pipeline.
var DefaultPipeline = pipelineText(DefaultSteps)

func pipelineText(steps []PipelineStep) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Pass
	}
	return "builtin.module(" + strings.Join(names, ",") + ")"
}

// DefaultPipelineTable prints DefaultSteps for --help: a pass per line
// after indent, its reason beside it, wrapped to 80 columns.
func DefaultPipelineTable(indent string) string {
	width := 0
	for _, s := range DefaultSteps {
		width = max(width, len(s.Pass))
	}
	var sb strings.Builder
	for _, s := range DefaultSteps {
		line := fmt.Sprintf("%s%-*s ", indent, width, s.Pass)
		col := len(line)
		for _, w := range strings.Fields(s.Reason) {
			if len(line)+1+len(w) > 80 && len(line) > col {
				sb.WriteString(line + "\n")
				line = strings.Repeat(" ", col)
			}
			line += " " + w
		}
		sb.WriteString(line + "\n")
	}
	return sb.String()
}
