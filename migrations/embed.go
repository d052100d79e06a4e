// Package migrations holds the database schema as golang-migrate files,
// embedded into the binary and applied at start.
package migrations

import "embed"

// FS holds every NNNN_name.{up,down}.sql file.
//
//go:embed *.sql
var FS embed.FS
