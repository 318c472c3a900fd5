package mailbot

import (
	"context"
	"errors"
	"time"
)

// newVerdictDecider wires the decision pipeline (verification, trimming, the
// command grammar) to the transport.
func newVerdictDecider(o Options, p *processor) inboundDecider {
	return inboundDeciderFunc(func(ctx context.Context, raw []byte, internalDate time.Time) (judgement, error) {
		return judgement{}, errors.New("mailbot: reply verification is not wired in yet")
	})
}
