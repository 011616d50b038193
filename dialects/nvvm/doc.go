// Package nvvm registers the nvvm dialect.
package nvvm
