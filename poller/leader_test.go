package poller_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
)

// link is a TCP relay between a process and the database, which a test can
// cut or freeze the way a network does: a cut closes the process's side and
// leaves the database's side open (the database never hears of it, a
// half-open connection), a freeze stops every byte both ways and closes
// nothing (a host suspended). Connections made after a cut pass normally.
type link struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu     sync.Mutex
	frozen chan struct{} // closed: not frozen
	pairs  []*pair
}

// pair is one relayed connection.
type pair struct {
	proc, db net.Conn
	cut      bool // under link.mu
}

func newLink(t *testing.T, target string) *link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &link{t: t, ln: ln, target: target, frozen: make(chan struct{})}
	close(k.frozen)
	go k.serve()
	t.Cleanup(func() {
		k.thaw()
		ln.Close()
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, p := range k.pairs {
			p.proc.Close()
			p.db.Close()
		}
	})
	return k
}

func (k *link) serve() {
	for {
		c, err := k.ln.Accept()
		if err != nil {
			return
		}
		d, err := net.Dial("tcp", k.target)
		if err != nil {
			c.Close()
			continue
		}
		p := &pair{proc: c, db: d}
		k.mu.Lock()
		k.pairs = append(k.pairs, p)
		k.mu.Unlock()
		go k.pump(p, d, c)
		go k.pump(p, c, d)
	}
}

// pump copies src to dst, holding every chunk while the link is frozen.
// When src ends, dst is closed too, unless the pair was cut: then the
// database's side stays open and never hears of it.
func (k *link) pump(p *pair, dst, src net.Conn) {
	defer func() {
		k.mu.Lock()
		cut := p.cut
		k.mu.Unlock()
		if !cut {
			dst.Close()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			k.mu.Lock()
			f := k.frozen
			k.mu.Unlock()
			<-f
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cut closes the process's side of every connection so far and leaves the
// database's side open.
func (k *link) cut() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.pairs {
		p.cut = true
		p.proc.Close()
	}
}

func (k *link) freeze() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.frozen = make(chan struct{})
}

func (k *link) thaw() {
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-k.frozen:
	default:
		close(k.frozen)
	}
}

// linked opens a pool on the rig's database through a new link: a process
// on a network of its own.
func (r *rig) linked() (*store.Store, *link) {
	r.t.Helper()
	cfg, err := pgxpool.ParseConfig(r.pool.Config().ConnString())
	if err != nil {
		r.t.Fatal(err)
	}
	k := newLink(r.t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
	host, port, _ := net.SplitHostPort(k.ln.Addr().String())
	p, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Fallbacks = host, uint16(p), nil
	store.Tune(cfg)
	pool, err := pgxpool.NewWithConfig(r.ctx, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(pool.Close)
	return store.New(pool), k
}

// runOf runs p until the test ends.
func (r *rig) runOf(p *poller.Poller) {
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	r.t.Cleanup(func() { cancel(); <-done })
}

// A network cut the database never notices leaves the old sessions' backends
// alive. The leader's own retake must not find its Lane held by its own
// ghost: a Forced Poll asked just after the cut is served within seconds,
// not after a LeaderRetry, nor never (issue 22, item 8).
func TestAfterACutTheDatabaseNeverNoticedTheLeaderStillServesAForcedPoll(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	st, k := r.linked()
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(r.logs.String())
		}
	})
	a := r.poller(st)
	r.runOf(a)
	waitFor(t, "the first pass", func() bool { return len(r.passes(site)) == 1 })
	r.clk.Advance(time.Minute) // not due for 59 more minutes; the Lane rests

	k.cut()
	waitFor(t, "the leader to hear of the cut", func() bool {
		return strings.Contains(r.logs.String(), "lane wake session lost")
	})
	time.Sleep(100 * time.Millisecond)
	if err := r.st.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Forced Poll", func() bool { return r.rd.readsOf(url("a")) == 2 })
}

// A leader whose host is suspended keeps its sockets open and says nothing.
// Another process takes the Lane once the vanished leader's lease has run
// out, and serves the Forced Poll waiting there (issue 22, item 8).
func TestAnotherProcessTakesTheLaneOfALeaderThatVanishedWithoutClosing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	const lease = time.Second
	short := func(c *poller.Config) { c.LeaderLease = lease }
	st, k := r.linked()
	a := r.poller(st, short)
	r.runOf(a)
	waitFor(t, "the first pass", func() bool { return r.rd.readsOf(url("a")) == 1 })
	b := r.poller(r.second(), short)
	r.runOf(b)
	time.Sleep(100 * time.Millisecond) // b asked, and found the Lane led

	k.freeze()
	r.clk.Advance(time.Minute)
	asked := time.Now()
	if err := r.st.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other process to serve the Forced Poll", func() bool { return r.rd.readsOf(url("a")) == 2 })
	took := time.Since(asked)
	k.thaw() // the host wakes: its Lane finds the lease gone
	if took > lease+4*time.Second {
		t.Fatalf("the takeover took %v with a %v lease", took, lease)
	}
}
