package demo

import (
	_ "embed"
	"html/template"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The reading room: one stand-in chapter page that runs the real userscript
// (served by the demo's server) under a small stand-in for a userscript
// manager (room.js), so the panel, Progress recorded on reading and
// `⟳ N pending` can be seen in a plain browser. It lives on the asurascans
// stand-in and reaches the server through the stand-in's own proxy, which a
// button on the page can cut off as a dropped connection would.
const (
	demoRoomPath   = "/reading-room/"
	demoProxyPath  = "/_mangabookmark"
	demoRoomSwitch = "/_demo/server"
	demoRoomSite   = "asurascans"
	demoRoomFile   = "ongoing.html"
)

//go:embed room.js
var demoRoomShim []byte

// demoRoom serves the reading room once the server is up (set).
type demoRoom struct {
	site  *demoSite
	cut   atomic.Bool // the proxy drops every connection, as a lost server would
	mu    sync.Mutex
	ready bool
	base  string // the server's PUBLIC_BASE_URL
	token string // the reading Reader's userscript token
	proxy *httputil.ReverseProxy
}

// set opens the room: the server's address and the Reader's token.
func (r *demoRoom) set(base, token string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	p := httputil.NewSingleHostReverseProxy(u)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready, r.base, r.token, r.proxy = true, base, token, p
	return nil
}

// handler is the asurascans stand-in with the room in front of it.
func (r *demoRoom) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", r.site)
	mux.HandleFunc("GET "+demoRoomPath+"{n}", r.page)
	mux.HandleFunc("GET "+demoRoomPath+"shim.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write(demoRoomShim)
	})
	mux.HandleFunc("POST "+demoRoomSwitch, func(w http.ResponseWriter, req *http.Request) {
		r.cut.Store(req.FormValue("reachable") == "0")
		http.Redirect(w, req, req.FormValue("back"), http.StatusSeeOther)
	})
	mux.HandleFunc(demoProxyPath+"/", r.forward)
	return mux
}

// forward passes a request to the server, or drops the connection of an API
// call while the room's switch says the server is away.
func (r *demoRoom) forward(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	p := r.proxy
	r.mu.Unlock()
	// The script itself stays reachable: a manager keeps an installed
	// script, and only the API calls meet the dropped connection.
	if p == nil || r.cut.Load() && strings.HasPrefix(req.URL.Path, demoProxyPath+"/api/") {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		http.Error(w, "the server is away", http.StatusBadGateway)
		return
	}
	req.URL.Path = strings.TrimPrefix(req.URL.Path, demoProxyPath)
	req.Header.Del("Cookie") // the API reads a bearer token, never a session
	p.ServeHTTP(w, req)
}

var demoRoomPage = template.Must(template.New("room").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} chapter {{.N}}: the demo's reading room</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#15171a;color:#e8e6e3}
header,footer{padding:1rem;background:#22252a;max-width:46rem;margin:0 auto}
a{color:#8cb4ff} button{font:inherit;padding:.3rem .8rem}
.page{height:110vh;max-width:46rem;margin:1rem auto;background:linear-gradient(#2c3036,#444a52);display:flex;align-items:center;justify-content:center;font-size:2rem;color:#9aa3ad}
</style></head><body>
<header>
<p><strong>The demo's reading room.</strong> Chapter {{.N}} of <em>{{.Title}}</em> on the asurascans stand-in, read as {{.Reader}}, with the real userscript running under a small stand-in for a userscript manager. Scroll to the end and the panel records the chapter as read; the <a href="{{.Next}}">next chapter</a> is the one after.</p>
{{template "switch" .}}
</header>
{{range .Pages}}<div class="page">page {{.}}</div>
{{end}}
<footer><p><a href="{{.Prev}}">Previous chapter</a> · <a href="{{.Next}}">Next chapter</a></p>{{template "switch" .}}</footer>
<script src="{{.Shim}}" data-server="{{.Base}}" data-proxy="{{.Proxy}}" data-token="{{.Token}}" data-page="{{.Page}}"></script>
<script src="{{.Proxy}}/userscript/mangabookmark.user.js"></script>
</body></html>
{{define "switch"}}<form method="post" action="{{.Switch}}"><input type="hidden" name="back" value="{{.Here}}">
{{if .Cut}}<input type="hidden" name="reachable" value="1">The server is <strong>away</strong> (its connection drops): read on, and the panel queues your Progress as <code>⟳ N pending</code>. <button>Bring the server back</button>
{{else}}<input type="hidden" name="reachable" value="0">The server is reachable. <button>Take the server away</button>{{end}}
</form>{{end}}`))

// page is one chapter of the room's Series.
func (r *demoRoom) page(w http.ResponseWriter, req *http.Request) {
	n, err := strconv.Atoi(req.PathValue("n"))
	if err != nil || n < 1 || n > 100000 {
		http.NotFound(w, req)
		return
	}
	r.mu.Lock()
	ready, base, token := r.ready, r.base, r.token
	r.mu.Unlock()
	if !ready {
		http.Error(w, "the demo's server is still starting; reload in a moment", http.StatusServiceUnavailable)
		return
	}
	s, err := r.site.series(demoRoomFile)
	if err != nil {
		http.NotFound(w, req)
		return
	}
	f, _ := readPage(r.site.Site, s.Ref, r.site.original[s.Path])
	chapter := func(k int) string { return demoRoomPath + strconv.Itoa(k) }
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = demoRoomPage.Execute(w, map[string]any{
		"Title": f.Title, "N": n, "Reader": demoRoomReader().Name,
		"Prev": chapter(max(n-1, 1)), "Next": chapter(n + 1), "Here": chapter(n),
		"Switch": demoRoomSwitch, "Cut": r.cut.Load(), "Pages": []int{1, 2, 3, 4},
		"Shim": demoRoomPath + "shim.js", "Base": base, "Proxy": demoProxyPath, "Token": token,
		"Page": strings.TrimRight(s.Ref.URL, "/") + "/chapter/" + strconv.Itoa(n),
	})
}

// demoRoomReader is who reads in the room: Ben, who is a few chapters behind.
func demoRoomReader() demoReader { return demoReaders[1] }
