// Package all links in every pass tmac registers; import it for its side
// effect, as dialects/all is imported for the dialects.
package all

import (
	_ "github.com/tmac-dev/tmac/passes/lowernvgpu"
	_ "github.com/tmac-dev/tmac/passes/mbarrier"
	_ "github.com/tmac-dev/tmac/passes/outline"
	_ "github.com/tmac-dev/tmac/passes/pipelining"
	_ "github.com/tmac-dev/tmac/passes/smemplan"
	_ "github.com/tmac-dev/tmac/passes/transforms"
)
