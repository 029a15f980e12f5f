"""The team's PostgreSQL store as docs/ci.md sets it up: an empty database the nightly
writes (its first night creates the tables and chooses the baseline), and a role that only
reads, through which a pull request finds the nightly's runs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from git_project import HARMLESS, as_scheduled_job, branch_with, git, github_env, make_project

from evals.cli import main
from evals.store import open_store
from evals.store.integrity import check_store

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def reader(postgres_url: str) -> Iterator[tuple[str, str]]:
    """A login role that may use the database but not write it (docs/ci.md's
    `evals_reader`): its name and the URL it connects with."""
    role = f"reader_{uuid.uuid4().hex[:10]}"
    database = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT CONNECT ON DATABASE {database} TO {role}")
        admin.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
    server = postgres_url.partition("@")[2]
    yield role, f"postgresql://{role}@{server}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"DROP OWNED BY {role}")
        admin.execute(f"DROP ROLE {role}")


def test_the_first_nightly_creates_the_team_store_and_a_pull_request_reads_it(
    postgres_url: str, reader: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    make_project(repo)
    as_scheduled_job(repo, monkeypatch)
    # An empty database is a store no job has written yet, not a damaged one.
    assert check_store(postgres_url).ok

    nightly = repo / ".evals" / "nightly"
    code = main(["ci", "nightly", "evals-suite", "--store", postgres_url, "--out", str(nightly)])

    summary = (nightly / "summary.md").read_text(encoding="utf-8")
    assert code == 0, summary
    assert "is the baseline from now on" in summary
    store = open_store(postgres_url)
    try:
        [baseline] = store.baselines("evals-suite")
    finally:
        store.close()

    role, reader_url = reader
    # The tables the nightly created, readable by the reader (docs/ci.md's grants).
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    branch_with(repo, "harmless", {"evals-suite/agent.py": HARMLESS})
    git(repo, "checkout", "-q", "harmless")
    for name, value in github_env(
        "pull_request", "refs/pull/3/merge", GITHUB_BASE_REF="main", GITHUB_HEAD_REF="harmless"
    ).items():
        monkeypatch.setenv(name, value)
    out = repo / ".evals" / "ci"

    code = main(["ci", "pr", "evals-suite", "--store", reader_url, "--out", str(out), "--quiet"])

    comment = (out / "comment.md").read_text(encoding="utf-8")
    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    assert outcome["verdict"] != "error", comment
    # Main's agent is the nightly's: its runs, read through the reader, are main's side.
    assert f"baseline: the stored runs of nightly `{baseline.id}`" in comment, comment
    assert code in (0, 1)
