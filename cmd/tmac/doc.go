package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/internal/docgen"
)

func newDocCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "doc -o DIR",
		Short: "Write the Markdown reference docs of the dialects and passes",
		Long: `doc writes reference documentation generated from tmac's registries:
DIR/dialects/README.md and DIR/dialects/<dialect>.md (every registered op:
summary, syntax, operands, results, attributes, regions, successors, traits,
verification and an example) and DIR/passes/README.md and
DIR/passes/<pass>.md (description, options, and an example input with the
IR the pass makes of it).

Every op example is parsed and verified and every pass example is run
through its pass when the docs are generated; doc fails, writing nothing,
if one does not verify. The output is deterministic. Markdown files in
DIR/dialects and DIR/passes that are no longer generated are removed.
The repository's copy is docs/ (regenerate it with make docs).`,
		Example: `  tmac doc -o docs
  tmac doc -o /tmp/tmac-docs && diff -r /tmp/tmac-docs/dialects docs/dialects`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stderr := cmd.ErrOrStderr()
			if out == "" {
				fmt.Fprintln(stderr, "tmac doc: error: missing -o DIR (the directory to write dialects/ and passes/ into)")
				fmt.Fprintln(stderr, "usage: tmac doc -o DIR")
				return &exitError{2}
			}
			if err := docgen.Generate(out); err != nil {
				fmt.Fprintln(stderr, "tmac doc: error:", err)
				return &exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory to write dialects/ and passes/ into (created if missing)")
	return cmd
}
