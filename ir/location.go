package ir

import (
	"fmt"
	"strings"
)

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

// FileLineColLoc is "file":line:col.
type FileLineColLoc struct {
	File      string
	Line, Col int
}

func (l FileLineColLoc) String() string {
	return fmt.Sprintf("%s:%d:%d", QuoteString(l.File), l.Line, l.Col)
}
func (FileLineColLoc) isLoc() {}

// NameLoc is "name" or "name"(child).
type NameLoc struct {
	Name  string
	Child Location // may be nil
}

func (l NameLoc) String() string {
	if l.Child == nil {
		return QuoteString(l.Name)
	}
	return QuoteString(l.Name) + "(" + l.Child.String() + ")"
}
func (NameLoc) isLoc() {}

// CallSiteLoc is callsite(callee at caller).
type CallSiteLoc struct{ Callee, Caller Location }

func (l CallSiteLoc) String() string {
	return "callsite(" + l.Callee.String() + " at " + l.Caller.String() + ")"
}
func (CallSiteLoc) isLoc() {}

// FusedLoc is fused[a, b] or fused<#meta>[a, b].
type FusedLoc struct {
	Locs     []Location
	Metadata Attribute // may be nil
}

func (l FusedLoc) String() string {
	var sb strings.Builder
	sb.WriteString("fused")
	if l.Metadata != nil {
		sb.WriteString("<" + l.Metadata.String() + ">")
	}
	sb.WriteByte('[')
	for i, c := range l.Locs {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(c.String())
	}
	sb.WriteByte(']')
	return sb.String()
}
func (FusedLoc) isLoc() {}

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
