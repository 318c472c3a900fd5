//go:build !windows

package secrets

// systemKeeper is nil outside Windows: the password comes from
// AGENTKIT_PHONE_PASSWORD or phone.env, which setup writes only when asked.
func systemKeeper() Writer { return nil }
