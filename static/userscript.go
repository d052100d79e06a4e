package static

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// userscriptSource is the userscript as kept in the repository: its metadata
// block holds markers the server fills from PUBLIC_BASE_URL.
//
//go:embed userscript/mangabookmark.user.js
var userscriptSource []byte

// The markers in the source, and where the script ends its metadata block.
const (
	markBase    = "__BASE_URL__"
	markConnect = "__CONNECT_HOST__"
	markTokens  = "__TOKENS_MATCH__"
	metaEnd     = "// ==/UserScript==\n"
)

var versionLine = regexp.MustCompile(`(?m)^// @version\s+(\S+)\s*$`)

// UserscriptVersion is the @version of the embedded userscript: the newest
// one, which the API names to every older script that calls it.
func UserscriptVersion() string {
	m := versionLine.FindSubmatch(userscriptSource)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// versionsFile is the list of every released userscript
// (userscript/versions.txt): its version, then the hash of its body.
//
//go:embed userscript/versions.txt
var versionsFile string

// UserscriptVersions is every version of the userscript ever released, the
// oldest first: the versions /metrics names one by one (any other a client
// sends is counted as "other", so no client can grow the label set).
func UserscriptVersions() []string {
	var out []string
	for _, line := range strings.Split(versionsFile, "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			out = append(out, f[0])
		}
	}
	return out
}

// Userscript is the served userscript: the script and its metadata block alone
// (what managers fetch to check for updates), each with its ETag.
type Userscript struct {
	Script, Meta         []byte
	ScriptETag, MetaETag string
}

// RenderUserscript fills the userscript's markers from the server's public
// address: @connect names its host in the form a manager accepts (a name, an IP
// or localhost, without port or brackets), the /tokens @match leaves the port
// out (a match pattern with a port is invalid in Firefox, and without one it
// matches every port), and the update addresses are absolute.
func RenderUserscript(publicBaseURL string) (Userscript, error) {
	base := strings.TrimRight(publicBaseURL, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return Userscript{}, errors.New("static: the public base URL is not an absolute http(s) address")
	}
	if strings.ContainsAny(base, "\r\n\t ") {
		return Userscript{}, errors.New("static: the public base URL holds white space")
	}
	host := strings.ToLower(u.Hostname())
	matchHost := host
	if strings.Contains(host, ":") {
		matchHost = "[" + host + "]"
	}
	tokens := u.Scheme + "://" + matchHost + u.EscapedPath() + "/tokens*"
	quoted, err := json.Marshal(base) // a JavaScript string literal, whatever the address holds
	if err != nil {
		return Userscript{}, err
	}
	src := string(userscriptSource)
	i := strings.Index(src, metaEnd)
	if i < 0 {
		return Userscript{}, errors.New("static: the userscript has no metadata block")
	}
	meta := strings.NewReplacer(markTokens, tokens, markConnect, host, markBase, base).Replace(src[:i+len(metaEnd)])
	body := strings.ReplaceAll(src[i+len(metaEnd):], "'"+markBase+"'", string(quoted))
	if strings.Contains(body, markBase) {
		return Userscript{}, errors.New("static: the userscript names the base URL outside its one constant")
	}
	script := []byte(meta + body)
	return Userscript{Script: script, Meta: []byte(meta), ScriptETag: etag(script), MetaETag: etag([]byte(meta))}, nil
}

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}
