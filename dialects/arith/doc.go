// Package arith registers the arith dialect.
package arith
