package ir

import (
	"sort"
	"strconv"
	"strings"
)

// Location aliases for --print-debuginfo, numbered and placed as upstream
// does: every location gets an alias #loc, #loc1, ...; aliases are ordered
// by depth (locations referring to no other alias first), then by first
// appearance in printing order (an op's location, then its regions' block
// arguments and nested ops). Block-argument locations and the locations
// they contain cannot be deferred and are defined before the top-level op;
// the others are defined after it. Op locations print as loc(#locN); a
// block argument prints its own location in full, with nested aliases.

type locAlias struct {
	loc      Location
	name     string
	depth    int
	order    int
	deferred bool
}

type locAliasState struct {
	byKey map[string]*locAlias
	list  []*locAlias
}

func computeLocAliases(top *Operation) *locAliasState {
	s := &locAliasState{byKey: map[string]*locAlias{}}
	var visitOp func(op *Operation)
	visitOp = func(op *Operation) {
		s.visit(op.Loc, true)
		for _, r := range op.regions {
			for _, b := range r.blocks {
				for _, a := range b.args {
					s.visit(a.Loc(), false)
				}
				for o := b.first; o != nil; o = o.next {
					visitOp(o)
				}
			}
		}
	}
	visitOp(top)
	sort.SliceStable(s.list, func(i, j int) bool {
		if s.list[i].depth != s.list[j].depth {
			return s.list[i].depth < s.list[j].depth
		}
		return s.list[i].order < s.list[j].order
	})
	for i, a := range s.list {
		a.name = "#loc"
		if i > 0 {
			a.name += strconv.Itoa(i)
		}
	}
	return s
}

func locChildren(l Location) []Location {
	switch l := l.(type) {
	case NameLoc:
		if l.Child != nil {
			return []Location{l.Child}
		}
	case CallSiteLoc:
		return []Location{l.Callee, l.Caller}
	case FusedLoc:
		return l.Locs
	}
	return nil
}

// visit records l and its nested locations; it returns l's depth.
func (s *locAliasState) visit(l Location, deferrable bool) int {
	if l == nil {
		return 0
	}
	key := l.String()
	a, ok := s.byKey[key]
	if !ok {
		a = &locAlias{loc: l, order: len(s.byKey), deferred: deferrable}
		s.byKey[key] = a
		s.list = append(s.list, a)
		for _, c := range locChildren(l) {
			if d := s.visit(c, deferrable) + 1; d > a.depth {
				a.depth = d
			}
		}
		return a.depth
	}
	if !deferrable && a.deferred {
		a.deferred = false
		for _, c := range locChildren(l) {
			s.visit(c, false)
		}
	}
	return a.depth
}

// body prints l with nested locations replaced by their aliases.
func (s *locAliasState) body(l Location) string {
	ref := func(c Location) string {
		if a, ok := s.byKey[c.String()]; ok {
			return a.name
		}
		return c.String()
	}
	if n, ok := l.(nestedLoc); ok {
		return n.format(ref)
	}
	return l.String()
}

// definitions returns the alias definition lines, deferred or not.
func (s *locAliasState) definitions(deferred bool) string {
	var sb strings.Builder
	for _, a := range s.list {
		if a.deferred == deferred {
			sb.WriteString(a.name + " = loc(" + s.body(a.loc) + ")\n")
		}
	}
	return sb.String()
}
