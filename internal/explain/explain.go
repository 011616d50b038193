// Package explain prints the pipeline schedule tmac's passes chose for
// each kernel of a module (tmac explain): the launch, the schedule kind and
// stage count, a timeline of the main loop (which TMA loads are in flight
// in which slot, which slot each iteration consumes and releases), the
// shared-memory map, the mbarriers, and the ops of one main-loop iteration
// (wgmma, syncs, register math). Everything it prints comes from the
// record the passes made while rewriting the kernel (schedule.Schedule) and
// from the kernel after the passes; nothing is re-derived.
package explain

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// Options control the output.
type Options struct {
	// Iterations is how many iterations of the main loop the timeline shows
	// from the start (0: a ring's worth plus one, where the parity flips).
	Iterations int
	// Markdown selects Markdown (headings and pipe tables) over plain text.
	Markdown bool
	// Source gives the text of a source line, for naming values after the
	// program (%as, %k); nil names them by location.
	Source func(file string, line int) (string, bool)
}

// Write prints the schedule of every kernel of mod.
func Write(w io.Writer, mod *ir.Operation, sched *schedule.Schedule, opts Options) {
	e := &explainer{w: w, opts: opts, sched: sched}
	kernels := kernelsOf(mod)
	if len(kernels) == 0 {
		e.para("The module has no GPU kernels.")
		return
	}
	for i, k := range kernels {
		if i > 0 {
			fmt.Fprintln(w)
		}
		e.kernel(mod, k)
	}
}

type explainer struct {
	w     io.Writer
	opts  Options
	sched *schedule.Schedule
	// kernelOp is the kernel being explained, after the passes.
	kernelOp *ir.Operation
}

// kernelsOf returns the gpu.func kernels of mod in order (and gpu.launch
// bodies left unoutlined).
func kernelsOf(mod *ir.Operation) []*ir.Operation {
	var ks []*ir.Operation
	ir.Walk(mod, func(op *ir.Operation) ir.WalkResult {
		switch {
		case op.Name() == gpu.Func && op.HasAttr("gpu.kernel"):
			ks = append(ks, op)
			return ir.Skip
		case op.Name() == gpu.Launch:
			ks = append(ks, op)
			return ir.Skip
		}
		return ir.Advance
	})
	return ks
}

func (e *explainer) md() bool { return e.opts.Markdown }

func (e *explainer) heading(level int, s string) {
	if e.md() {
		fmt.Fprintf(e.w, "%s %s\n\n", strings.Repeat("#", level+1), s)
		return
	}
	if level == 1 {
		fmt.Fprintf(e.w, "== %s ==\n", s)
		return
	}
	fmt.Fprintf(e.w, "\n%s\n", s)
}

func (e *explainer) para(s string) {
	if e.md() {
		fmt.Fprintf(e.w, "%s\n\n", strings.TrimSpace(s))
		return
	}
	fmt.Fprintln(e.w, s)
}

// field prints "name: value" lines (a list item in Markdown).
func (e *explainer) field(name, value string) {
	if e.md() {
		fmt.Fprintf(e.w, "- **%s:** %s\n", name, value)
		return
	}
	fmt.Fprintf(e.w, "  %-10s %s\n", name+":", value)
}

func (e *explainer) endFields() {
	if e.md() {
		fmt.Fprintln(e.w)
	}
}

func (e *explainer) table(t *table) {
	indent := "  "
	if !e.md() && len(t.rows) == 0 {
		return
	}
	t.write(e.w, e.md(), indent)
}

// ---------------------------------------------------------------- names

var (
	resultName = regexp.MustCompile(`(%[A-Za-z0-9_$.\-]+)(:[0-9]+)?\s*=\s*$`)
	forIV      = regexp.MustCompile(`^scf\.for\s+(%[A-Za-z0-9_$.\-]+)`)
)

