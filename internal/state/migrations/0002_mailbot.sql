-- The mailbot: delivery state of owed mail, the log of inbound verdicts (the
-- phone log), what was processed, and where each mailbox was left.
-- Times in these columns are fixed-width UTC (2006-01-02T15:04:05.000000000Z)
-- so that text comparison orders them.

-- Delivery of owed mail. message_id is chosen before the first attempt and
-- kept, so a resend threads and shows once; msg_date is the Date it carries.
ALTER TABLE outbox ADD COLUMN message_id TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN msg_date TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN next_attempt_at TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN sent_at TEXT NOT NULL DEFAULT '';
CREATE INDEX outbox_message_id ON outbox (message_id);
-- The answer cap counts capped kinds sent in the last hour.
CREATE INDEX outbox_sent ON outbox (kind, sent_at) WHERE sent_at <> '';

-- One row per inbound message read: its verdict and what was done (the phone log).
CREATE TABLE inbound (
    id            INTEGER PRIMARY KEY,
    account       TEXT NOT NULL,
    mailbox       TEXT NOT NULL,
    uid_validity  INTEGER NOT NULL,
    uid           INTEGER NOT NULL,
    message_id    TEXT NOT NULL DEFAULT '',
    sha256        TEXT NOT NULL DEFAULT '',
    sender        TEXT NOT NULL DEFAULT '',
    subject       TEXT NOT NULL DEFAULT '',
    size          INTEGER NOT NULL DEFAULT 0,
    internal_date TEXT NOT NULL DEFAULT '',
    outcome       TEXT NOT NULL CHECK (outcome IN ('obeyed', 'answered', 'refused', 'ignored')),
    reason        TEXT NOT NULL DEFAULT '',
    code          TEXT NOT NULL DEFAULT '',
    decision_id   INTEGER REFERENCES decisions (id),
    verdict       TEXT NOT NULL DEFAULT '',
    at            TEXT NOT NULL
);
CREATE UNIQUE INDEX inbound_uid ON inbound (account, mailbox, uid_validity, uid);
CREATE INDEX inbound_message_id ON inbound (message_id);

-- Message-IDs and aligned DKIM b= values of authenticated messages already
-- processed: a replay of either does nothing.
CREATE TABLE processed (
    kind       TEXT NOT NULL CHECK (kind IN ('message-id', 'signature')),
    value      TEXT NOT NULL,
    inbound_id INTEGER NOT NULL REFERENCES inbound (id),
    at         TEXT NOT NULL,
    PRIMARY KEY (kind, value)
) WITHOUT ROWID;

-- Where each watched mailbox was left: every message up to last_uid (under
-- uid_validity) is processed and marked on the server.
CREATE TABLE mailboxes (
    account         TEXT NOT NULL,
    mailbox         TEXT NOT NULL,
    uid_validity    INTEGER NOT NULL DEFAULT 0,
    last_uid        INTEGER NOT NULL DEFAULT 0,
    last_reached_at TEXT NOT NULL DEFAULT '',
    idle            INTEGER NOT NULL DEFAULT 0,
    down_since      TEXT NOT NULL DEFAULT '',
    last_error      TEXT NOT NULL DEFAULT '',
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (account, mailbox)
);
