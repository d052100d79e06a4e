package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	stamped := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
	}}
	dirty := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.modified", Value: "true"},
	}}
	cases := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  Info
		line                  string
	}{
		{"a release build says what the linker was given, over the build info",
			"v1.2.3", "abc", "2026-12-02T00:00:00Z", stamped,
			Info{"v1.2.3", "abc", "2026-12-02T00:00:00Z", "go1.26.0"}, "v1.2.3 (abc, 2026-12-02T00:00:00Z)"},
		{"a checkout built with -buildvcs=false is dev, commit and date unknown",
			"", "", "", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			Info{Dev, Unknown, Unknown, "go1.26.0"}, "dev"},
		{"a checkout built with VCS stamping names its commit and the commit's time",
			"", "", "", stamped,
			Info{Dev, "0123456789abcdef0123456789abcdef01234567", "2026-12-01T10:00:00Z", "go1.26.0"}, "dev (0123456789ab, 2026-12-01T10:00:00Z)"},
		{"a work tree with changes is not the commit it names",
			"", "", "", dirty,
			Info{Dev, "0123456789abcdef0123456789abcdef01234567+dirty", Unknown, "go1.26.0"}, "dev (0123456789ab+dirty)"},
		{"go install of a tagged module says the module version",
			"", "", "", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.4.0"}},
			Info{"v1.4.0", Unknown, Unknown, "go1.26.0"}, "v1.4.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := resolve(c.version, c.commit, c.date, c.bi)
			if got != c.want {
				t.Fatalf("resolve: %+v; want %+v", got, c.want)
			}
			if got.String() != c.line {
				t.Fatalf("String: %q; want %q", got.String(), c.line)
			}
		})
	}
}

func TestWithoutBuildInfoItIsStillAVersion(t *testing.T) {
	t.Parallel()
	got := resolve("", "", "", nil)
	if got.Version != Dev || got.Commit != Unknown || got.Date != Unknown || got.GoVersion == "" {
		t.Fatalf("%+v", got)
	}
}
