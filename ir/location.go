package ir

import "fmt"

// Location is where an operation or value came from. Locations are carried
// through every pass so diagnostics point at the user's source.
type Location interface {
	// String prints the location in MLIR syntax, without the loc(...) wrapper.
	String() string
	isLoc()
}

// UnknownLoc is an unknown location.
type UnknownLoc struct{}

func (UnknownLoc) String() string { return "unknown" }
func (UnknownLoc) isLoc()         {}

// FileLineColLoc is "file":line:col, or a range "file":line:col to
// endline:endcol (HasEnd; EndLine equal to Line prints "to :endcol").
type FileLineColLoc struct {
	File            string
	Line, Col       int
	HasEnd          bool
	EndLine, EndCol int
}

func (l FileLineColLoc) String() string {
	s := fmt.Sprintf("%s:%d:%d", QuoteString(l.File), l.Line, l.Col)
	if l.HasEnd {
		if l.EndLine == l.Line {
			s += fmt.Sprintf(" to :%d", l.EndCol)
		} else {
			s += fmt.Sprintf(" to %d:%d", l.EndLine, l.EndCol)
		}
	}
	return s
}
func (FileLineColLoc) isLoc() {}

// Pos is the start of l as file:line:col, the file unquoted (for messages
// and reports; String is the IR's quoted form).
func (l FileLineColLoc) Pos() string { return fmt.Sprintf("%s:%d:%d", l.File, l.Line, l.Col) }

// NameLoc is "name" or "name"(child).
type NameLoc struct {
	Name  string
	Child Location // may be nil
}

func (l NameLoc) String() string { return l.format(Location.String) }
func (NameLoc) isLoc()           {}

// format prints l with child printing its nested location (the printer
// puts aliases there).
func (l NameLoc) format(child func(Location) string) string {
	if l.Child == nil {
		return QuoteString(l.Name)
	}
	return QuoteString(l.Name) + "(" + child(l.Child) + ")"
}

// CallSiteLoc is callsite(callee at caller).
type CallSiteLoc struct{ Callee, Caller Location }

func (l CallSiteLoc) String() string { return l.format(Location.String) }
func (CallSiteLoc) isLoc()           {}

func (l CallSiteLoc) format(child func(Location) string) string {
	return "callsite(" + child(l.Callee) + " at " + child(l.Caller) + ")"
}

// FusedLoc is fused[a, b] or fused<#meta>[a, b].
type FusedLoc struct {
	Locs     []Location
	Metadata Attribute // may be nil
}

func (l FusedLoc) String() string { return l.format(Location.String) }
func (FusedLoc) isLoc()           {}

func (l FusedLoc) format(child func(Location) string) string {
	s := "fused"
	if l.Metadata != nil {
		s += "<" + l.Metadata.String() + ">"
	}
	return s + "[" + CommaSeparated(l.Locs, child) + "]"
}

// nestedLoc is a location that holds others: its format prints them with
// child.
type nestedLoc interface {
	format(child func(Location) string) string
}

// Fused returns the fused location of locs as upstream canonicalizes it:
// nested fused locations with the same metadata are flattened, unknown and
// duplicate locations dropped; no location left gives unknown (or
// fused<meta>[unknown]), a single one without metadata is returned as is.
func Fused(locs []Location, meta Attribute) Location {
	var out []Location
	seen := map[string]bool{}
	add := func(l Location) {
		if k := l.String(); !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	}
	for _, l := range locs {
		if f, ok := l.(FusedLoc); ok && f.Metadata == meta {
			for _, c := range f.Locs {
				add(c)
			}
			continue
		}
		if _, unk := l.(UnknownLoc); !unk {
			add(l)
		}
	}
	switch {
	case len(out) == 0 && meta == nil:
		return UnknownLoc{}
	case len(out) == 0:
		return FusedLoc{Locs: []Location{UnknownLoc{}}, Metadata: meta}
	case len(out) == 1 && meta == nil:
		return out[0]
	}
	return FusedLoc{Locs: out, Metadata: meta}
}

// FileLineCol returns the first file:line:col position inside l, if any, so
// diagnostics can quote the user's source line.
func FileLineCol(l Location) (FileLineColLoc, bool) {
	switch l := l.(type) {
	case FileLineColLoc:
		return l, true
	case NameLoc:
		if l.Child != nil {
			return FileLineCol(l.Child)
		}
	case CallSiteLoc:
		return FileLineCol(l.Caller)
	case FusedLoc:
		for _, c := range l.Locs {
			if p, ok := FileLineCol(c); ok {
				return p, true
			}
		}
	}
	return FileLineColLoc{}, false
}
