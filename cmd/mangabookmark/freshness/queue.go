package freshness

import (
	"slices"
	"time"
)

// entry is a Series in a queue under a key, live while stamp is the
// Series' read count (lazy deletion: a read leaves its old entries behind
// and the queues drop them when they surface).
type entry struct {
	key   time.Duration
	s     int32
	stamp uint32
}

func less(a, b entry) bool { return a.key < b.key || a.key == b.key && a.s < b.s }

func sortEntries(v []entry) {
	slices.SortFunc(v, func(a, b entry) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
}

// minHeap is a binary heap of entries, least key first.
type minHeap struct{ items []entry }

func (h *minHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *minHeap) push(e entry) {
	h.items = append(h.items, e)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *minHeap) pop() {
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	h.down(0)
}

func (h *minHeap) down(i int) {
	n := len(h.items)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && less(h.items[c+1], h.items[c]) {
			c++
		}
		if !less(h.items[c], h.items[i]) {
			return
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
}

// fifo is a queue whose entries arrive in key order.
type fifo struct {
	items []entry
	head  int
}

func (q *fifo) push(e entry) { q.items = append(q.items, e) }

func (q *fifo) peek() (entry, bool) {
	if q.head < len(q.items) {
		return q.items[q.head], true
	}
	return entry{}, false
}

// pop drops the first entry, and the spent front once it is most of the
// slice, so the queue's memory stays that of what is in it.
func (q *fifo) pop() {
	q.head++
	if q.head > 1024 && q.head*2 > len(q.items) {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
}
