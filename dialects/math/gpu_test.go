package math

import (
	"strings"
	"testing"
)

// TestEveryLoweringMeasured checks that the docs of every op computed by
// libdevice or an approximation state an accuracy measured on the GPU, by
// default and, where afn changes the lowering, with afn.
func TestEveryLoweringMeasured(t *testing.T) {
	for name, l := range Lowerings {
		doc := gpuDoc(name)
		if name == "math.fpowi" {
			continue // its error depends on the power; documented as a bound
		}
		if strings.Contains(doc, "Measured: not yet") {
			t.Errorf("%s: no GPU measurement in its docs", name)
		}
		if l.Approx != "" && strings.Count(doc, "Measured:") != 2 {
			t.Errorf("%s: the afn lowering has no measurement in its docs", name)
		}
	}
	for name := range measuredOnGPU {
		if Lowerings[name] == nil && exactDocs[name] == "" {
			t.Errorf("%s: measured but not a float op with a GPU lowering", name)
		}
	}
}
