// Package scf registers the scf dialect.
package scf
