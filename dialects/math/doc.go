// Package math registers the math dialect.
package math
