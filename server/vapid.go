package server

import (
	"bytes"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// vapidFile holds the server's Web Push keys under DATA_DIR, beside
// session.key and token.key and with their permissions (0600). A browser
// subscribed under one public key receives pushes signed only by its
// private key, so the pair is made once and kept: new keys would silently
// end every subscription.
const vapidFile = "vapid.json"

type vapidJSON struct {
	Public  string `json:"public"`
	Private string `json:"private"`
}

// VAPIDKeysFor returns the Web Push keys kept in dataDir, generating them
// the first time. A file that holds a broken pair is an error that names
// the file, not a new pair.
func VAPIDKeysFor(dataDir string) (announce.VAPIDKeys, error) {
	p := filepath.Join(dataDir, vapidFile)
	b, err := os.ReadFile(p)
	switch {
	case err == nil:
		var v vapidJSON
		if err := json.Unmarshal(b, &v); err != nil {
			return announce.VAPIDKeys{}, fmt.Errorf("%s is not the Web Push key file; delete it to generate new keys (every browser then subscribes again)", p)
		}
		if err := checkVAPID(v); err != nil {
			return announce.VAPIDKeys{}, fmt.Errorf("%s: %w; delete it to generate new keys (every browser then subscribes again)", p, err)
		}
		return announce.VAPIDKeys{Public: v.Public, Private: word.Secret(v.Private)}, nil
	case !errors.Is(err, os.ErrNotExist):
		return announce.VAPIDKeys{}, fmt.Errorf("read %s: %w", p, err)
	}
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		return announce.VAPIDKeys{}, fmt.Errorf("generate Web Push keys: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return announce.VAPIDKeys{}, fmt.Errorf("create %s: %w", dataDir, err)
	}
	out, _ := json.Marshal(vapidJSON{Public: pub, Private: priv})
	// O_EXCL: two servers starting on one DATA_DIR keep one pair.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return VAPIDKeysFor(dataDir)
	}
	if err != nil {
		return announce.VAPIDKeys{}, fmt.Errorf("write %s: %w", p, err)
	}
	if _, err := f.Write(append(out, '\n')); err != nil {
		f.Close()
		return announce.VAPIDKeys{}, fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return announce.VAPIDKeys{}, fmt.Errorf("write %s: %w", p, err)
	}
	return announce.VAPIDKeys{Public: pub, Private: word.Secret(priv)}, nil
}

// CheckVAPIDFile is the rule a vapid.json must pass for serve to start
// (restore checks a backup's copy with it before writing anything).
func CheckVAPIDFile(b []byte) error {
	var v vapidJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return errors.New("is not the Web Push key file")
	}
	return checkVAPID(v)
}

// checkVAPID: the private key is a P-256 scalar and the public key is its
// point, so a hand-edited or truncated file is caught at start, not at the
// first push.
func checkVAPID(v vapidJSON) error {
	priv, err1 := base64.RawURLEncoding.DecodeString(strings.TrimRight(v.Private, "="))
	pub, err2 := base64.RawURLEncoding.DecodeString(strings.TrimRight(v.Public, "="))
	if err1 != nil || err2 != nil {
		return errors.New("its keys are not base64url")
	}
	k, err := ecdh.P256().NewPrivateKey(priv)
	if err != nil {
		return errors.New("its private key is not a P-256 key")
	}
	if !bytes.Equal(k.PublicKey().Bytes(), pub) {
		return errors.New("its public key is not the private key's")
	}
	return nil
}

// PushSender is the Web Push announce.Sender for the Announcer.
func PushSender(cfg Config, st *store.Store, keys announce.VAPIDKeys, log *slog.Logger) (*announce.Push, error) {
	return announce.NewPush(pushOptions(cfg, st, keys, log))
}

// pushOptions is the push Sender's: the kept keys, PUBLIC_BASE_URL as the
// VAPID contact when it is https.
func pushOptions(cfg Config, st *store.Store, keys announce.VAPIDKeys, log *slog.Logger) announce.PushOptions {
	subject := "mangabookmark@localhost"
	if strings.HasPrefix(cfg.PublicBaseURL, "https://") {
		subject = cfg.PublicBaseURL
	}
	return announce.PushOptions{Store: st, Keys: keys, Subject: subject, Logger: log}
}
