// Package tune autotunes a tile loop's schedule, in two steps because the
// GPU machine has no llc: Build (tmac tune build) compiles one bundle per
// combination of stage count, store stage count and schedule; Run (tmac
// tune run, on the GPU machine) runs and times each one as tmac run
// --bench does (package runner) and ranks them.
//
// The knobs are the tile loop's attributes, set on the parsed IR:
// tmac.stages (tma-pipeline's and warp-specialize's ring depth),
// tmac.store_stages (the rotating output tiles, on the loop that holds the
// tmac.tma.store ops: the tile loop itself, or the enclosing tile loop of
// a persistent kernel) and tmac.warp_specialize (schedule "ws": the
// warp-specialize pass adds a TMA producer warpgroup in front of the
// program's warpgroups, which become the consumers; schedule "pingpong":
// the same with two consumers taking a persistent program's tiles in turn;
// schedule "pipelined": the attribute is removed and tma-pipeline runs the
// loop in every thread). A program written for one warpgroup gets one
// consumer and a producer (256 threads) under "ws", two consumers under
// "pingpong"; one written for two gets two consumers (384 threads). Tile
// shapes are the program's own: give several programs (one per tile
// shape) to tune them together.
package tune

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The files of a tune directory and their formats.
const (
	ManifestName   = "tune.json"         // Build's manifest (Manifest)
	generatedDir   = "src"               // the programs a Generator wrote
	ResultsName    = "tune-results.json" // Run's results (Results)
	ManifestFormat = "tmac-tune-1"
	ResultsFormat  = "tmac-tune-results-1"

	schedPipelined = "pipelined"
	schedWS        = "ws"
	schedPingpong  = "pingpong"
)

var schedules = []string{schedPipelined, schedWS, schedPingpong}

// Manifest is DIR/tune.json.
type Manifest struct {
	Format       string     `json:"format"`
	TmacVersion  string     `json:"tmac_version"`
	PassPipeline string     `json:"pass_pipeline"`
	Sources      []*Source  `json:"sources"`
	Variants     []*Variant `json:"variants"`
	// Generator is the command that wrote the generated sources
	// (DIR/src), when there was one.
	Generator *Generator `json:"generator,omitempty"`
}

// Source is one input program and the loop tuned in it.
type Source struct {
	File         string `json:"file"`
	Loop         int    `json:"loop"` // index among the program's tunable loops
	Location     string `json:"location"`
	InductionVar string `json:"induction_var,omitempty"`
	Function     string `json:"function,omitempty"`
	// StoreLoop says where tmac.store_stages goes: "loop" (the tuned
	// loop stores tiles), "tile loop" (the enclosing loop does), or ""
	// (no tmac.tma.store: --store-stages does not apply).
	StoreLoop string `json:"store_loop,omitempty"`
	// As written in the program.
	Stages         int64 `json:"stages,omitempty"`
	StoreStages    int64 `json:"store_stages,omitempty"`
	WarpSpecialize bool  `json:"warp_specialize"`
	// Params are the generator's parameters this source was written with.
	Params map[string]string `json:"params,omitempty"`
}

// Variant is one variant: its parameters, its bundle and whether it
// compiled.
type Variant struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Schedule    string `json:"schedule"`
	Stages      int64  `json:"stages"`
	StoreStages int64  `json:"store_stages,omitempty"` // 0: as written
	// Params are the generator's parameters of the variant's source.
	Params map[string]string `json:"params,omitempty"`
	Bundle string            `json:"bundle,omitempty"` // relative to DIR
	Status string            `json:"status"`           // compiled or skipped
	Reason string            `json:"reason,omitempty"` // why it was skipped
}

const (
	statusCompiled = "compiled"
	statusSkipped  = "skipped"
)

// checkDir accepts a missing or empty directory, or an earlier tune
// build (it has tune.json), and returns the files to remove from it.
func checkDir(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("-o %s: not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, nil
	}
	old, err := ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("-o %s: the directory is not empty and holds no earlier tune build (%s); give a new or empty directory", dir, ManifestName)
	}
	mine := map[string]bool{ManifestName: true, ResultsName: true, "logs": true, generatedDir: old.Generator != nil}
	for _, v := range old.Variants {
		if v.Bundle != "" {
			mine[v.Bundle] = true
		}
	}
	var remove []string
	for _, e := range ents {
		if !mine[e.Name()] {
			return nil, fmt.Errorf("-o %s: the directory holds '%s', which tmac tune build did not write; give a new or empty directory, or an earlier tune build", dir, e.Name())
		}
		remove = append(remove, filepath.Join(dir, e.Name()))
	}
	return remove, nil
}

// ReadManifest reads and checks DIR/tune.json.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ManifestName), err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("%s: format '%s', expected '%s'", filepath.Join(dir, ManifestName), m.Format, ManifestFormat)
	}
	for _, v := range m.Variants {
		if v.Bundle != "" && (filepath.IsAbs(v.Bundle) || strings.Contains(v.Bundle, "..") || strings.ContainsAny(v.Bundle, `/\`)) {
			return nil, fmt.Errorf("%s: variant %s: bundle '%s' is not a file name in the directory", filepath.Join(dir, ManifestName), v.Name, v.Bundle)
		}
	}
	return &m, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