// sourceLine returns the text of loc's line and its 0-based column.
func (e *explainer) sourceLine(loc ir.Location) (string, int, bool) {
	l, ok := fileLoc(loc)
	if !ok || e.opts.Source == nil {
		return "", 0, false
	}
	text, ok := e.opts.Source(l.File, l.Line)
	if !ok || l.Col < 1 || l.Col-1 > len(text) {
		return "", 0, false
	}
	return text, l.Col - 1, true
}

// fileLoc unwraps a location to its file:line:col.
func fileLoc(loc ir.Location) (ir.FileLineColLoc, bool) {
	switch l := loc.(type) {
	case ir.FileLineColLoc:
		return l, true
	case ir.NameLoc:
		if l.Child != nil {
			return fileLoc(l.Child)
		}
	case ir.CallSiteLoc:
		return fileLoc(l.Callee)
	case ir.FusedLoc:
		for _, c := range l.Locs {
			if f, ok := fileLoc(c); ok {
				return f, true
			}
		}
	}
	return ir.FileLineColLoc{}, false
}

// where writes a location as file:line:col.
func where(loc ir.Location) string {
	if l, ok := fileLoc(loc); ok {
		return l.Pos()
	}
	if loc == nil {
		return "?"
	}
	return loc.String()
}

// valueName is the name the program gives the result of the op at loc
// (%as), or "" if unknown.
func (e *explainer) valueName(loc ir.Location) string {
	text, col, ok := e.sourceLine(loc)
	if !ok {
		return ""
	}
	if m := resultName.FindStringSubmatch(text[:col]); m != nil {
		return m[1]
	}
	return ""
}

// ivName is the induction variable of the scf.for at loc (%k), or "".
func (e *explainer) ivName(loc ir.Location) string {
	text, col, ok := e.sourceLine(loc)
	if !ok {
		return ""
	}
	if m := forIV.FindStringSubmatch(text[col:]); m != nil {
		return m[1]
	}
	return ""
}

// nameAt names the value defined at loc, falling back to its line.
func (e *explainer) nameAt(loc ir.Location) string {
	if n := e.valueName(loc); n != "" {
		return n
	}
	if l, ok := fileLoc(loc); ok {
		return fmt.Sprintf("line %d", l.Line)
	}
	return "?"
}

// ---------------------------------------------------------------- kernel

func dims(op *ir.Operation, name string) ([]int64, bool) {
	if a, ok := op.Attr(name).(*ir.DenseArrayAttr); ok && len(a.Ints) == 3 {
		return a.Ints, true
	}
	return nil, false
}

func dimText(d []int64) string { return fmt.Sprintf("%dx%dx%d", d[0], d[1], d[2]) }

func kernelName(k *ir.Operation) string {
	if k.Name() == gpu.Launch {
		return gpu.Launch + " at " + where(k.Loc)
	}
	if m := k.ParentOp(); m != nil && m.Name() == gpu.Module {
		return fmt.Sprintf("@%s::@%s", m.SymbolName(), k.SymbolName())
	}
	return "@" + k.SymbolName()
}

func (e *explainer) kernel(mod, k *ir.Operation) {
	ks := e.sched.Kernel(k)
	e.kernelOp = k
	e.heading(1, "kernel "+kernelName(k))
	if k.Name() == gpu.Func {
		src := "from " + where(k.Loc)
		if f := enclosingHostFunc(mod, k); f != "" {
			src += ", launched by @" + f
		}
		e.field("source", src)
	}
	e.field("launch", e.launchText(k, ks))
	var loops []*schedule.LoopSchedule
	if ks != nil {
		loops = ks.Loops
	}
	if len(loops) == 0 {
		e.field("schedule", "not pipelined: no loop of the kernel is in the simple tile-loop form (tmac.tma.load/wait), so tma-pipeline and warp-specialize left it as written")
	}
	for i, l := range loops {
		name := "schedule"
		if len(loops) > 1 {
			name = fmt.Sprintf("schedule %d", i+1)
		}
		e.field(name, e.scheduleLine(l))
	}
	e.endFields()
	for i, l := range loops {
		e.loop(ks, l, i, len(loops))
	}
	e.smem(ks)
	e.barriers(ks)
}

