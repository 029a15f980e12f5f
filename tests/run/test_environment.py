"""A suite's world: each run's fresh copy of the seed, what the run left behind, the
response cache replaying a call's changes, and a stored conversation priming every turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.run.cache import SqliteResponseCache, cache_hits
from evals.suite import load_suite

SEED = """\
CREATE TABLE stock (item TEXT PRIMARY KEY, count INTEGER NOT NULL);
INSERT INTO stock VALUES ('apples', 3), ('pears', 5);
"""

# A shop agent of the user's: it sells one item per call, reading the run's database.
AGENT = """\
import sqlite3
from evals.kits import world_path

def call_api(prompt, options, context):
    database = world_path(context)
    with sqlite3.connect(database) as db:
        item = prompt.split()[-1]
        left = db.execute("SELECT count FROM stock WHERE item = ?", (item,)).fetchone()[0]
        db.execute("UPDATE stock SET count = ? WHERE item = ?", (left - 1, item))
    return {"output": f"sold one of {left} {item}", "cost": 0.01}
"""


def _suite(repeat: int = 1, state: str = "file://seed.sql") -> str:
    return f"""\
prompts: ["sell {{{{item}}}}"]
providers: [file://agent.py]
environment: {{state: "{state}"}}
evaluateOptions: {{repeat: {repeat}, maxConcurrency: 4}}
tests:
  - vars: {{item: apples}}
    assert:
      - type: final-state
        value: {{changes: {{stock.apples.count: 2}}, only: true}}
  - vars: {{item: pears}}
    assert:
      - {{type: final-state, value: {{changes: ["stock.pears.count"], forbid: [stock.apples]}}}}
"""


def _run(path: Path, **options):
    result = run_evaluation(
        load_suite(path), RunOptions(use_store=False, progress=False, **options)
    )
    return result.records


def test_every_run_starts_from_a_fresh_copy_of_the_seed(write_suite):
    path = write_suite(_suite(repeat=6), {"seed.sql": SEED, "agent.py": AGENT})
    records = _run(path)
    assert len(records) == 12
    # six concurrent runs each sold from the seed's stock: none saw another's sale
    assert {r.response.output for r in records} == {"sold one of 3 apples", "sold one of 5 pears"}
    assert all(r.status == "pass" for r in records), [r.grade.reason for r in records]
    outcome = records[0].response.metadata["environment"]
    assert outcome["initial_digest"] != outcome["digest"]
    digests = {r.key.case_id: r.response.metadata["environment"]["digest"] for r in records}
    assert len(set(digests.values())) == 2


def test_a_json_seed_is_a_document(write_suite):
    agent = """\
import json
from evals.kits import world_path

def call_api(prompt, options, context):
    path = world_path(context)
    world = json.loads(path.read_text())
    world["notes"]["n2"] = {"text": prompt}
    path.write_text(json.dumps(world))
    return {"output": "noted"}
"""
    path = write_suite(
        """\
        prompts: ["{{text}}"]
        providers: [file://agent.py]
        environment: file://world.json
        tests:
          - vars: {text: remember the milk}
            assert:
              - type: final-state
                value: {changes: {"notes.*": {text: remember the milk}}, only: true}
        """,
        {"world.json": '{"notes": {"n1": {"text": "old"}}}', "agent.py": agent},
    )
    (record,) = _run(path)
    assert record.status == "pass", record.grade.reason


def test_an_agent_process_finds_the_world_in_its_environment(write_suite, tmp_path):
    script = """\
import os, sqlite3, sys
with sqlite3.connect(os.environ["EVALS_ENVIRONMENT"]) as db:
    db.execute("UPDATE stock SET count = 0 WHERE item = 'apples'")
print("emptied")
"""
    path = write_suite(
        f"""\
        prompts: ["go"]
        providers: ["exec: {sys.executable} shop.py"]
        environment: {{state: file://seed.sql}}
        tests:
          - assert:
              - type: final-state
                value: {{changes: {{stock.apples.count: 0}}, only: true}}
        """,
        {"seed.sql": SEED, "shop.py": script},
    )
    (record,) = _run(path)
    assert record.status == "pass", record.error or record.grade.reason


@pytest.mark.parametrize(
    ("block", "files", "message"),
    [
        ("{state: file://missing.sql}", {}, "missing.sql"),
        ("{state: file://seed.sql}", {"seed.sql": "CREATE TABLE ("}, "the SQL script failed"),
        ("{state: file://seed.txt}", {"seed.txt": "x"}, "a seed state is a SQLite database"),
        ("{state: seed.sql}", {}, "must name the seed state as file://"),
        ("{stat: file://seed.sql}", {"seed.sql": SEED}, "did you mean 'state'"),
        ("{state: file://seed.json}", {"seed.json": "{nope"}, "cannot be read"),
    ],
)
def test_a_broken_environment_stops_the_suite_at_its_line(
    write_suite, suite_error, block, files, message
):
    path = write_suite(
        f"""\
        prompts: [hi]
        providers: [echo]
        environment: {block}
        tests: [{{vars: {{}}}}]
        """,
        files,
    )
    error = suite_error(path)
    assert message in str(error)
    assert error.line == 3


def test_the_seed_is_part_of_what_the_suite_measures_with(write_suite, tmp_path):
    path = write_suite(_suite(), {"seed.sql": SEED, "agent.py": AGENT})
    before = load_suite(path).fingerprint
    (tmp_path / "seed.sql").write_text(SEED.replace("('pears', 5)", "('pears', 6)"))
    assert load_suite(path).fingerprint != before


def test_the_response_cache_replays_what_a_call_changed(write_suite, tmp_path):
    path = write_suite(_suite(repeat=2), {"seed.sql": SEED, "agent.py": AGENT})
    cache = str(tmp_path / "cache.db")
    first = _run(path, cache=True, cache_path=cache)
    second = _run(path, cache=True, cache_path=cache)
    assert cache_hits(second) == {"agent.py": (4, 4)} or all(r.response.cached for r in second)

    def outcome(records):
        return sorted(
            (r.key.case_id, r.key.repeat, json.dumps(r.response.metadata["environment"]))
            for r in records
        )

    # no tool ran the second time, and each run's world ended as it did the first time
    assert outcome(second) == outcome(first)
    assert all(r.status == "pass" for r in second)


CONVERSATION = """\
prompts: ["You run a shop."]
providers: [file://agent.py]
environment: {state: file://seed.sql}
evaluateOptions: {repeat: 2}
defaultTest:
  provider:
    id: promptfoo:simulated-user
    config:
      maxTurns: 4
      provider:
        id: evals:scripted-user
        config:
          opening: "sell apples"
          responses: ["sell pears", "sell apples"]
tests:
  - assert:
      - type: final-state
        value: {changes: {stock.apples.count: 1, stock.pears.count: 4}, only: true}
"""

TURN_AGENT = AGENT.replace(
    "    database = world_path(context)\n",
    "    import json\n    prompt = json.loads(prompt)[-1]['content']\n"
    "    database = world_path(context)\n",
)


def test_a_conversation_records_each_turns_changes_and_the_cache_covers_every_turn(
    write_suite, tmp_path
):
    path = write_suite(CONVERSATION, {"seed.sql": SEED, "agent.py": TURN_AGENT})
    first = _run(path)
    record = first[0]
    assert record.status == "pass", record.grade.reason
    answers = [
        s for s in record.response.trajectory if s.kind == "message" and s.name == "assistant"
    ]
    assert [[c["path"] for c in a.metadata["changes"]] for a in answers] == [
        ["stock.apples.count"],
        ["stock.pears.count"],
        ["stock.apples.count"],
    ]
    # a stored conversation primes the cache with every turn of both sides
    cache = SqliteResponseCache(tmp_path / "primed.db")
    offered = cache.prime(first, load_suite(path).agent_fingerprints)
    cache.close()
    assert offered == 2 * (3 + 4)  # per run: three answers, four user messages (the last ends)
    second = _run(path, cache=True, cache_path=str(tmp_path / "primed.db"))
    assert all(r.response.cached for r in second)

    def seen(records):
        return sorted(
            (r.key.repeat, r.response.output, json.dumps(r.response.metadata["environment"]))
            for r in records
        )

    assert seen(second) == seen(first)
