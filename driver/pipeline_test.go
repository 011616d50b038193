package driver

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/passes"
)

// The default pipeline names registered passes in an order their needs
// accept, and its text is the table's.
func TestDefaultPipeline(t *testing.T) {
	steps, err := passes.ParsePipeline(DefaultPipeline)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(DefaultSteps) {
		t.Fatalf("%d steps parsed from %s, %d in the table", len(steps), DefaultPipeline, len(DefaultSteps))
	}
	for i, s := range steps {
		if s.PassName != DefaultSteps[i].Pass || DefaultSteps[i].Reason == "" {
			t.Errorf("step %d: %s parsed, table has %+v", i, s.PassName, DefaultSteps[i])
		}
	}
	table := DefaultPipelineTable("  ")
	for _, line := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
		if len(line) > 80 {
			t.Errorf("line over 80 columns: %q", line)
		}
	}
}
