package phonesetup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-smtp"

	"github.com/agentkit/agentkit/mailbot"
)

// Each explain function turns an error into one line: what is wrong and
// what to do. They never see the password.

func explainDNS(err error, host, flag string) string {
	var de *net.DNSError
	switch {
	case err == nil:
		return fmt.Sprintf("%s has no address in DNS; check the host name given with --%s", host, flag)
	case errors.As(err, &de) && de.IsNotFound:
		return fmt.Sprintf("%s does not exist in DNS; check the spelling of the host given with --%s", host, flag)
	case errors.As(err, &de) && de.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("looking up %s timed out; check this computer's network connection and DNS", host)
	}
	return fmt.Sprintf("looking up %s failed (%v); check this computer's network connection and DNS", host, err)
}

// defaultPorts names the usual ports for advice.
func defaultPorts(server string) string {
	if server == "IMAP" {
		return "IMAP uses 993 with implicit TLS and 143 with STARTTLS"
	}
	return "SMTP submission uses 465 with implicit TLS and 587 with STARTTLS"
}

func explainDial(err error, host string, port int, timeout time.Duration, server, flag string) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("%s refuses connections on port %d; check the port given with --%s (%s)", host, port, flag, defaultPorts(server))
	case isTimeout(err):
		return fmt.Sprintf("no answer from %s port %d within %s; a firewall may block outgoing port %d, or the host or port given with --%s is wrong", host, port, timeout, port, flag)
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return fmt.Sprintf("%s cannot be reached (%v); check this computer's network connection", host, rootCause(err))
	}
	return fmt.Sprintf("cannot connect to %s port %d (%v); check the network and --%s", host, port, rootCause(err), flag)
}

// explainTLS spells the certificate problem out.
func explainTLS(err error, s mailbot.Server, server, flag string, timeout time.Duration, now time.Time) string {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	caAdvice := fmt.Sprintf("if it is your own server, give its CA certificate with --%s-ca FILE (ca_file in phone.yaml); otherwise something on the network may be intercepting the connection", flag)
	switch {
	case errors.As(err, &unknown):
		// The leaf, when the handshake kept it, says who signed it; the
		// error's own certificate is the top of the chain that was offered.
		c := unknown.Cert
		var ve *tls.CertificateVerificationError
		if errors.As(err, &ve) && len(ve.UnverifiedCertificates) > 0 {
			c = ve.UnverifiedCertificates[0]
		}
		if c != nil && c.Issuer.String() == c.Subject.String() {
			return fmt.Sprintf("the certificate of %s is self-signed (%s), which this computer does not trust; %s", s.Host, issuerName(c), caAdvice)
		}
		by := "an authority"
		if c != nil {
			by = issuerName(c)
		}
		extra := ""
		if s.CAFile != "" {
			extra = fmt.Sprintf(" (nor does the CA file %s)", s.CAFile)
		}
		return fmt.Sprintf("the certificate of %s is signed by %s, which this computer does not trust%s; %s", s.Host, by, extra, caAdvice)
	case errors.As(err, &hostname):
		names := certNames(hostname.Certificate)
		return fmt.Sprintf("the certificate of %s is for %s, not %s; give a host name the certificate names with --%s (or the provider's documented server name)", s.Host, names, s.Host, flag)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		c := invalid.Cert
		if c != nil && now.Before(c.NotBefore) {
			return fmt.Sprintf("the certificate of %s is valid only from %s, but this computer's clock says %s; check the clock", s.Host, c.NotBefore.UTC().Format(time.DateOnly), now.UTC().Format(time.DateOnly))
		}
		if c != nil {
			return fmt.Sprintf("the certificate of %s expired on %s (this computer's clock says %s); the server's operator must renew it, or the clock is wrong", s.Host, c.NotAfter.UTC().Format(time.DateOnly), now.UTC().Format(time.DateOnly))
		}
		return fmt.Sprintf("the certificate of %s has expired or is not valid yet; check this computer's clock", s.Host)
	case errors.As(err, &invalid):
		return fmt.Sprintf("the certificate of %s is not acceptable (%v); %s", s.Host, invalid.Error(), caAdvice)
	case errors.As(err, &record):
		return fmt.Sprintf("%s port %d did not answer in TLS; it may expect STARTTLS (--%s-tls starttls) or another port (%s)", s.Host, s.Port, flag, defaultPorts(server))
	case isTimeout(err):
		return fmt.Sprintf("%s port %d accepted the connection but did not finish TLS within %s; check --%s-tls and the port (%s)", s.Host, s.Port, timeout, flag, defaultPorts(server))
	case errors.As(err, &alert):
		return fmt.Sprintf("%s ended the TLS handshake (%v); it may need a newer TLS version or another port (%s)", s.Host, err, defaultPorts(server))
	}
	return fmt.Sprintf("TLS with %s port %d failed (%v); check --%s-tls and the port (%s)", s.Host, s.Port, rootCause(err), flag, defaultPorts(server))
}

func certNames(c *x509.Certificate) string {
	if c == nil {
		return "other names"
	}
	var n []string
	n = append(n, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		n = append(n, ip.String())
	}
	if len(n) == 0 && c.Subject.CommonName != "" {
		n = append(n, c.Subject.CommonName)
	}
	if len(n) > 4 {
		n = append(n[:4], "…")
	}
	return strings.Join(n, ", ")
}

// isTLSError reports whether err comes from the TLS handshake or the
// certificate check (so it belongs to the TLS step).
func isTLSError(err error) bool {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		strings.Contains(err.Error(), "tls: ")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// rootCause drops the "dial tcp 1.2.3.4:993:" prefixes a person does not need.
func rootCause(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}

// serverWords is what a server said when it refused, without library
// prefixes.
func serverWords(err error) string {
	var ie *imap.Error
	if errors.As(err, &ie) {
		w := ie.Text
		if ie.Code != "" {
			w = "[" + string(ie.Code) + "] " + w
		}
		return strings.TrimSpace(string(ie.Type) + " " + w)
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		code := fmt.Sprint(se.Code)
		if se.EnhancedCode != (smtp.EnhancedCode{}) && se.EnhancedCode != smtp.NoEnhancedCode {
			code += fmt.Sprintf(" %d.%d.%d", se.EnhancedCode[0], se.EnhancedCode[1], se.EnhancedCode[2])
		}
		return code + " " + oneLine(se.Message)
	}
	return oneLine(rootCause(err).Error())
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
