package runtimes

// commandDialect runs any executable (project.yaml runtimes.command.argv)
// with the prompt on stdin and AGENTKIT_SESSION naming its session.
type commandDialect struct{ argv []string }

func (d commandDialect) binary() string        { return d.argv[0] }
func (commandDialect) pin() string             { return "" }
func (d commandDialect) args(Request) []string { return append([]string(nil), d.argv[1:]...) }
func (commandDialect) newStream() stream       { return plainStream{} }

// plainStream treats every line as plain text: the command runtime's final
// text is stdout's last lines.
type plainStream struct{}

func (plainStream) line(string) bool     { return false }
func (plainStream) result() streamResult { return streamResult{} }
