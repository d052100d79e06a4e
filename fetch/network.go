package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"
)

// networkFault names where a plain-route request stopped when it never got
// as far as a Site's answer: the name did not resolve, the connection was
// refused or could not be made, or TLS failed. "" for any other error (a
// connection the Site accepted and then dropped, a header or body timeout):
// those stay errors. Such a fault is the outcome unreachable on the plain
// route: nothing was read, it would be the same for every Series of the
// Site, and it is most often our own network (docs/adr/0022).
func networkFault(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case err == nil, errors.Is(err, ErrGate):
		return ""
	case errors.As(err, &dns):
		return "the name did not resolve"
	case tlsFault(err):
		return "TLS failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.As(err, &op) && op.Op == "dial":
		return "the connection could not be made"
	}
	return ""
}

// tlsFault reports a failed TLS handshake: a certificate this machine does
// not trust (or that names another host, or has expired), an answer that is
// not TLS at all, an alert from the other end, or the handshake timing out.
func tlsFault(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		header   tls.RecordHeaderError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	// net/http's handshake timeout is an unexported type; its text is the
	// one stable thing about it.
	return errors.As(err, &verify) || errors.As(err, &header) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		strings.Contains(err.Error(), "TLS handshake timeout")
}
