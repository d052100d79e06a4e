package server

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/internal/citest"
)

const module = "github.com/mangabookmark/mangabookmark"

// layerRules are the package layers a test holds (STYLE.md, packages): a
// new import that breaks a row fails TestThePackageLayersHold with the row's
// reason. Each row reads every package its packages link (go list -deps),
// not only what they name themselves.
var layerRules = []struct {
	pkgs      []string
	forbidden []string
	why       string
}{
	{[]string{"word"}, []string{module + "/"},
		"word holds the system's words and imports nothing of ours, so every layer can use it"},
	{[]string{"adapters"}, []string{module + "/fetch", module + "/store"},
		"adapters parse bytes and hold the pure address rules; they never fetch or store"},
	{[]string{"components"}, []string{module + "/store", module + "/handlers", module + "/poller"},
		"components take view models shaped like the screen, never a store or a handler"},
	{[]string{"store", "notify", "poller", "announce", "handlers"}, []string{"github.com/chromedp/"},
		"only the fetcher drives a browser; the rest links no chromedp (the address rules live in adapters)"},
}

// TestThePackageLayersHold checks each row of layerRules over the module's
// real import graph, and that only fetch imports chromedp in production.
func TestThePackageLayersHold(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		citest.Skip(t, "no go command: %v", err)
	}
	for _, rule := range layerRules {
		for _, pkg := range rule.pkgs {
			for _, dep := range listDeps(t, gobin, module+"/"+pkg) {
				if dep == module+"/"+pkg {
					continue
				}
				for _, f := range rule.forbidden {
					if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) {
						t.Errorf("%s links %s: %s", pkg, dep, rule.why)
					}
				}
			}
		}
	}
	out, err := exec.Command(gobin, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 1 && slices.Contains(fields[1:], "github.com/chromedp/chromedp") && fields[0] != module+"/fetch" {
			t.Errorf("%s imports chromedp: only fetch drives the browser sidecar", fields[0])
		}
	}
}

// listDeps is every package pkg links, itself included.
func listDeps(t *testing.T, gobin, pkg string) []string {
	t.Helper()
	out, err := exec.Command(gobin, "list", "-deps", "-json", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	var deps []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		deps = append(deps, p.ImportPath)
	}
	if len(deps) < 2 {
		t.Fatalf("go list %s listed %d packages; the check saw nothing", pkg, len(deps))
	}
	return deps
}
