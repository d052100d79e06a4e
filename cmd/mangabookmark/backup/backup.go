// Package backup is the owner's one-file copy of a server: the database as
// a pg_dump custom archive and the keys under DATA_DIR the server cannot
// live without, in a tar (ADR 0023). Losing token.key voids every
// userscript token and every feed address; losing vapid.json ends every
// Web Push subscription: the keys travel with the rows they sign.
package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/store/localpg"
)

// FormatVersion is the layout of the file; Restore refuses any other.
const FormatVersion = 1

// KeyFiles are the files under DATA_DIR a backup carries, whichever exist.
var KeyFiles = []string{"token.key", "session.key", "vapid.json"}

const (
	manifestName = "manifest.json"
	dumpName     = "db.dump"
	keysDir      = "keys/"
)

// Manifest is the file's first entry.
type Manifest struct {
	Format    int       `json:"format"`
	CreatedAt time.Time `json:"created_at"`
	PgDump    string    `json:"pg_dump"` // pg_dump --version, for a restore that fails
	Entries   []string  `json:"entries"`
}

// Write writes the backup of the database at dbURL and the keys in dataDir
// to file, which must not exist yet (Overwrite replaces it). The tar goes
// to a new temporary file beside it, created 0600 and exclusively (a name
// planted there is never followed or written through: it holds the keys),
// and takes file's name only once complete, so a failed backup never
// replaces a good one.
func Write(ctx context.Context, dbURL, dataDir, file string, now time.Time) (Manifest, error) {
	return write(ctx, dbURL, dataDir, file, now, false)
}

// Overwrite is Write that replaces an existing file (`backup --force`).
func Overwrite(ctx context.Context, dbURL, dataDir, file string, now time.Time) (Manifest, error) {
	return write(ctx, dbURL, dataDir, file, now, true)
}

// CheckTarget refuses, with a sentence, a file that exists when force is
// off: backup never replaces a file the owner did not name for it.
func CheckTarget(file string, force bool) error {
	if _, err := os.Lstat(file); err == nil && !force {
		return RefusedError{fmt.Sprintf("%s already exists, so backup will not overwrite it: name a new file, or add --force to replace it.", file)}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func write(ctx context.Context, dbURL, dataDir, file string, now time.Time, force bool) (Manifest, error) {
	if err := CheckTarget(file, force); err != nil {
		return Manifest{}, err
	}
	keys, err := readKeys(dataDir)
	if err != nil {
		return Manifest{}, err
	}
	work, err := os.MkdirTemp("", "mangabookmark-backup-")
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(work)
	dump := filepath.Join(work, dumpName)
	version, err := pgDump(ctx, dbURL, dump)
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{Format: FormatVersion, CreatedAt: now.UTC(), PgDump: version, Entries: []string{dumpName}}
	for _, k := range KeyFiles {
		if _, ok := keys[k]; ok {
			m.Entries = append(m.Entries, keysDir+k)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return Manifest{}, err
	}
	defer os.Remove(tmp.Name())
	if err := writeTar(tmp, m, dump, keys); err != nil {
		return Manifest{}, err
	}
	if err := publish(tmp.Name(), file, force); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// publish gives the finished temporary file its name: a hard link, which
// fails when the name was taken meanwhile, unless force allows a rename
// over it. Where the disk has no hard links, the name is checked again and
// the file renamed.
func publish(tmp, file string, force bool) error {
	if force {
		return os.Rename(tmp, file)
	}
	err := os.Link(tmp, file)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrExist):
		return CheckTarget(file, false)
	}
	if err := CheckTarget(file, false); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// readKeys reads the key files that exist in dataDir.
func readKeys(dataDir string) (map[string][]byte, error) {
	keys := map[string][]byte{}
	for _, k := range KeyFiles {
		b, err := os.ReadFile(filepath.Join(dataDir, k))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dataDir, k), err)
		}
		keys[k] = b
	}
	return keys, nil
}

func writeTar(f *os.File, m Manifest, dump string, keys map[string][]byte) error {
	defer f.Close()
	tw := tar.NewWriter(f)
	mb, _ := json.MarshalIndent(m, "", "  ")
	if err := addBytes(tw, manifestName, mb, m.CreatedAt); err != nil {
		return err
	}
	d, err := os.Open(dump)
	if err != nil {
		return err
	}
	defer d.Close()
	fi, err := d.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: dumpName, Mode: 0o600, Size: fi.Size(), ModTime: m.CreatedAt}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, d); err != nil {
		return err
	}
	for _, k := range KeyFiles {
		if b, ok := keys[k]; ok {
			if err := addBytes(tw, keysDir+k, b, m.CreatedAt); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

func addBytes(tw *tar.Writer, name string, b []byte, at time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: at}); err != nil {
		return err
	}
	_, err := tw.Write(b)
	return err
}

// pgDump writes the custom-format archive of dbURL to out and returns the
// pg_dump version line. It owns nothing: --no-owner, --no-acl, so the
// archive restores under any role.
func pgDump(ctx context.Context, dbURL, out string) (string, error) {
	bin, err := localpg.FindClient("pg_dump")
	if err != nil {
		return "", err
	}
	ver, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("pg_dump --version: %w", err)
	}
	if err := runClient(ctx, bin, dbURL, "--format=custom", "--no-owner", "--no-acl", "--file="+out); err != nil {
		return "", fmt.Errorf("pg_dump: %w", err)
	}
	return strings.TrimSpace(string(ver)), nil
}

// runClient runs a PostgreSQL client against dbURL. The password travels in
// PGPASSWORD, never on the command line where any user's ps would show it.
func runClient(ctx context.Context, bin, dbURL string, args ...string) error {
	conn, password := withoutPassword(dbURL)
	cmd := exec.CommandContext(ctx, bin, append(args, "--dbname="+conn)...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
	if password == "" {
		cmd.Env = os.Environ()
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, lastLines(out.String()))
	}
	return nil
}

// withoutPassword splits a postgres:// URL's password out; any other form
// is passed on as written.
func withoutPassword(dbURL string) (conn, password string) {
	u, err := url.Parse(dbURL)
	if err != nil || u.User == nil {
		return dbURL, ""
	}
	password, _ = u.User.Password()
	u.User = url.User(u.User.Username())
	return u.String(), password
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, "; ")
}
