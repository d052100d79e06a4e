package announce_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

var b64 = base64.RawURLEncoding

// browser is what a browser keeps for one push subscription: its P-256
// key pair and its auth secret (RFC 8291 §2).
type browser struct {
	key  *ecdh.PrivateKey
	auth []byte
}

func newBrowser(t *testing.T) browser {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	return browser{key: k, auth: auth}
}

func (b browser) subscription(reader, endpoint string) store.PushSubscription {
	return store.PushSubscription{ReaderID: reader, Endpoint: endpoint,
		P256dh: b64.EncodeToString(b.key.PublicKey().Bytes()), Auth: b64.EncodeToString(b.auth)}
}

// decrypt opens an aes128gcm body (RFC 8188) as the browser would, with the
// keys of RFC 8291 §3.4, written here independently of webpush-go.
func (b browser) decrypt(t *testing.T, body []byte) []byte {
	t.Helper()
	if len(body) < 21 {
		t.Fatalf("body of %d bytes is shorter than its header", len(body))
	}
	salt, idlen := body[:16], int(body[20])
	rs := binary.BigEndian.Uint32(body[16:20])
	asPublic, record := body[21:21+idlen], body[21+idlen:]
	if uint32(len(record)) > rs {
		t.Fatalf("one record expected: %d bytes, record size %d", len(record), rs)
	}
	as, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		t.Fatalf("the key id is not the sender's P-256 key: %v", err)
	}
	secret, err := b.key.ECDH(as)
	if err != nil {
		t.Fatal(err)
	}
	keyInfo := append(append([]byte("WebPush: info\x00"), b.key.PublicKey().Bytes()...), asPublic...)
	ikm := must(hkdf.Key(sha256.New, secret, b.auth, string(keyInfo), 32))
	cek := must(hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16))
	nonce := must(hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12))
	blk, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(blk)
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		t.Fatalf("the push does not decrypt with the subscription's keys: %v", err)
	}
	plain = bytes.TrimRight(plain, "\x00")
	if len(plain) == 0 || plain[len(plain)-1] != 2 {
		t.Fatalf("the last record's delimiter (2) is missing")
	}
	return plain[:len(plain)-1]
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// pushService is a stand-in push service on loopback: it answers each
// endpoint path with its status (201 unless told) and keeps what it got.
type pushService struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status map[string]int
	got    map[string]*http.Request
	bodies map[string][]byte
	posts  int // every request, whatever its path
}

