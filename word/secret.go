package word

import (
	"fmt"
	"io"
	"log/slog"
)

// Secret holds a value that must never be logged, printed or rendered: every
// secret setting of the server (DISCORD_WEBHOOK_URL, the database address,
// DISCORD_CLIENT_SECRET, SESSION_KEY, TOKEN_KEY, METRICS_TOKEN). Every formatting path
// prints a fixed placeholder; Reveal is the one way out.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string               { return redacted }
func (Secret) GoString() string             { return redacted }
func (Secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// Reveal returns the secret's value for the one constructor that needs it.
func (s Secret) Reveal() string { return string(s) }

// Set reports whether the secret has a value.
func (s Secret) Set() bool { return s != "" }
