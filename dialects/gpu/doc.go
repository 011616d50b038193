// Package gpu registers the gpu dialect.
package gpu
