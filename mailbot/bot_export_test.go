package mailbot

import "context"

// SetAfterStore makes the bot call f after each message's verdict is
// committed and before the message is marked on the server, so a test can
// stop the process exactly there.
func SetAfterStore(b *Bot, f func(uid uint32)) { b.proc.afterStore = f }

// DeliverDue runs the delivery pass the running bot runs on its own: only
// rows whose backoff has ended.
func DeliverDue(ctx context.Context, b *Bot) (Delivery, error) { return b.send.pass(ctx, false) }
