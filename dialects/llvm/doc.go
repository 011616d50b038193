// Package llvm registers the llvm dialect.
package llvm
