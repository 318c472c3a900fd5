-- Jobs: one row per .ai/jobs/<name>.json of a registered repository.
CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY,
    repo             TEXT NOT NULL,
    name             TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('created', 'started', 'done', 'cancelled')),
    -- revision is the job file's newest revision; planned_revision the one
    -- the current plan covers. While they differ, nothing new launches or merges.
    revision         INTEGER NOT NULL DEFAULT 1,
    planned_revision INTEGER NOT NULL DEFAULT 0,
    -- replan asks the coordinator to plan again, with plan_words.
    replan           INTEGER NOT NULL DEFAULT 0,
    plan_words       TEXT NOT NULL DEFAULT '',
    plan_session     TEXT NOT NULL DEFAULT '',
    max_workers      INTEGER NOT NULL DEFAULT 0,
    tokens           INTEGER NOT NULL DEFAULT 0,
    -- hold is the signature (kind and first line) of the setup problem that
    -- two tasks share; '' when the job is not held.
    hold             TEXT NOT NULL DEFAULT '',
    base             TEXT NOT NULL DEFAULT '',
    final_review     TEXT NOT NULL DEFAULT '' CHECK (final_review IN ('', 'stopped', 'passed')),
    review_rounds    INTEGER NOT NULL DEFAULT 0,
    problem_id       INTEGER REFERENCES problems (id),
    head             TEXT NOT NULL DEFAULT '',
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    started_at       TEXT NOT NULL DEFAULT '',
    finished_at      TEXT NOT NULL DEFAULT '',
    UNIQUE (repo, name)
);
CREATE INDEX jobs_state ON jobs (repo, state);

-- Tasks: the job's plan, with where each task is. spec is the task's
-- tasks.yaml entry as JSON.
CREATE TABLE tasks (
    id            INTEGER PRIMARY KEY,
    job_id        INTEGER NOT NULL REFERENCES jobs (id),
    name          TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    spec          TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'ready', 'building', 'checking', 'reviewing',
                      'merging', 'merged', 'waiting', 'stopped', 'skipped', 'cancelled')),
    -- step is what runs when the task is launched next: build, check, review, merge.
    step          TEXT NOT NULL DEFAULT 'build',
    -- reason is what a resumed builder session is told (gate output, findings, a hint).
    reason        TEXT NOT NULL DEFAULT '',
    session       TEXT NOT NULL DEFAULT '',
    runtime       TEXT NOT NULL DEFAULT '',
    -- retried lists the failure kinds whose one automatic retry is used.
    retried       TEXT NOT NULL DEFAULT '',
    review_rounds INTEGER NOT NULL DEFAULT 0,
    waits         INTEGER NOT NULL DEFAULT 0,
    wait_until    TEXT NOT NULL DEFAULT '',
    base          TEXT NOT NULL DEFAULT '',
    head          TEXT NOT NULL DEFAULT '',
    merge_from    TEXT NOT NULL DEFAULT '',
    merged        TEXT NOT NULL DEFAULT '',
    problem_id    INTEGER REFERENCES problems (id),
    setup_sig     TEXT NOT NULL DEFAULT '',
    result        TEXT NOT NULL DEFAULT '',
    tokens        INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (job_id, name)
);
CREATE INDEX tasks_state ON tasks (job_id, state);

-- Attempts: one row per agent session, with how it ended. A row without
-- ended_at belongs to a running session, or to one a dead supervisor left.
CREATE TABLE attempts (
    id          INTEGER PRIMARY KEY,
    job_id      INTEGER NOT NULL REFERENCES jobs (id),
    task_id     INTEGER REFERENCES tasks (id),
    step        TEXT NOT NULL,
    runtime     TEXT NOT NULL,
    session     TEXT NOT NULL DEFAULT '',
    token       TEXT NOT NULL,
    owner       INTEGER NOT NULL,
    counted     INTEGER NOT NULL DEFAULT 1,
    started_at  TEXT NOT NULL,
    ended_at    TEXT NOT NULL DEFAULT '',
    exit_code   INTEGER NOT NULL DEFAULT 0,
    class       TEXT NOT NULL DEFAULT '',
    message     TEXT NOT NULL DEFAULT '',
    outcome     TEXT NOT NULL DEFAULT '',
    tokens      INTEGER NOT NULL DEFAULT 0,
    events_path TEXT NOT NULL DEFAULT ''
);
CREATE INDEX attempts_task ON attempts (task_id, id);
CREATE INDEX attempts_open ON attempts (ended_at) WHERE ended_at = '';

-- Events: every state change and step, for agentkit events and job status.
CREATE TABLE events (
    id      INTEGER PRIMARY KEY,
    repo    TEXT NOT NULL,
    job     TEXT NOT NULL DEFAULT '',
    task    TEXT NOT NULL DEFAULT '',
    at      TEXT NOT NULL,
    kind    TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX events_job ON events (repo, job, task, id);

-- Gate results by task, level and the commit they ran on.
CREATE TABLE gate_results (
    repo      TEXT NOT NULL,
    job       TEXT NOT NULL,
    task      TEXT NOT NULL,
    level     TEXT NOT NULL,
    head      TEXT NOT NULL,
    exit_code INTEGER NOT NULL,
    output    TEXT NOT NULL,
    at        TEXT NOT NULL,
    PRIMARY KEY (repo, job, task, level, head)
);
