package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVAPIDKeysAreMadeOnceAndKeptLikeTheOtherKeys(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	first, err := VAPIDKeysFor(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Public) != 87 || len(first.Private.Reveal()) != 43 {
		t.Fatalf("keys of %d and %d characters; want a P-256 point and scalar in base64url", len(first.Public), len(first.Private.Reveal()))
	}
	st, err := os.Stat(filepath.Join(dir, "vapid.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("vapid.json mode %v, want 0600 like session.key", st.Mode().Perm())
	}
	again, err := VAPIDKeysFor(dir)
	if err != nil || again != first {
		t.Fatalf("a restart must keep the keys (every browser's subscription is bound to them): %v", err)
	}
	if s := first.Private.String(); strings.Contains(s, first.Private.Reveal()) {
		t.Fatal("the private key prints")
	}
}

func TestABrokenVAPIDFileIsNamedNotReplaced(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not JSON":         "garbage",
		"a mismatched key": `{"public":"BEXAMPLE","private":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`,
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "vapid.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := VAPIDKeysFor(dir)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "delete it") {
			t.Errorf("%s: %v; want an error naming the file and the fix", name, err)
		}
		if b, _ := os.ReadFile(p); string(b) != body {
			t.Errorf("%s: the file was replaced", name)
		}
	}
}
