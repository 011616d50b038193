// Package nvgpu registers the nvgpu dialect.
package nvgpu
