package explain

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table is a plain-text or Markdown table.
type table struct {
	head []string
	rows [][]string
	// right marks the columns aligned to the right (numbers).
	right map[int]bool
}

func newTable(head ...string) *table { return &table{head: head, right: map[int]bool{}} }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// numeric aligns the given columns to the right.
func (t *table) numeric(cols ...int) *table {
	for _, c := range cols {
		t.right[c] = true
	}
	return t
}

// write renders the table indented by indent (text) or as a Markdown pipe
// table (md).
func (t *table) write(w io.Writer, md bool, indent string) {
	if md {
		esc := func(s string) string {
			if s == "" {
				return " "
			}
			return strings.ReplaceAll(s, "|", `\|`)
		}
		line := func(cells []string) {
			parts := make([]string, len(t.head))
			for i := range parts {
				c := ""
				if i < len(cells) {
					c = cells[i]
				}
				parts[i] = esc(c)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(parts, " | "))
		}
		line(t.head)
		seps := make([]string, len(t.head))
		for i := range seps {
			seps[i] = "---"
			if t.right[i] {
				seps[i] = "--:"
			}
		}
		fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
		for _, r := range t.rows {
			line(r)
		}
		fmt.Fprintln(w)
		return
	}
	width := make([]int, len(t.head))
	for i, h := range t.head {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			if i < len(width) && utf8.RuneCountInString(c) > width[i] {
				width[i] = utf8.RuneCountInString(c)
			}
		}
	}
	line := func(cells []string) {
		var sb strings.Builder
		sb.WriteString(indent)
		for i := range t.head {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				sb.WriteString("  ")
			}
			if t.right[i] {
				sb.WriteString(pad + c)
			} else if i < len(t.head)-1 {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(sb.String(), " "))
	}
	line(t.head)
	for _, r := range t.rows {
		line(r)
	}
}
