// Command mangabookmark is the server and its owner tools: run.go dispatches
// each command to its package (serve to package server, demo and bench to
// their own packages) or to the small commands kept here.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	// A Reader's time zone (/settings, the daily digest) and the owner's
	// (TIME_ZONE, checked at start) are IANA names: the zone database is
	// built in, so a host or image without one (FROM scratch) still knows
	// every zone.
	_ "time/tzdata"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mangabookmark:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is 1 for an error, and exitNotOK when fetch's read ended in an
// outcome other than ok.
func exitCode(err error) int {
	if errors.As(err, new(NotOKError)) {
		return exitNotOK
	}
	return 1
}
