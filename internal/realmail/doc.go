// Package realmail is test support that runs real Dovecot (IMAP, LMTP) and
// Postfix (submission) servers on loopback with throwaway configurations, so
// that mail code is tested against the servers people really use.
//
// [Start] skips the calling test, saying what to install, when the servers
// are not installed or the test does not run as root on Linux; .ci/run
// installs them so CI always runs these tests.
package realmail
