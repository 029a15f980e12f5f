-- The results store's tables on SQLite, as evals.store.schema declares them.
-- evals.store.sqlite_direct creates a new store from this file; a test checks
-- it against the DDL SQLAlchemy compiles from evals.store.schema.

CREATE TABLE evaluations (
	id VARCHAR(64) NOT NULL,
	suite_id TEXT NOT NULL,
	suite_version TEXT,
	fingerprint TEXT NOT NULL,
	description TEXT NOT NULL,
	git_commit TEXT,
	git_branch TEXT,
	environment TEXT,
	shard TEXT,
	started_at DOUBLE NOT NULL,
	ended_at DOUBLE,
	status VARCHAR(16) NOT NULL,
	config TEXT,
	agents TEXT,
	summary TEXT,
	gates TEXT,
	verdict VARCHAR(16),
	outline TEXT,
	agent_fingerprints TEXT,
	planned_runs INTEGER,
	stored_runs INTEGER,
	ci_event TEXT,
	PRIMARY KEY (id)
);
CREATE INDEX ix_evaluations_env_branch ON evaluations (environment, git_branch, started_at);
CREATE INDEX ix_evaluations_resume ON evaluations (suite_id, fingerprint, status, started_at);
CREATE INDEX ix_evaluations_suite_started ON evaluations (suite_id, started_at);
CREATE TABLE schema_version (
	version INTEGER NOT NULL,
	description TEXT NOT NULL,
	applied_at DOUBLE NOT NULL,
	PRIMARY KEY (version)
);
CREATE TABLE triage_actions (
	id INTEGER NOT NULL,
	kind VARCHAR(24) NOT NULL,
	suite_id TEXT NOT NULL,
	case_id TEXT,
	environment TEXT,
	evaluation_id VARCHAR(64),
	gate TEXT,
	until DOUBLE,
	reason TEXT NOT NULL,
	link TEXT,
	actor TEXT NOT NULL,
	created_at DOUBLE NOT NULL,
	target_id INTEGER,
	agent TEXT,
	prompt_id TEXT,
	repeat INTEGER,
	label VARCHAR(16),
	PRIMARY KEY (id),
	CONSTRAINT ck_triage_kind CHECK (kind IN ('acknowledge', 'quarantine', 'accept_disagreement', 'remove', 'override', 'rate', 'comment')),
	CONSTRAINT ck_triage_quarantine CHECK (kind <> 'quarantine' OR (until IS NOT NULL AND case_id IS NOT NULL)),
	CONSTRAINT ck_triage_remove CHECK (kind <> 'remove' OR target_id IS NOT NULL),
	FOREIGN KEY(target_id) REFERENCES triage_actions (id)
);
CREATE INDEX ix_triage_created ON triage_actions (created_at);
CREATE INDEX ix_triage_suite_kind ON triage_actions (suite_id, kind, until);
CREATE TABLE gate_results (
	evaluation_id VARCHAR(64) NOT NULL,
	position INTEGER NOT NULL,
	name TEXT NOT NULL,
	status VARCHAR(16) NOT NULL,
	threshold DOUBLE,
	measured DOUBLE,
	interval_lo DOUBLE,
	interval_hi DOUBLE,
	reason TEXT NOT NULL,
	blocking BOOLEAN NOT NULL,
	PRIMARY KEY (evaluation_id, position),
	FOREIGN KEY(evaluation_id) REFERENCES evaluations (id) ON DELETE CASCADE
);
CREATE TABLE group_rates (
	evaluation_id VARCHAR(64) NOT NULL,
	kind VARCHAR(8) NOT NULL,
	name TEXT NOT NULL,
	agent TEXT NOT NULL,
	runs INTEGER NOT NULL,
	errors INTEGER NOT NULL,
	pass_rate DOUBLE,
	interval_lo DOUBLE,
	interval_hi DOUBLE,
	PRIMARY KEY (evaluation_id, kind, name, agent),
	CONSTRAINT ck_group_rates_kind CHECK (kind IN ('suite', 'tag', 'case')),
	FOREIGN KEY(evaluation_id) REFERENCES evaluations (id) ON DELETE CASCADE
);
CREATE INDEX ix_group_rates_name ON group_rates (kind, name);
CREATE TABLE group_verdicts (
	evaluation_id VARCHAR(64) NOT NULL,
	kind VARCHAR(8) NOT NULL,
	name TEXT NOT NULL,
	priority TEXT,
	verdict VARCHAR(24) NOT NULL,
	difference DOUBLE,
	interval_lo DOUBLE,
	interval_hi DOUBLE,
	level DOUBLE,
	p_value DOUBLE,
	q_value DOUBLE,
	baseline_rate DOUBLE,
	candidate_rate DOUBLE,
	reason TEXT NOT NULL,
	PRIMARY KEY (evaluation_id, kind, name),
	CONSTRAINT ck_group_verdicts_kind CHECK (kind IN ('suite', 'tag', 'case')),
	FOREIGN KEY(evaluation_id) REFERENCES evaluations (id) ON DELETE CASCADE
);
CREATE INDEX ix_group_verdicts_name ON group_verdicts (kind, name, verdict);
CREATE TABLE runs (
	id INTEGER NOT NULL,
	evaluation_id VARCHAR(64) NOT NULL,
	prompt_id TEXT NOT NULL,
	case_id TEXT NOT NULL,
	case_index INTEGER NOT NULL,
	prompt_index INTEGER NOT NULL,
	agent TEXT NOT NULL,
	agent_index INTEGER NOT NULL,
	repeat INTEGER NOT NULL,
	seed BIGINT NOT NULL,
	prompt TEXT NOT NULL,
	vars TEXT,
	output TEXT,
	status VARCHAR(8) NOT NULL,
	error TEXT,
	error_kind VARCHAR(32),
	score DOUBLE,
	passed BOOLEAN,
	input_tokens BIGINT,
	output_tokens BIGINT,
	total_tokens BIGINT NOT NULL,
	cost DOUBLE,
	latency_ms DOUBLE NOT NULL,
	steps INTEGER NOT NULL,
	stop_reason TEXT,
	trajectory TEXT,
	trace TEXT,
	extra TEXT,
	started_at DOUBLE NOT NULL,
	ended_at DOUBLE NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT uq_runs_key UNIQUE (evaluation_id, case_id, agent, prompt_id, repeat),
	CONSTRAINT ck_runs_status CHECK (status IN ('pass', 'fail', 'error')),
	FOREIGN KEY(evaluation_id) REFERENCES evaluations (id) ON DELETE CASCADE
);
CREATE INDEX ix_runs_agent_status ON runs (evaluation_id, agent, status, cost, latency_ms, total_tokens);
CREATE TABLE grades (
	run_id INTEGER NOT NULL,
	idx INTEGER NOT NULL,
	parent_idx INTEGER,
	type TEXT,
	passed BOOLEAN NOT NULL,
	score DOUBLE NOT NULL,
	reason TEXT NOT NULL,
	metric TEXT,
	weight DOUBLE,
	policy_violation BOOLEAN NOT NULL,
	errored BOOLEAN NOT NULL,
	PRIMARY KEY (run_id, idx),
	FOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE
);
