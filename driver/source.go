// Package driver implements the steps shared by tmac's commands: reading
// and splitting input, parsing, verifying, running pass pipelines, printing
// and checking expected diagnostics.
package driver

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// MaxInputBytes bounds the size of an input file.
const MaxInputBytes = 256 << 20

// Chunk is one piece of an input file (the whole file, or one part of a
// --split-input-file input) with the line it starts at.
type Chunk struct {
	File      string
	Text      string
	FirstLine int // 1-based line of the chunk's first line in the file
}

// ReadInput reads a file ("-" is stdin). Bytes that are not valid UTF-8,
// NULs and other control characters are left to the parser: like
// mlir-opt, it accepts them in comments and string literals only.
func ReadInput(path string) (string, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = readAllLimited(os.Stdin)
	} else {
		var f *os.File
		if f, err = os.Open(path); err == nil {
			defer f.Close()
			var st os.FileInfo
			if st, err = f.Stat(); err == nil && st.IsDir() {
				return "", fmt.Errorf("%s: is a directory", path)
			}
			if err == nil && st.Mode().IsRegular() && st.Size() > MaxInputBytes {
				// Said before reading any of it.
				return "", fmt.Errorf("%s: input of %d bytes is larger than %d MiB (tmac's limit)", path, st.Size(), MaxInputBytes>>20)
			}
			data, err = readAllLimited(f)
		}
	}
	if err != nil {
		return "", err
	}
	return string(data), nil
}

func readAllLimited(f *os.File) ([]byte, error) {
	var buf []byte
	chunk := make([]byte, 1<<20)
	for {
		n, err := f.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > MaxInputBytes {
			return nil, fmt.Errorf("%s: input larger than %d MiB (tmac's limit)", f.Name(), MaxInputBytes>>20)
		}
		if err != nil {
			if err.Error() == "EOF" {
				return buf, nil
			}
			return nil, err
		}
	}
}

var splitMarker = regexp.MustCompile(`(?m)^// -----.*$`)

// Split splits text at `// -----` lines when split is true.
func Split(file, text string, split bool) []Chunk {
	if !split {
		return []Chunk{{File: file, Text: text, FirstLine: 1}}
	}
	var chunks []Chunk
	start, line := 0, 1
	for _, m := range splitMarker.FindAllStringIndex(text, -1) {
		chunks = append(chunks, Chunk{File: file, Text: text[start:m[0]], FirstLine: line})
		line += strings.Count(text[start:m[1]], "\n")
		start = m[1]
	}
	chunks = append(chunks, Chunk{File: file, Text: text[start:], FirstLine: line})
	return chunks
}

// ParseChunk parses and verifies a chunk. Line numbers in diagnostics are
// those of the whole file.
func ParseChunk(c Chunk, allowUnregistered bool) (*ir.Operation, error) {
	mod, err := ir.Parse(c.File, c.Text, ir.ParseOptions{AllowUnregistered: allowUnregistered, LineOffset: c.FirstLine - 1})
	if err != nil {
		return nil, err
	}
	if err := ir.VerifyModule(mod); err != nil {
		return nil, err
	}
	return mod, nil
}