func newPushService(t *testing.T) *pushService {
	p := &pushService{status: map[string]int{}, got: map[string]*http.Request{}, bodies: map[string][]byte{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.got[r.URL.Path], p.bodies[r.URL.Path] = r, b
		p.posts++
		status := p.status[r.URL.Path]
		p.mu.Unlock()
		if status == 0 {
			status = http.StatusCreated
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pushService) endpoint(path string) string { return p.srv.URL + path }

func setup(t *testing.T, readers ...string) (*store.Store, *announce.Push, announce.VAPIDKeys) {
	t.Helper()
	pool := storetest.Pool(t, nil)
	for _, r := range readers {
		storetest.Insert(t, pool, storetest.Reader{ID: r, Name: r})
	}
	st := store.New(pool)
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	keys := announce.VAPIDKeys{Public: pub, Private: word.Secret(priv)}
	p, err := announce.NewPush(announce.PushOptions{Store: st, Keys: keys, Subject: "https://manga.example",
		Timeout: 5 * time.Second, Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	return st, p, keys
}

func save(t *testing.T, st *store.Store, subs ...store.PushSubscription) {
	t.Helper()
	for _, s := range subs {
		if err := st.SavePushSubscription(context.Background(), s, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

func announcement(readers ...string) announce.Announcement {
	a := announce.Announcement{Site: word.Asurascans, SeriesID: "solo", Title: "Solo Leveling",
		Chapters:   []word.Chapter{"101", "102", "103"},
		ChapterURL: "https://asuracomic.net/series/solo/chapter/103", SeriesURL: "https://asuracomic.net/series/solo",
		BookmarkURL: "https://manga.example/#asurascans/solo", CoverURL: "https://manga.example/covers/asurascans/solo"}
	for _, r := range readers {
		a.Readers = append(a.Readers, announce.Recipient{ReaderID: r})
	}
	return a
}

func TestPushIsEncryptedForTheSubscriptionAndSaysWhatIsNew(t *testing.T) {
	t.Parallel()
	st, p, keys := setup(t, "ada")
	svc := newPushService(t)
	br := newBrowser(t)
	save(t, st, br.subscription("ada", svc.endpoint("/push/ada-1")))

	res := p.Send(context.Background(), announcement("ada"))
	if err := res["ada"]; err != nil || len(res) != 1 {
		t.Fatalf("Send = %v", res)
	}
	svc.mu.Lock()
	req, body := svc.got["/push/ada-1"], svc.bodies["/push/ada-1"]
	svc.mu.Unlock()
	if req == nil {
		t.Fatal("the push service got nothing")
	}
	if req.Header.Get("Content-Encoding") != "aes128gcm" || req.Header.Get("TTL") != "86400" {
		t.Errorf("headers: Content-Encoding %q, TTL %q; want aes128gcm and a day", req.Header.Get("Content-Encoding"), req.Header.Get("TTL"))
	}
	if bytes.Contains(body, []byte("Solo")) {
		t.Fatal("the body carries the title in the clear")
	}
	var got announce.PushPayload
	if err := json.Unmarshal(br.decrypt(t, body), &got); err != nil {
		t.Fatal(err)
	}
	want := announce.PushPayload{Title: "Solo Leveling", Body: "Chapters 101–103",
		URL: "https://asuracomic.net/series/solo/chapter/103", Bookmark: "https://manga.example/#asurascans/solo",
		Icon: "https://manga.example/covers/asurascans/solo"}
	if got != want {
		t.Fatalf("payload\n got %+v\nwant %+v", got, want)
	}
	checkVAPID(t, req.Header.Get("Authorization"), keys.Public, svc.srv.URL)
}

// checkVAPID verifies the push's VAPID header (RFC 8292): our public key,
// and a JWT for the push service's origin signed by our private key.
func checkVAPID(t *testing.T, header, public, audience string) {
	t.Helper()
	tok, k, ok := strings.Cut(strings.TrimPrefix(header, "vapid t="), ", k=")
	if !ok || k != public {
		t.Fatalf("Authorization %q does not carry our public key", header)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic256(), must(b64.DecodeString(public)))
	if err != nil {
		t.Fatal(err)
	}
	sig := must(b64.DecodeString(parts[2]))
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the VAPID JWT is not signed by our key")
	}
	var claims struct{ Aud, Sub string }
	_ = json.Unmarshal(must(b64.DecodeString(parts[1])), &claims)
	if claims.Aud != audience || claims.Sub != "https://manga.example" {
		t.Fatalf("claims %+v, want aud %s", claims, audience)
	}
}

func TestPushServiceAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		statuses []int // one subscription per status
		wantErr  string
		gone     bool
		kept     int
	}{
		{"a 410 deletes the subscription and says the Reader is gone", []int{410}, "gone", true, 0},
		{"a 404 deletes the subscription too", []int{404}, "gone", true, 0},
		{"one browser gone and one that took it: delivered, the gone one deleted", []int{410, 201}, "", false, 1},
		{"every browser gone: gone", []int{404, 410}, "gone", true, 0},
		{"a 500 is retried and deletes nothing", []int{500}, "answered 500", false, 1},
		{"a 429 is retried and deletes nothing", []int{429}, "answered 429", false, 1},
		{"one gone and one failing: retried, the gone one deleted", []int{410, 503}, "answered 503", false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, p, _ := setup(t, "ada")
			svc := newPushService(t)
			for i, status := range tc.statuses {
				path := "/push/" + string(rune('a'+i))
				svc.status[path] = status
				save(t, st, newBrowser(t).subscription("ada", svc.endpoint(path)))
			}
			err := p.Send(context.Background(), announcement("ada"))["ada"]
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want delivered", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			case errors.Is(err, announce.ErrGone) != tc.gone:
				t.Fatalf("err = %v; gone = %v, want %v", err, errors.Is(err, announce.ErrGone), tc.gone)
			}
			if err != nil && strings.Contains(err.Error(), "/push/") {
				t.Errorf("the error names the endpoint: %v", err)
			}
			left, _ := st.PushSubscriptions(context.Background(), "ada")
			if len(left) != tc.kept {
				t.Fatalf("%d subscriptions left, want %d", len(left), tc.kept)
			}
		})
	}
}

func TestPushRefusesAPrivateEndpointOutsideTests(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	storetest.Insert(t, pool, storetest.Reader{ID: "ada", Name: "ada"})
	st := store.New(pool)
	priv, pub, _ := webpush.GenerateVAPIDKeys()
	p, err := announce.NewPush(announce.PushOptions{Store: st, Keys: announce.VAPIDKeys{Public: pub, Private: word.Secret(priv)}})
	if err != nil {
		t.Fatal(err)
	}
	var hit atomic.Bool
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hit.Store(true); w.WriteHeader(201) }))
	defer tls.Close()
	save(t, st, newBrowser(t).subscription("ada", tls.URL+"/push/x"))
	err = p.Send(context.Background(), announcement("ada"))["ada"]
	if err == nil || !strings.Contains(err.Error(), "non-public") || hit.Load() {
		t.Fatalf("a push to a loopback endpoint: err %v, reached %v", err, hit.Load())
	}
	if left, _ := st.PushSubscriptions(context.Background(), "ada"); len(left) != 1 {
		t.Fatal("a refused endpoint is a failure, not a gone subscription")
	}
}

func TestPushToAReaderWithNoBrowserIsGone(t *testing.T) {
	t.Parallel()
	_, p, _ := setup(t, "ada")
	if err := p.Send(context.Background(), announcement("ada"))["ada"]; !errors.Is(err, announce.ErrGone) {
		t.Fatalf("err = %v, want ErrGone", err)
	}
}

func elliptic256() elliptic.Curve { return elliptic.P256() }

func TestAPushTheServiceNeverAnsweredIsUnansweredNotRetried(t *testing.T) {
	t.Parallel()
	st, _, keys := setup(t, "ada")
	release := make(chan struct{})
	var posts atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		posts.Add(1)
		<-release
	}))
	t.Cleanup(svc.Close)
	t.Cleanup(func() { close(release) })
	save(t, st, newBrowser(t).subscription("ada", svc.URL+"/push/ada-1"))
	p, err := announce.NewPush(announce.PushOptions{Store: st, Keys: keys, Subject: "https://manga.example",
		Timeout: 300 * time.Millisecond, Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Send(context.Background(), announcement("ada"))["ada"]
	if !errors.Is(err, announce.ErrUnanswered) || errors.Is(err, announce.ErrGone) || strings.Contains(err.Error(), "/push/") {
		t.Fatalf("err = %v; want unanswered (it may have been shown), naming no endpoint", err)
	}
	if posts.Load() != 1 {
		t.Fatalf("%d pushes reached the service, want 1", posts.Load())
	}
}
