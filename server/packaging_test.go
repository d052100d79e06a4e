package server

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The Debian package's /etc/mangabookmark/env (packaging/env) names every
// setting the server reads, each with a description line giving its
// default, and nothing it does not read: the file is how a packaged
// server is configured, so a setting missing from it is one nobody finds
// (issue 25, item 4). The settings are the ones LoadConfig asks getenv
// for, so a new one fails this test until the file has it.
func TestThePackagedEnvFileNamesEverySettingTheServerReads(t *testing.T) {
	read := settingsRead(t)
	b, err := os.ReadFile("../packaging/env")
	if err != nil {
		t.Fatal(err)
	}
	setting := regexp.MustCompile(`^#([A-Z][A-Z0-9_]*)=`)
	described := regexp.MustCompile(`^# ([A-Z][A-Z0-9_]*)( \(secret\))?: .+ Default: .+$`)
	inFile, withDefault := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := setting.FindStringSubmatch(line); m != nil {
			inFile[m[1]] = true
		}
		if m := described.FindStringSubmatch(line); m != nil {
			withDefault[m[1]] = true
		}
	}
	var missing, extra, undescribed []string
	for k := range read {
		if !inFile[k] {
			missing = append(missing, k)
		}
	}
	for k := range inFile {
		if !read[k] {
			extra = append(extra, k)
		}
		if !withDefault[k] {
			undescribed = append(undescribed, k)
		}
	}
	for _, l := range [][]string{missing, extra, undescribed} {
		sort.Strings(l)
	}
	if len(missing) > 0 {
		t.Errorf("packaging/env lacks settings the server reads: %s", strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		t.Errorf("packaging/env names settings the server never reads: %s", strings.Join(extra, ", "))
	}
	if len(undescribed) > 0 {
		t.Errorf("packaging/env has no line \"# NAME: what it does. Default: …\" above: %s", strings.Join(undescribed, ", "))
	}
}

// The README's Configuration table names every setting the server reads,
// as the packaged env file does.
func TestTheReadmeConfigurationTableNamesEverySettingTheServerReads(t *testing.T) {
	read := settingsRead(t)
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "\n## Configuration\n")
	table, _, _ = strings.Cut(table, "\n## ")
	var missing []string
	for k := range read {
		if !strings.Contains(table, "| `"+k+"`") && !strings.Contains(table, ", `"+k+"`") {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the README's Configuration table lacks: %s", strings.Join(missing, ", "))
	}
}

// settingsRead is every setting LoadConfig asks getenv for.
func settingsRead(t *testing.T) map[string]bool {
	read := map[string]bool{}
	LoadConfig(func(k string) string { read[k] = true; return "" })
	if !read["DATABASE_URL"] || !read["TIME_ZONE"] {
		t.Fatalf("the recording getenv missed settings LoadConfig reads; it saw %d", len(read))
	}
	return read
}
