// Package cf registers the cf dialect.
package cf
