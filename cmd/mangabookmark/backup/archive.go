package backup

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/mangabookmark/mangabookmark/server"
)

// The caps on what a backup's entries may hold. The tar is not compressed
// and only regular files are taken, so no entry of an honest backup is
// larger than the file that holds it: that is the dump's cap, whatever the
// number of Series. The manifest and the keys are a few hundred bytes.
const (
	maxManifest = 1 << 20
	maxKey      = 64 << 10
	// diskMargin is left free beside the copied dump, so a restore never
	// fills the disk the database lives on.
	diskMargin = 64 << 20
)

// readTar checks the manifest, writes the archive to dump and returns the
// keys. Every entry must be a regular file no larger than the backup
// itself, and every key must be one serve would start with, all checked
// before the key is returned: a restore refuses what it could not run on
// (ADR 0023). The dump is written only when the disk holds it.
func readTar(file, dump string) (Manifest, map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return Manifest{}, nil, fmt.Errorf("cannot read the backup %s: %w", file, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Manifest{}, nil, err
	}
	notOurs := fmt.Errorf("%s is not a mangabookmark backup (made by `mangabookmark backup FILE`)", file)
	if !fi.Mode().IsRegular() {
		return Manifest{}, nil, notOurs
	}
	tr := tar.NewReader(f)
	var m Manifest
	keys := map[string][]byte{}
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Manifest{}, nil, notOurs
		}
		if err := checkEntry(file, h, fi.Size()); err != nil {
			return Manifest{}, nil, err
		}
		if seen[h.Name] {
			return Manifest{}, nil, fmt.Errorf("%s holds %s twice, so it is not a backup restore can trust", file, h.Name)
		}
		seen[h.Name] = true
		switch name := h.Name; {
		case name == manifestName:
			if m, err = readManifest(file, tr, notOurs); err != nil {
				return Manifest{}, nil, err
			}
		case name == dumpName:
			if err := copyTo(dump, tr, h.Size); err != nil {
				return Manifest{}, nil, err
			}
		case strings.HasPrefix(name, keysDir) && slices.Contains(KeyFiles, strings.TrimPrefix(name, keysDir)):
			k := strings.TrimPrefix(name, keysDir)
			b, err := io.ReadAll(io.LimitReader(tr, maxKey))
			if err != nil {
				return Manifest{}, nil, notOurs
			}
			if err := checkKey(k, b); err != nil {
				return Manifest{}, nil, fmt.Errorf("%s in %s %w, so restore will not write it: serve could not start with it", name, file, err)
			}
			keys[k] = b
		}
	}
	if m.Format == 0 || !seen[dumpName] {
		return Manifest{}, nil, notOurs
	}
	return m, keys, nil
}

// readManifest reads the backup's manifest (at most maxManifest bytes):
// notOurs when it does not decode, a sentence when its format is not the
// one this version restores.
func readManifest(file string, r io.Reader, notOurs error) (Manifest, error) {
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(r, maxManifest)).Decode(&m); err != nil {
		return Manifest{}, notOurs
	}
	if m.Format != FormatVersion {
		return Manifest{}, fmt.Errorf("%s is a backup of format %d; this version restores format %d only", file, m.Format, FormatVersion)
	}
	return m, nil
}

// checkEntry refuses an entry that is not a regular file (a symlink, a hard
// link, a FIFO, a device: none is what backup writes, and each would be
// written as something else), a sparse one, and one larger than its cap.
func checkEntry(file string, h *tar.Header, fileSize int64) error {
	if h.Typeflag != tar.TypeReg {
		return fmt.Errorf("%s holds %s as %s, not a regular file, so restore will not write it", file, h.Name, entryKind(h.Typeflag))
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return fmt.Errorf("%s holds %s as a sparse file, which backup never writes, so restore will not read it", file, h.Name)
		}
	}
	limit := fileSize
	switch {
	case h.Name == manifestName:
		limit = min(limit, maxManifest)
	case strings.HasPrefix(h.Name, keysDir):
		limit = min(limit, maxKey)
	}
	if h.Size < 0 || h.Size > limit {
		return fmt.Errorf("%s says %s holds %d bytes, more than the %d it may (no entry is larger than the backup itself), so restore will not read it", file, h.Name, h.Size, limit)
	}
	return nil
}

func entryKind(flag byte) string {
	switch flag {
	case tar.TypeSymlink:
		return "a symlink"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeFifo:
		return "a FIFO"
	case tar.TypeDir:
		return "a directory"
	case tar.TypeChar, tar.TypeBlock:
		return "a device"
	case tar.TypeGNUSparse:
		return "a sparse file"
	}
	return fmt.Sprintf("type %q", flag)
}

// checkKey is serve's own rule for each key file (server.CheckKey,
// server.CheckVAPIDFile): a key serve would refuse is refused here, before
// anything is written.
func checkKey(name string, b []byte) error {
	if name == "vapid.json" {
		return server.CheckVAPIDFile(b)
	}
	return server.CheckKey(b)
}

// copyTo writes size bytes of r to path, created 0600 and new, once the
// disk under it has room for them and a margin.
func copyTo(path string, r io.Reader, size int64) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return fmt.Errorf("free space in %s: %w", filepath.Dir(path), err)
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free < size+diskMargin {
		return fmt.Errorf("the database dump needs %d MiB and %s has %d MiB free: free some space (or set TMPDIR to a disk that has it) and restore again", (size+diskMargin)>>20, filepath.Dir(path), free>>20)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, io.LimitReader(r, size)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
