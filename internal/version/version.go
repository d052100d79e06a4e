// Package version says which build of mangabookmark is running: the
// `version` command, the server's first log line, /healthz and the owner's
// footer all read Get (issue 25, item 1).
//
// A release build sets the three variables below with the linker
// (`make dist` does):
//
//	go build -ldflags "-X github.com/mangabookmark/mangabookmark/internal/version.version=v1.2.3 \
//	  -X github.com/mangabookmark/mangabookmark/internal/version.commit=abc1234 \
//	  -X github.com/mangabookmark/mangabookmark/internal/version.date=2026-12-02T00:00:00Z"
//
// Any other build falls back to what the go command recorded in the binary
// (debug.ReadBuildInfo): the module version of `go install ...@v1.2.3`, and
// the commit and its time when the build stamped them (-buildvcs).
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Set by the linker (-X) for a release build; empty otherwise. Their names
// are part of the release build's command line: do not rename them.
var (
	version string
	commit  string
	date    string
)

// What a build that recorded nothing says: built from a checkout, with no
// commit stamped (GOFLAGS=-buildvcs=false, or not in a git work tree).
const (
	Dev     = "dev"
	Unknown = "unknown"
)

// Info is one build's identity.
type Info struct {
	Version   string // v1.2.3, or Dev
	Commit    string // the git revision, or Unknown
	Date      string // when it was built (or committed), RFC 3339, or Unknown
	GoVersion string // the Go toolchain that built it
}

// Get is this binary's Info: the linker's values first, then the build
// info's, then Dev and Unknown. A binary's build never changes while it
// runs, so the build info is read (and parsed) once.
var Get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, date, bi)
})

// resolve is Get without the process: bi may be nil.
func resolve(version, commit, date string, bi *debug.BuildInfo) Info {
	i := Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version()}
	if bi == nil {
		return i.orDefaults()
	}
	if bi.GoVersion != "" {
		i.GoVersion = bi.GoVersion
	}
	// "(devel)" is what the go command records for a build of a work
	// tree; it is the same thing as Dev.
	if i.Version == "" && bi.Main.Version != "(devel)" {
		i.Version = bi.Main.Version
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if i.Commit == "" {
				i.Commit = s.Value
			}
		case "vcs.time":
			if i.Date == "" {
				i.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	// A work tree with uncommitted changes is not the commit it names.
	if modified && commit == "" && i.Commit != "" {
		i.Commit += "+dirty"
	}
	return i.orDefaults()
}

func (i Info) orDefaults() Info {
	if i.Version == "" {
		i.Version = Dev
	}
	if i.Commit == "" {
		i.Commit = Unknown
	}
	if i.Date == "" {
		i.Date = Unknown
	}
	return i
}

// ShortCommit is the commit as people write it: its first 12 characters
// (and "+dirty" when the work tree had changes).
func (i Info) ShortCommit() string {
	hash, dirty, _ := strings.Cut(i.Commit, "+")
	if len(hash) > 12 {
		hash = hash[:12]
	}
	if dirty != "" {
		return hash + "+" + dirty
	}
	return hash
}

// String is the one line the footer shows: "v1.2.3 (abc1234567ab,
// 2026-12-02T00:00:00Z)", leaving out what is unknown ("dev" alone for a
// build that recorded nothing).
func (i Info) String() string {
	var known []string
	if i.Commit != Unknown {
		known = append(known, i.ShortCommit())
	}
	if i.Date != Unknown {
		known = append(known, i.Date)
	}
	if len(known) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(known, ", ") + ")"
}
