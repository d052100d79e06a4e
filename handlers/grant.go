package handlers

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// grantKey derives the key that seals a Discord Reader's OAuth refresh
// token at rest from TOKEN_KEY, under its own label, as the cookie keys
// are derived from SESSION_KEY: a copy of the database alone does not hold
// a grant that could ask Discord about the Reader (docs/adr/0020).
func grantKey(tokenKey []byte) []byte {
	m := hmac.New(sha256.New, tokenKey)
	m.Write([]byte("mangabookmark discord refresh token"))
	return m.Sum(nil)
}

func grantAEAD(tokenKey []byte) cipher.AEAD {
	block, err := aes.NewCipher(grantKey(tokenKey)) // 32 bytes: AES-256 cannot refuse it
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// sealGrant encrypts a refresh token: a random nonce, then the ciphertext.
// The Reader's id is the additional data, so a sealed grant moved onto
// another Reader's row does not open.
func sealGrant(tokenKey []byte, readerID, refresh string) []byte {
	aead := grantAEAD(tokenKey)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return aead.Seal(nonce, nonce, []byte(refresh), []byte(readerID))
}

var errGrantUnreadable = errors.New("sealed grant does not open under this TOKEN_KEY")

// openGrant reverses sealGrant.
func openGrant(tokenKey []byte, readerID string, sealed []byte) (string, error) {
	aead := grantAEAD(tokenKey)
	if len(sealed) < aead.NonceSize() {
		return "", errGrantUnreadable
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(readerID))
	if err != nil {
		return "", errGrantUnreadable
	}
	return string(plain), nil
}
