-- Registered repositories: each has a short unique name.
CREATE TABLE repos (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    path       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

-- Problems are never deleted, so the unique index covers every code ever issued.
CREATE TABLE problems (
    id         INTEGER PRIMARY KEY,
    code       TEXT NOT NULL,
    repo       TEXT NOT NULL,
    job        TEXT NOT NULL DEFAULT '',
    task       TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,
    summary    TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT '',
    log_tail   TEXT NOT NULL DEFAULT '',
    replies    TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'answered', 'closed')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX problems_code ON problems (code);
CREATE INDEX problems_state ON problems (state, id);
CREATE INDEX problems_repo ON problems (repo, id);

-- One decision per problem; one per source message.
CREATE TABLE decisions (
    id         INTEGER PRIMARY KEY,
    problem_id INTEGER NOT NULL UNIQUE REFERENCES problems (id),
    reply      TEXT NOT NULL,
    words      TEXT NOT NULL DEFAULT '',
    channel    TEXT NOT NULL,
    who        TEXT NOT NULL,
    source_id  TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT '',
    outcome    TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX decisions_source ON decisions (channel, source_id) WHERE source_id <> '';

-- Pause state: scope '' is every repository, otherwise a repository's name.
CREATE TABLE pauses (
    scope   TEXT PRIMARY KEY,
    paused  INTEGER NOT NULL,
    who     TEXT NOT NULL,
    channel TEXT NOT NULL,
    at      TEXT NOT NULL
);

-- Mail owed to the owner; the mailbot renders each row when it sends it.
CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    problem_id  INTEGER REFERENCES problems (id),
    decision_id INTEGER REFERENCES decisions (id),
    payload     TEXT NOT NULL DEFAULT '',
    state       TEXT NOT NULL CHECK (state IN ('held', 'pending', 'sent', 'failed')),
    created_at  TEXT NOT NULL
);
CREATE INDEX outbox_state ON outbox (state, id);

-- Small machine-wide settings, such as whether the phone channel is on.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
