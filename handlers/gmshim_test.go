package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// gmShim stands in for a userscript manager inside a real Chromium tab: the
// page calls window.GM.*, a CDP binding hands each call to Go, and Go answers.
// Its storage outlives every page load (a manager's storage is per script,
// not per page), and its requests leave from Go, not from the page, so — as
// with a real manager — there is no CORS and no cookie.
type gmShim struct {
	t      *testing.T
	client *http.Client

	mu       sync.Mutex
	values   map[string]string // key → JSON
	requests []shimRequest
	slow     string        // requests whose address holds this answer late
	slowFor  time.Duration // by this much
}

// answerLate holds back the answer to every request whose address contains
// part by d, as a slow server would; "" answers every request at once.
func (g *gmShim) answerLate(part string, d time.Duration) {
	g.mu.Lock()
	g.slow, g.slowFor = part, d
	g.mu.Unlock()
}

// shimRequest is one GM.xmlHttpRequest the script made.
type shimRequest struct {
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Data      *string           `json:"data"`
	Anonymous bool              `json:"anonymous"`
	Status    int               `json:"-"` // the answer's status; 0 when the connection failed
}

// gmShimJS is evaluated before the script on every page: the GM API of
// Greasemonkey 4 (promises), each call a message to Go through mbShim.
const gmShimJS = `(() => {
  let seq = 0;
  const waiting = new Map();
  window.__mbAnswer = (id, value) => { const f = waiting.get(id); waiting.delete(id); if (f) f(value); };
  const call = (op, args) => new Promise((resolve) => { const id = ++seq; waiting.set(id, resolve); window.mbShim(JSON.stringify({ id, op, args })); });
  window.__mbMenu = {};
  window.GM = {
    getValue: (k, d) => call('get', { k }).then((v) => (v === null ? d : JSON.parse(v))),
    setValue: (k, v) => call('set', { k, v: JSON.stringify(v) }).then(() => undefined),
    deleteValue: (k) => call('del', { k }).then(() => undefined),
    registerMenuCommand: (label, fn) => { window.__mbMenu[label] = fn; },
    xmlHttpRequest: (o) => {
      call('xhr', { method: o.method, url: o.url, headers: o.headers || {}, data: o.data === undefined ? null : o.data, anonymous: !!o.anonymous })
        .then((r) => (r.status === 0 ? o.onerror({}) : o.onload(r)));
    },
  };
})();`

func newGMShim(t *testing.T) *gmShim {
	return &gmShim{t: t, values: map[string]string{}, client: &http.Client{Timeout: 10 * time.Second}}
}

// attach installs the binding in the tab and answers its calls.
func (g *gmShim) attach(ctx context.Context) error {
	if err := chromedp.Listen(ctx, func(ev any) {
		if b, ok := ev.(*runtime.EventBindingCalled); ok && b.Name == "mbShim" {
			go g.answer(ctx, b.Payload)
		}
	}); err != nil {
		return err
	}
	_, err := chromedp.Call(ctx, runtime.AddBinding, runtime.AddBindingParams{Name: "mbShim"})
	return err
}

func (g *gmShim) answer(ctx context.Context, payload string) {
	var msg struct {
		ID   int             `json:"id"`
		Op   string          `json:"op"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal([]byte(payload), &msg); err != nil {
		g.t.Errorf("shim: %v", err)
		return
	}
	var kv struct {
		K string `json:"k"`
		V string `json:"v"`
	}
	var out any
	switch msg.Op {
	case "get":
		_ = json.Unmarshal(msg.Args, &kv)
		g.mu.Lock()
		if v, ok := g.values[kv.K]; ok {
			out = v
		}
		g.mu.Unlock()
	case "set":
		_ = json.Unmarshal(msg.Args, &kv)
		g.mu.Lock()
		g.values[kv.K] = kv.V
		g.mu.Unlock()
	case "del":
		_ = json.Unmarshal(msg.Args, &kv)
		g.mu.Lock()
		delete(g.values, kv.K)
		g.mu.Unlock()
	case "xhr":
		var req shimRequest
		_ = json.Unmarshal(msg.Args, &req)
		out = g.do(req)
	}
	b, _ := json.Marshal(out)
	// The tab may have navigated away meanwhile; then nobody waits.
	_, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf("window.__mbAnswer && window.__mbAnswer(%d, %s), true", msg.ID, b)))
}

// do sends one request as the manager would: status 0 when the connection
// fails.
func (g *gmShim) do(req shimRequest) map[string]any {
	out := g.send(req)
	req.Status, _ = out["status"].(int)
	g.mu.Lock()
	g.requests = append(g.requests, req)
	g.mu.Unlock()
	return out
}

func (g *gmShim) send(req shimRequest) map[string]any {
	g.mu.Lock()
	late := g.slow != "" && strings.Contains(req.URL, g.slow)
	wait := g.slowFor
	g.mu.Unlock()
	if late {
		time.Sleep(wait)
	}
	var body io.Reader
	if req.Data != nil {
		body = strings.NewReader(*req.Data)
	}
	r, err := http.NewRequest(req.Method, req.URL, body)
	if err != nil {
		return map[string]any{"status": 0}
	}
	for k, v := range req.Headers {
		r.Header.Set(k, v)
	}
	resp, err := g.client.Do(r)
	if err != nil {
		return map[string]any{"status": 0}
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	var hdr strings.Builder
	for k, vs := range resp.Header {
		fmt.Fprintf(&hdr, "%s: %s\r\n", k, strings.Join(vs, ", "))
	}
	return map[string]any{"status": resp.StatusCode, "responseHeaders": hdr.String(), "responseText": string(text)}
}

// value is one stored value, decoded into v; false when absent.
func (g *gmShim) value(key string, v any) bool {
	g.mu.Lock()
	raw, ok := g.values[key]
	g.mu.Unlock()
	if !ok {
		return false
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		g.t.Fatalf("stored %s: %v", key, err)
	}
	return true
}

func (g *gmShim) set(key string, v any) {
	b, _ := json.Marshal(v)
	g.mu.Lock()
	g.values[key] = string(b)
	g.mu.Unlock()
}

func (g *gmShim) sent() []shimRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]shimRequest(nil), g.requests...)
}
