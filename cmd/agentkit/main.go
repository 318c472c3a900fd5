// Command agentkit runs coding-agent jobs unattended and reaches their owner by email.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
