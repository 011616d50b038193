// Package vector registers the vector dialect.
package vector
