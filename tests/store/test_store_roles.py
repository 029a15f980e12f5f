"""The PostgreSQL roles docs/team.md sets up, on a real server: the viewer reads and
cannot write, the triage role appends triage actions and nothing else."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from records import make_meta
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from evals.model.triage import TriageAction
from evals.store import open_store, open_viewer_store
from evals.team import triage

pytestmark = pytest.mark.postgres
TEAM_DOC = Path(__file__).resolve().parents[2] / "docs" / "team.md"


def _documented_grants() -> str:
    """The SQL block of docs/team.md, so the test checks what the documentation says."""
    (block,) = re.findall(r"```sql\n(.*?)```", TEAM_DOC.read_text(encoding="utf-8"), re.S)
    return block


@pytest.fixture
def roles(postgres_url: str) -> Iterator[dict[str, str]]:
    """URLs of the database as the CI, viewer and triage roles of docs/team.md."""
    import psycopg

    suffix = uuid.uuid4().hex[:8]
    names = {role: f"evals_{role}_{suffix}" for role in ("ci", "viewer", "triage")}
    sql = _documented_grants()
    for role, name in names.items():
        sql = sql.replace(f"evals_{role} ", f"{name} ").replace(f"evals_{role};", f"{name};")
    sql = sql.replace("PASSWORD '...'", "PASSWORD 'pw'")
    ci_url = postgres_url.replace("://evals@", f"://{names['ci']}:pw@")
    code = "\n".join(line for line in sql.splitlines() if not line.startswith("--"))
    statements = [s.strip() for s in code.split(";") if s.strip()]
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        create = [s for s in statements if s.startswith("CREATE ROLE")]
        for statement in create:
            admin.execute(statement)
        admin.execute(f"GRANT CREATE, USAGE ON SCHEMA public TO {names['ci']}")
        writer = open_store(ci_url)  # the CI job creates the tables
        writer.create_evaluation(make_meta("ev-1", status="complete"))
        writer.close()
        for statement in statements:
            if not statement.startswith("CREATE ROLE"):
                admin.execute(statement)
    urls = {
        role: postgres_url.replace("://evals@", f"://{name}:pw@") for role, name in names.items()
    }
    yield urls
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        for name in names.values():
            admin.execute(f"DROP OWNED BY {name} CASCADE")
            admin.execute(f"DROP ROLE {name}")


def test_the_documented_roles_can_do_what_they_should_and_nothing_more(
    roles: dict[str, str],
) -> None:
    triage_store = open_store(roles["triage"])
    now = time.time()
    action = triage.new_action(
        "acknowledge", "trading", "alice", "known", now=now, evaluation_id="ev-1"
    )
    stored = triage.record(triage_store, action)
    assert stored.id is not None
    with pytest.raises(DBAPIError, match="permission denied"), triage_store.engine.begin() as c:
        c.execute(text("DELETE FROM triage_actions"))
    with pytest.raises(DBAPIError, match="permission denied"), triage_store.engine.begin() as c:
        c.execute(text("UPDATE evaluations SET status = 'running'"))
    triage_store.close()

    viewer = open_viewer_store(roles["viewer"])
    assert [a.id for a in viewer.triage.history()] == [stored.id]
    assert viewer.get_evaluation("ev-1") is not None
    removal = TriageAction("remove", "trading", "mallory", "x", now, target_id=stored.id)
    with pytest.raises(DBAPIError, match="read-only transaction"):
        viewer.triage.record(removal)
    viewer.close()

    # the viewer role is read-only even on a connection that does not ask for it
    plain = open_store(roles["viewer"], read_only=True)
    with pytest.raises(DBAPIError), plain.engine.begin() as c:
        c.execute(text("SET TRANSACTION READ WRITE"))
        c.execute(text("DELETE FROM triage_actions"))
    plain.close()
