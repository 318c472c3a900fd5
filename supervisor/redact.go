package supervisor

import "github.com/agentkit/agentkit/internal/redact"

// newRedactor returns what cleans problem details and log tails of secrets:
// the values of secret-looking environment variables, extra values, and
// token shapes.
func newRedactor(env, extra []string) func(string) string {
	return redact.FromEnv(env, extra...).String
}
