// Package memref registers the memref dialect.
package memref