// enclosingHostFunc names the host function launching kernel k.
func enclosingHostFunc(mod, k *ir.Operation) string {
	m := k.ParentOp()
	if m == nil || m.Name() != gpu.Module {
		return ""
	}
	name := ""
	ir.Walk(mod, func(op *ir.Operation) ir.WalkResult {
		if name != "" {
			return ir.Skip
		}
		if l, ok := gpu.AsLaunchFunc(op); ok {
			if ref, ok := l.Kernel().(*ir.SymbolRefAttr); ok && ref.Root == m.SymbolName() && len(ref.Nested) == 1 && ref.Nested[0] == k.SymbolName() {
				if f := op.ParentOfName(funcdialect.Func); f != nil {
					name = f.SymbolName()
				}
			}
		}
		return ir.Advance
	})
	return name
}

func (e *explainer) launchText(k *ir.Operation, ks *schedule.KernelSchedule) string {
	var parts []string
	if g, ok := dims(k, "known_grid_size"); ok {
		parts = append(parts, "grid "+dimText(g))
	} else {
		parts = append(parts, "grid dynamic")
	}
	if b, ok := dims(k, "known_block_size"); ok {
		s := "block " + dimText(b)
		if n := b[0] * b[1] * b[2]; n%128 == 0 {
			wg := n / 128
			s += fmt.Sprintf(" (%d warpgroup%s", wg, plural(wg))
			if ks != nil {
				for _, l := range ks.Loops {
					if l.Consumers > 0 {
						s += fmt.Sprintf(": 1 producer + %d consumer%s", l.Consumers, plural(l.Consumers))
						break
					}
				}
			}
			s += ")"
		}
		parts = append(parts, s)
	} else {
		parts = append(parts, "block dynamic")
	}
	if c, ok := dims(k, "known_cluster_size"); ok && c[0]*c[1]*c[2] > 1 {
		parts = append(parts, "cluster "+dimText(c))
	} else {
		parts = append(parts, "no cluster")
	}
	if ks != nil && ks.SMemRuns > 0 && ks.SMemTotal > 0 {
		parts = append(parts, fmt.Sprintf("dynamic shared memory %d B", ks.SMemTotal))
	}
	return strings.Join(parts, ", ")
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (e *explainer) scheduleLine(l *schedule.LoopSchedule) string {
	kind := l.Kind
	if l.Persistent {
		kind += ", persistent"
	}
	s := fmt.Sprintf("%s, %d stage%s", kind, l.Stages, plural(l.Stages))
	from := l.StagesFrom
	if l.RequestedStages != l.Stages {
		from += fmt.Sprintf(", clamped to the %d iteration%s", l.Trip, plural(l.Trip))
	}
	s += " (" + from + ")"
	if l.StoreStages > 0 {
		s += fmt.Sprintf(", %d output slot%s", l.StoreStages, plural(l.StoreStages))
	}
	if l.ClusterSize > 1 {
		s += fmt.Sprintf(", TMA multicast across clusters of %d", l.ClusterSize)
	}
	if l.Consumers == 0 && l.Prologue == 0 && l.Ahead == 0 {
		s += "; no load runs ahead: each iteration issues its own loads and waits for them"
	}
	return s
}

// ---------------------------------------------------------------- loop

func (e *explainer) loopTitle(l *schedule.LoopSchedule, i, n int) string {
	iv := e.ivName(l.Loc)
	t := "main loop"
	if n > 1 {
		t = fmt.Sprintf("loop %d", i+1)
	}
	if iv != "" {
		t += " " + iv
	}
	return t + " at " + where(l.Loc)
}

func (e *explainer) loop(ks *schedule.KernelSchedule, l *schedule.LoopSchedule, i, n int) {
	e.heading(2, e.loopTitle(l, i, n))
	iv := e.ivName(l.Loc)
	if iv == "" {
		iv = "k"
	}
	trip := "a dynamic number of iterations T"
	if l.Trip >= 0 {
		trip = fmt.Sprintf("%d iteration%s", l.Trip, plural(l.Trip))
		if l.IVKnown && l.Trip > 0 {
			trip += fmt.Sprintf(" (%s = %s)", iv, ivRange(l.LB, l.Step, l.Trip))
		}
	}
	if l.Persistent {
		trip += " per tile of the tile loop at " + where(l.TileLoopLoc) + "; the rings continue across tiles (ring position = tile index x trip count + j)"
	}
	e.field("loop", trip)
	if l.Consumers > 0 {
		e.field("roles", fmt.Sprintf("producer warpgroup (setmaxnreg %d) issues every TMA load from one thread; %d consumer warpgroup%s (setmaxnreg %d) wait, run the loop body and release slots",
			l.ProducerRegs, l.Consumers, plural(l.Consumers), l.ConsumerRegs))
		if l.Kind == schedule.KindPingPong {
			e.field("ping-pong", "the two consumers take the tile loop's tiles in turn; one's epilogue overlaps the other's main loop (named barriers 4+w order their K loops)")
		}
	}
	pro := l.Prologue
	if l.Trip >= 0 && !l.Persistent {
		pro = min(pro, l.Trip)
	}
	if l.Consumers > 0 {
		e.field("prologue", fmt.Sprintf("%s fills all %d slots at once (its first wait on each empty barrier is for the phase before the barrier's first)", l.IssuedBy, l.Stages))
		e.field("refill", fmt.Sprintf("%s issues position q+%d into slot (q+%d) mod %d %s", l.IssuedBy, l.Stages, l.Stages, l.Stages, l.IssueAt))
	} else {
		switch {
		case pro == 1:
			e.field("prologue", fmt.Sprintf("%s issues position 0 before the loop", l.IssuedBy))
		case pro > 1:
			e.field("prologue", fmt.Sprintf("%s issues positions 0..%d before the loop", l.IssuedBy, pro-1))
		default:
			e.field("prologue", "none")
		}
		if l.Ahead == 0 {
			e.field("refill", fmt.Sprintf("iteration j issues its own position j into slot j mod %d %s", l.Stages, l.IssueAt))
		} else {
			e.field("refill", fmt.Sprintf("iteration j issues position j+%d into slot (j+%d) mod %d %s, unless j+%d >= T", l.Ahead, l.Ahead, l.Stages, l.IssueAt, l.Ahead))
		}
	}
	rel := fmt.Sprintf("iteration j releases the slot of position j-%d: %s", l.ReleaseLag, l.ReleasedBy)
	if l.ReleaseLag == 0 {
		rel = "iteration j releases its own slot: " + l.ReleasedBy
	}
	if l.PerTileRelease {
		rel += "; a warpgroup's first K step of a tile releases nothing, and the tile's last slot is released after its K loop"
	}
	e.field("release", rel)
	if l.WaitedBy != "" {
		e.field("wait", l.WaitedBy+" waits for slot j mod "+fmt.Sprint(l.Stages)+" where the program waited (tmac.tma.wait)")
	}
	if l.StageBytes > 0 {
		e.field("stage", fmt.Sprintf("%d B in %d TMA box%s (the expect_tx of each phase)", l.StageBytes, l.StageBoxes, pluralEs(l.StageBoxes)))
	}
	if l.StoreStages > 0 && l.Consumers == 0 {
		parts := ""
		if l.StoreParts > 1 {
			parts = fmt.Sprintf(" (the output tile stored in %d parts, each taking the next slot)", l.StoreParts)
		}
		e.field("stores", fmt.Sprintf("%d output slot%s; %d bulk store group%s per iteration%s; before writing a slot again one thread waits until at most %d group%s still read (cp.async.bulk.wait_group.read), then a proxy fence, a block barrier and the TMA store",
			l.StoreStages, plural(l.StoreStages), l.StoreGroups, plural(l.StoreGroups), parts, l.StoreWait, plural(l.StoreWait)))
	}
	if l.PassThrough {
		e.field("stores", "each loaded tile is stored by TMA straight from its load slot (a TMA copy: no fence, no barrier)")
	}
	for _, a := range l.AfterLoop {
		e.field("after", a)
	}
	e.endFields()

	e.tiles(l)
	e.timeline(ks, l, iv)
	e.steps(l)
}

func pluralEs(n int64) string {
	if n == 1 {
		return ""
	}
	return "es"
}

func ivRange(lb, step, trip int64) string {
	at := func(j int64) int64 { return lb + j*step }
	switch trip {
	case 1:
		return fmt.Sprint(at(0))
	case 2:
		return fmt.Sprintf("%d, %d", at(0), at(1))
	}
	return fmt.Sprintf("%d, %d, ..., %d", at(0), at(1), at(trip-1))
}

func shapeText(t *ir.MemRefType) string {
	if t == nil {
		return "-"
	}
	var sb strings.Builder
	for _, s := range t.Shape() {
		fmt.Fprintf(&sb, "%dx", s)
	}
	sb.WriteString(t.Elem.String())
	return sb.String()
}

func (e *explainer) tiles(l *schedule.LoopSchedule) {
	if len(l.Tiles) == 0 {
		return
	}
	e.heading(3, "tiles")
	t := newTable("tile", "role", "shape", "TMA box", "boxes", "swizzle", "slots", "slot bytes", "align", "read by").numeric(4, 6, 7, 8)
	for _, ts := range l.Tiles {
		role := ts.Role
		if ts.Multicast {
			role += " (multicast)"
		}
		t.add(e.nameAt(ts.Loc), role, shapeText(ts.Tile), shapeText(ts.Box), fmt.Sprint(ts.Boxes), ts.Swizzle,
			fmt.Sprint(ts.Slots), fmt.Sprint(ts.SlotBytes), fmt.Sprint(ts.Align), ts.ReadBy)
	}
	e.table(t)
	noted := false
	for _, ts := range l.Tiles {
		if ts.Note != "" {
			e.field("note", e.nameAt(ts.Loc)+" "+ts.Note)
			noted = true
		}
	}
	if noted {
		e.endFields()
	}
}

// stageWaits finds the parity rules of the loop's waits: the consumers'
// (stage or full ring) and the producer's (empty ring).
func stageWaits(ks *schedule.KernelSchedule, l *schedule.LoopSchedule) (wait, producer *schedule.BarrierWait) {
	for _, g := range ks.Groups {
		if g.Loop != l {
			continue
		}
		for _, w := range g.Waits {
			switch g.Role {
			case "stage", "full":
				if wait == nil {
					wait = w
				}
			case "empty":
				if producer == nil {
					producer = w
				}
			}
		}
	}
	return wait, producer
}

func parityFunc(w *schedule.BarrierWait) func(int64) (int64, bool) {
	if w == nil {
		return nil
	}
	return func(g int64) (int64, bool) {
		switch {
		case w.Ring != nil:
			return w.Ring.At(g), true
		case w.Constant:
			return w.Parity, true
		}
		return 0, false
	}
}

func (e *explainer) timeline(ks *schedule.KernelSchedule, l *schedule.LoopSchedule, iv string) {
	if l.Stages <= 0 {
		return
	}
	wait, prod := stageWaits(ks, l)
	r := &ring{l: l, wait: parityFunc(wait)}
	if prod != nil {
		r.producerWait = parityFunc(prod)
	}
	r.label = func(g int64) string {
		k := g
		prefix := ""
		if l.Persistent && l.Trip > 0 {
			prefix = fmt.Sprintf("t%d.", g/l.Trip)
			k = g % l.Trip
		}
		if l.IVKnown {
			return prefix + fmt.Sprint(l.LB+k*l.Step)
		}
		return prefix + "j" + fmt.Sprint(k)
	}
	if l.Kind == schedule.KindPingPong && l.Trip > 0 {
		r.stepNote = func(g int64) string { return fmt.Sprintf(" wg%d", (g/l.Trip)%2) }
	}
	head := int64(e.opts.Iterations)
	if head <= 0 {
		head = l.Stages + 1
	}
	rows := r.rows(head)

	what := "j"
	if l.Persistent {
		what = "ring position j"
	}
	e.heading(3, fmt.Sprintf("timeline (%s uses slot j mod %d; sN:x is slot N holding the tile of %s = x%s)", what, l.Stages, iv, persistentNote(l)))
	waitHead := "wait (slot, parity)"
	if l.Consumers > 0 {
		waitHead = "consumers wait full[s]"
	}
	head2 := []string{"step", iv, waitHead, "release", "issue"}
	if r.producerWait != nil {
		head2 = append(head2, "producer waits")
	}
	hasStore := (l.StoreStages > 0 && l.Consumers == 0) || l.PassThrough
	if hasStore {
		head2 = append(head2, "store")
	}
	head2 = append(head2, "loads in flight after")
	t := newTable(head2...)
	for _, rw := range rows {
		cells := []string{rw.step, rw.k, rw.wait, rw.release, rw.issue}
		if r.producerWait != nil {
			cells = append(cells, rw.producer)
		}
		if hasStore {
			cells = append(cells, rw.store)
		}
		cells = append(cells, rw.inflight)
		t.add(cells...)
	}
	e.table(t)
}

func persistentNote(l *schedule.LoopSchedule) string {
	if l.Persistent {
		return "; x = tN.k: tile N of the block, K step k"
	}
	return ""
}

// ---------------------------------------------------------------- smem

func (e *explainer) smem(ks *schedule.KernelSchedule) {
	e.heading(2, "shared memory")
	if ks == nil || ks.SMemRuns == 0 {
		e.para("  (smem-plan did not run on this kernel)")
		return
	}
	total := ks.SMemTotal + ks.SMemStatic
	if total == 0 && len(ks.SMem) == 0 {
		e.para("  none")
		return
	}
	limit := int64(sm90.MaxSharedBytesPerBlock)
	e.para(fmt.Sprintf("  %d of %d bytes per block (%.1f%% of the 227 KB limit), in dynamic shared memory (1024-byte aligned base)",
		total, limit, 100*float64(total)/float64(limit)))
	t := newTable("offset", "end", "size", "align", "swizzle", "buffer", "holds", "notes").numeric(0, 1, 2, 3)
	type entry struct {
		p                 *schedule.SMemPlacement
		name, holds, note string
	}
	var es []entry
	if ks.HandPlaced > 0 {
		t.add("0", fmt.Sprint(ks.HandPlaced), fmt.Sprint(ks.HandPlaced), "-", "?", gpu.DynamicSharedMemory, "the program's own buffers", "placed by hand (the launch's size)")
	}
	for _, p := range ks.SMem {
		name, holds, note := e.bufferName(ks, p)
		es = append(es, entry{p, name, holds, note})
	}
	sort.SliceStable(es, func(a, b int) bool {
		if es[a].p.Run != es[b].p.Run {
			return es[a].p.Run < es[b].p.Run
		}
		return es[a].p.Offset < es[b].p.Offset
	})
	for i, x := range es {
		p := x.p
		var notes []string
		switch {
		case x.note != "":
			notes = append(notes, x.note)
		case p.Why != "" && p.Why != "default":
			notes = append(notes, alignWhy(p.Why))
		}
		if p.Whole && !p.Barriers {
			notes = append(notes, "live for the whole kernel")
		}
		for _, y := range es[:i] {
			if y.p.Run == p.Run && y.p.Offset < p.Offset+p.Size && p.Offset < y.p.Offset+y.p.Size {
				notes = append(notes, "reuses bytes of "+y.name+" (not live at the same time)")
			}
		}
		swz := p.Swizzle
		if swz == "" {
			swz = "-"
		}
		t.add(fmt.Sprint(p.Offset), fmt.Sprint(p.Offset+p.Size), fmt.Sprint(p.Size), fmt.Sprint(p.Align), swz, x.name, x.holds, strings.Join(notes, "; "))
	}
	if ks.SMemStatic > 0 {
		t.add("-", "-", fmt.Sprint(ks.SMemStatic), "8", "-", "mbarriers", "not placed yet (lower-nvgpu did not run)", "")
	}
	e.table(t)
}

// alignWhy rephrases smem-plan's reason for an alignment ("TMA copy",
// "TMA copy with swizzle_128b").
func alignWhy(why string) string {
	for _, user := range []string{"TMA copy", "wgmma operand"} {
		if why == user {
			return "aligned for a " + user
		}
		if sw, ok := strings.CutPrefix(why, user+" with "); ok {
			if sw == "none" {
				return "aligned for a " + user
			}
			return "aligned for a " + user + " with " + sw
		}
	}
	return why
}

// bufferName names a placed buffer — a tile's ring, a barrier group's
// memory, or the program's buffer — says what it holds and why it is
// aligned as it is.
func (e *explainer) bufferName(ks *schedule.KernelSchedule, p *schedule.SMemPlacement) (name, holds, note string) {
	for _, l := range ks.Loops {
		for _, ts := range l.Tiles {
			if ts.Ring != nil && ts.Ring == p.Alloc {
				note = "TMA boxes need 128 B"
				if ts.Swizzle != "" && ts.Swizzle != "none" {
					note = "the " + ts.Swizzle + " swizzle pattern repeats every " + fmt.Sprint(ts.Align) + " B"
				}
				return e.nameAt(ts.Loc) + " ring", fmt.Sprintf("%d slot%s x %d B (%s)", ts.Slots, plural(ts.Slots), ts.SlotBytes, shapeText(ts.Tile)), note
			}
		}
	}
	if p.Barriers {
		for _, g := range ks.Groups {
			if g.Alloc != nil && g.Alloc == p.Alloc {
				return "mbarriers " + e.groupName(ks, g), fmt.Sprintf("%d x 8 B", g.Size), "live for the whole kernel"
			}
		}
		return "mbarriers", shapeText(p.Type), "live for the whole kernel"
	}
	return e.nameAt(p.Loc), shapeText(p.Type), ""
}

// ---------------------------------------------------------------- barriers

func (e *explainer) groupName(ks *schedule.KernelSchedule, g *schedule.BarrierGroup) string {
	if g.Role == "" {
		return e.nameAt(g.Loc)
	}
	name := g.Role
	if len(ks.Loops) > 1 {
		for i, l := range ks.Loops {
			if l == g.Loop {
				name += fmt.Sprintf(" (loop %d)", i+1)
			}
		}
	}
	return name
}

func (e *explainer) barriers(ks *schedule.KernelSchedule) {
	e.heading(2, "mbarriers")
	if ks == nil || len(ks.Groups) == 0 {
		e.para("  none")
		return
	}
	smemAt := map[*ir.Operation]int64{}
	for _, p := range ks.SMem {
		if p.Barriers {
			smemAt[p.Alloc] = p.Offset
		}
	}
	t := newTable("group", "at", "barriers", "arrivals/phase", "tx bytes/phase", "guards").numeric(1, 2, 3, 4)
	type detail struct{ name, arrive, wait string }
	var ds []detail
	for _, g := range ks.Groups {
		at := "-"
		if off, ok := smemAt[g.Alloc]; ok && g.Alloc != nil {
			at = fmt.Sprint(off)
		}
		count := perPhase(g.Count, g.InitCounts)
		tx := perPhase(g.TxBytes, g.ExpectTx)
		guards := g.Guards
		if g.Loop != nil {
			var names []string
			for _, ts := range g.Loop.Tiles {
				if ts.Role != "store" {
					names = append(names, e.nameAt(ts.Loc))
				}
			}
			guards = strings.Join(names, ", ") + ": " + guards
		} else if g.TMALoads > 0 {
			verb := "complete"
			if g.TMALoads == 1 {
				verb = "completes"
			}
			guards = fmt.Sprintf("written in the program; %d TMA load op%s %s on it", g.TMALoads, plural(int64(g.TMALoads)), verb)
		} else {
			guards = "written in the program"
		}
		name := e.groupName(ks, g)
		t.add(name, at, fmt.Sprint(g.Size), count, tx, guards)
		d := detail{name: name, arrive: g.ArrivedBy}
		if d.arrive == "" {
			d.arrive = fmt.Sprintf("%d arrive op%s in the program", g.Arrives, plural(int64(g.Arrives)))
		}
		d.wait = e.waitText(g)
		ds = append(ds, d)
	}
	e.table(t)
	if e.md() {
		for _, d := range ds {
			fmt.Fprintf(e.w, "- **%s** — arrive: %s; wait: %s\n", d.name, d.arrive, d.wait)
		}
		fmt.Fprintln(e.w)
		return
	}
	for _, d := range ds {
		fmt.Fprintf(e.w, "  %s:\n    arrive: %s\n    wait:   %s\n", d.name, d.arrive, d.wait)
	}
}

// perPhase shows a group's arrivals or transaction bytes per phase: n, set
// by the pass that created the group, else the distinct values lower-nvgpu
// lowered (vs), else "-".
func perPhase(n int64, vs []int64) string {
	switch {
	case n > 0:
		return fmt.Sprint(n)
	case len(vs) > 0:
		return joinDistinct(vs)
	}
	return "-"
}

func joinDistinct(vs []int64) string {
	seen := map[int64]bool{}
	var parts []string
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			parts = append(parts, fmt.Sprint(v))
		}
	}
	return strings.Join(parts, " or ")
}

