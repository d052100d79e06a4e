package demo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store/localpg"
)

// demoData is what the demo writes: DATA_DIR/demo (its keys, the sidecar's
// profile) and its own cluster, which a root process keeps outside DATA_DIR
// (localpg.Where). The demo holds DATA_DIR/demo.lock while it runs, so a
// second demo on the same DATA_DIR is refused before it wipes the first
// one's data (issue 23, item 9: a second demo beside a first delivered none
// of its notices). Without --keep the data is wiped at start and removed
// at the end.
type demoData struct {
	dir     string // DATA_DIR/demo
	cluster string // where the cluster lives; "" with --database
	keep    bool
	lock    *os.File
}

// holdDemoData takes DATA_DIR/demo.lock and, without --keep, wipes what a
// demo that did not end cleanly left.
func holdDemoData(dataDir string, o demoOptions) (*demoData, error) {
	d := &demoData{dir: filepath.Join(dataDir, "demo"), keep: o.keep}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dataDir, "demo.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := io.ReadAll(lock)
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("demo: another demo (pid %s) runs on DATA_DIR %s; stop it first, or give this one its own DATA_DIR and LISTEN_ADDR", strings.TrimSpace(string(b)), dataDir)
		}
		return nil, fmt.Errorf("demo: lock %s: %w", lock.Name(), err)
	}
	d.lock = lock
	if err := errors.Join(lock.Truncate(0), writeAt(lock, strconv.Itoa(os.Getpid())+"\n")); err != nil {
		d.release()
		return nil, fmt.Errorf("demo: %w", err)
	}
	if !o.keep {
		if err := d.remove(); err != nil {
			d.release()
			return nil, fmt.Errorf("demo: start afresh: %w", err)
		}
	}
	// Open to others, so that as root the cluster's place does not change
	// once the sidecar's profile (0700) is made inside it.
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		d.release()
		return nil, fmt.Errorf("demo: %w", err)
	}
	if o.database == "" {
		where, err := localpg.Where(server.LocalCluster(d.dir))
		if err != nil {
			d.release()
			return nil, err
		}
		d.cluster = where
	}
	return d, nil
}

func writeAt(f *os.File, s string) error {
	_, err := f.WriteAt([]byte(s), 0)
	return err
}

// Where is the directory the banner names for the demo's database.
func (d *demoData) Where() string { return d.cluster }

// end is the demo's last step, once its cluster has stopped: the data is
// removed unless --keep, and the console says which.
func (d *demoData) end(out io.Writer) {
	defer d.release()
	places := d.dir
	if d.cluster != "" && !strings.HasPrefix(d.cluster, d.abs()+string(filepath.Separator)) {
		places += " and " + d.cluster
	}
	if d.keep {
		fmt.Fprintf(out, "demo: its data is kept in %s (--keep); the next `demo --keep` starts from it\n", places)
		return
	}
	if err := d.remove(); err != nil {
		fmt.Fprintf(out, "demo: its data could not be removed: %v\n", err)
		return
	}
	fmt.Fprintf(out, "demo: removed its data in %s (--keep keeps it)\n", places)
}

func (d *demoData) abs() string {
	a, err := filepath.Abs(d.dir)
	if err != nil {
		return d.dir
	}
	return a
}

func (d *demoData) remove() error {
	if err := localpg.Remove(server.LocalCluster(d.dir)); err != nil {
		return err
	}
	return os.RemoveAll(d.dir)
}

// release gives up DATA_DIR/demo.lock (removing the file: the next demo
// makes its own).
func (d *demoData) release() {
	_ = os.Remove(d.lock.Name())
	_ = d.lock.Close()
}