// waitText describes who waits on a group and with which parity.
func (e *explainer) waitText(g *schedule.BarrierGroup) string {
	if len(g.Waits) == 0 {
		return "no wait"
	}
	who := g.WaitedBy
	var rules, computed []string
	seen := map[string]bool{}
	for _, w := range g.Waits {
		if w.By == "program" && !w.Constant {
			computed = append(computed, where(w.Loc))
			continue
		}
		s := parityRule(w, g.Loop)
		if !seen[s] {
			seen[s] = true
			rules = append(rules, s)
		}
	}
	if len(computed) > 0 {
		rules = append(rules, "parities the program computes (waits at "+strings.Join(computed, ", ")+")")
	}
	s := strings.Join(rules, "; ")
	if who != "" {
		s = who + ", " + s
	}
	return s
}

// parityRule writes a wait's parity as a rule.
func parityRule(w *schedule.BarrierWait, l *schedule.LoopSchedule) string {
	by := w.By
	switch {
	case w.Constant:
		s := fmt.Sprintf("parity %d", w.Parity)
		if by == "program" {
			return s + " (written in the program, at " + where(w.Loc) + ")"
		}
		return s + " (" + by + ")"
	case w.Ring == nil:
		return "a parity computed at " + where(w.Loc)
	}
	r := w.Ring
	pos := "iteration j"
	if l != nil && l.Persistent {
		pos = "ring position j"
	}
	u := "j"
	if r.Off != 0 {
		u = fmt.Sprintf("(j%+d)", r.Off)
	}
	bar := fmt.Sprintf("barrier %s mod %d", u, r.N)
	if r.N == 1 {
		bar = "the barrier"
	}
	q := fmt.Sprintf("(%s / %d)", u, r.N)
	if r.N == 1 {
		q = u
	}
	rule := fmt.Sprintf("%s waits on %s with parity %s mod 2", pos, bar, q)
	if r.B&1 != 0 {
		rule = fmt.Sprintf("%s waits on %s with parity (%s + 1) mod 2", pos, bar, strings.Trim(q, "()"))
	}
	how := by
	switch {
	case w.Carried:
		how += ": carried as an i1 loop value, flipped after the ring's last barrier"
	case by == "mbarrier-phase" && r.N&(r.N-1) == 0:
		how += fmt.Sprintf(": bit %d of %s", log2(r.N), u)
		if r.B&1 != 0 {
			how += ", inverted"
		}
	}
	if r.B&1 != 0 && l != nil && l.Consumers > 0 {
		how += "; round 0 waits for the phase before the first, which is complete"
	}
	return rule + " (" + how + ")"
}

func log2(n int64) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}
