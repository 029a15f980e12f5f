"""Hostile command lines and store URLs: every numeric option, filters, ids, outputs."""

from __future__ import annotations

from typing import Any

from tests.hostile.builders import GOOD_AGENT, all_pass, both, stderr_has
from tests.hostile.harness import Case, Correct, UsageError, Workspace

SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: file://good.py, label: baseline}
  - {id: file://good.py, label: candidate}
tests:
  - vars: {q: hello}
    metadata: {tags: [golden]}
    assert: [{type: contains, value: ok}]
  - description: second
    vars: {q: again}
    assert: [{type: contains, value: ok}]
gates: {}
"""
FILES = {"suite.yaml": SUITE, "good.py": GOOD_AGENT}
STORE = "@CASE@/store.db"


def cli(
    id: str,
    argv: tuple[str, ...],
    expect: Any,
    *,
    setup: Any = None,
    files: dict[str, str | bytes] | None = None,
    mode: str = "inprocess",
    limit_s: float = 20.0,
    env: dict[str, str] | None = None,
    category: str = "cli",
) -> Case:
    """A case of the standard two-agent, two-case suite with a command line."""
    return Case(
        id=id,
        category=category,
        files={**FILES, **(files or {})},
        argv=argv,
        expect=expect,
        setup=setup,
        mode=mode,
        limit_s=limit_s,
        env=env or {},
    )


def option(name: str, *more: str) -> UsageError:
    """Rejected naming the option (with or without its dashes) and `more`."""
    return UsageError((name.lstrip("-"), *more))


def earlier_evaluation(evaluation_id: str = "fixed-id") -> Any:
    """Setup: one complete evaluation already in the case's store."""

    def setup(ws: Workspace, evals: Any) -> None:
        code = evals("run", "suite.yaml", "--store", STORE, "--evaluation-id", evaluation_id, "-q")
        assert code == 0, f"setup run exited {code}"

    return setup


def _describes(outcome: Any) -> None:
    assert "ok" in outcome.stdout and "2 cases" in outcome.stdout, outcome.stdout


def _resume_notice(outcome: Any) -> None:
    assert "resume" in outcome.stderr.lower(), "no notice that nothing was resumed"


RUN = ("run", "suite.yaml")

CASES = [
    cli("repeat-zero", (*RUN, "--repeat", "0"), option("--repeat")),
    cli("repeat-negative", (*RUN, "--repeat", "-2"), option("--repeat")),
    cli("repeat-text", (*RUN, "--repeat", "two"), option("--repeat")),
    cli("concurrency-zero", (*RUN, "--concurrency", "0"), option("--concurrency")),
    cli("concurrency-negative", (*RUN, "--concurrency", "-3"), option("--concurrency")),
    cli(
        "concurrency-huge-is-fine",
        (*RUN, "--concurrency", "100000"),
        Correct("more workers than runs is harmless", check=all_pass(4)),
    ),
    cli("timeout-negative", (*RUN, "--timeout", "-1"), option("--timeout")),
    cli("timeout-nan", (*RUN, "--timeout", "nan"), option("--timeout")),
    cli("timeout-infinite", (*RUN, "--timeout", "inf"), option("--timeout")),
    cli("timeout-zero", (*RUN, "--timeout", "0"), option("--timeout")),
    cli("tag-matches-nothing", (*RUN, "--tag", "nosuchtag"), option("--tag", "nosuchtag")),
    cli("case-matches-nothing", (*RUN, "--case", "nosuchcase"), option("--case", "nosuchcase")),
    cli(
        "agent-matches-nothing", (*RUN, "--agent", "nosuchagent"), option("--agent", "nosuchagent")
    ),
    cli(
        "tag-and-case-disjoint",
        (*RUN, "--tag", "golden", "--case", "second"),
        option("--case", "--tag"),
    ),
    cli(
        "tag-filter-works",
        (*RUN, "--tag", "golden"),
        Correct("only the golden case runs, for both agents", check=all_pass(2)),
    ),
    cli("shard-beyond-count", (*RUN, "--shard", "3/2"), option("--shard")),
    cli("shard-zero", (*RUN, "--shard", "0/0"), option("--shard")),
    cli("shard-text", (*RUN, "--shard", "a/b"), option("--shard")),
    cli("shard-empty", (*RUN, "--shard", "7/9"), option("--shard", "no run")),
    cli("resume-unknown-id", (*RUN, "--resume", "no-such-id"), option("no-such-id", "--resume")),
    cli(
        "resume-with-nothing-to-resume",
        (*RUN, "--resume"),
        Correct(
            "starts anew and says there was nothing to resume",
            check=both(all_pass(4), _resume_notice),
        ),
    ),
    cli("resume-without-store", (*RUN, "--resume", "--no-store"), option("--resume", "--no-store")),
    cli(
        "evaluation-id-reused",
        (*RUN, "--evaluation-id", "fixed-id"),
        option("--evaluation-id", "fixed-id"),
        setup=earlier_evaluation(),
    ),
    cli(
        "evaluation-id-too-long",
        (*RUN, "--evaluation-id", "x" * 100),
        option("--evaluation-id", "64"),
    ),
    cli("evaluation-id-empty", (*RUN, "--evaluation-id", ""), option("--evaluation-id")),
    cli("evaluation-id-newline", (*RUN, "--evaluation-id", "a\nb"), option("--evaluation-id")),
    cli("grader-unknown", (*RUN, "--grader", "nonsense:x"), option("--grader", "nonsense:x")),
    cli(
        "grader-missing-file",
        (*RUN, "--grader", "file://missing.py"),
        option("--grader", "missing.py"),
    ),
    cli("output-unknown-extension", (*RUN, "-o", "report.docx"), option("report.docx")),
    cli(
        "output-under-a-file",
        (*RUN, "-o", "plain.txt/report.json"),
        option("plain.txt"),
        files={"plain.txt": "a file, not a directory"},
    ),
    cli(
        "output-is-a-directory",
        (*RUN, "-o", "folder.json"),
        option("folder.json"),
        files={"folder.json/keep": ""},
    ),
    cli(
        "output-new-directory-created",
        (*RUN, "-o", "new/dir/report.md"),
        Correct(
            "missing parent directories are created",
            check=lambda o: (o.workspace.case / "new/dir/report.md").read_text(),
        ),
    ),
    cli("env-unknown", (*RUN, "--env", "staging"), option("--env")),
    cli("until-decided-decreasing", (*RUN, "--until-decided", "5,3"), option("--until-decided")),
    cli("until-decided-zero", (*RUN, "--until-decided", "0,5"), option("--until-decided")),
    cli("seed-text", (*RUN, "--seed", "1e3"), option("--seed")),
    cli(
        "seed-huge",
        (*RUN, "--seed", "9" * 40),
        Correct("any integer seed mixes into the derived seeds", check=all_pass(4)),
    ),
    cli("executor-unknown", (*RUN, "--executor", "spark"), option("--executor")),
    cli("ray-address-without-ray", (*RUN, "--ray-address", "auto"), option("--ray-address")),
    cli("misspelt-option", (*RUN, "--repeats", "3"), option("--repeats")),
    cli("no-command", (), option("command")),
    cli("run-without-suite", ("run",), option("suite")),
    cli(
        "validate-ok",
        ("validate", "suite.yaml"),
        Correct("validate loads and describes the suite", check=_describes, status=None),
    ),
    cli(
        "plan-power-above-one",
        ("plan", "suite.yaml", "--power", "2", "--store", STORE),
        option("--power"),
    ),
    cli(
        "plan-effect-zero",
        ("plan", "suite.yaml", "--effect", "0", "--store", STORE),
        option("--effect"),
    ),
    cli(
        "plan-cases-negative",
        ("plan", "suite.yaml", "--cases", "-1", "--store", STORE),
        option("--cases"),
    ),
    cli(
        "plan-confidence-nan",
        ("plan", "suite.yaml", "--confidence", "nan", "--store", STORE),
        option("--confidence"),
    ),
    cli(
        "history-limit-negative",
        ("history", "--limit", "-1", "--store", STORE),
        option("--limit"),
        setup=earlier_evaluation(),
    ),
    cli(
        "compare-unknown-ids",
        ("compare", "nope-a", "nope-b", "--store", STORE),
        option("no evaluation", "nope-"),
        setup=earlier_evaluation(),
    ),
    cli(
        "regrade-unknown-id",
        ("regrade", "nope", "--store", STORE),
        option("nope"),
        setup=earlier_evaluation(),
    ),
    cli("merge-missing-shard", ("merge", "out.db", "missing.db"), option("missing.db")),
    cli(
        "merge-garbage-report",
        ("merge", "out.json", "shard.json"),
        option("shard.json"),
        files={"shard.json": "{not json"},
    ),
    cli("calibrate-missing-file", ("calibrate", "labels.yaml"), option("labels.yaml")),
    cli(
        "dashboard-port-out-of-range",
        ("dashboard", "--port", "99999", "--store", STORE),
        option("--port"),
        mode="subprocess",
        limit_s=8,
    ),
    cli("timeout-minus-infinite", (*RUN, "--timeout", "-inf"), option("--timeout")),
    cli("resume-id-too-long", (*RUN, "--resume", "r" * 65), option("--resume", "64")),
    cli("evaluation-id-tab", (*RUN, "--evaluation-id", "a\tb"), option("--evaluation-id")),
    cli(
        "evaluation-id-reused-by-another-suite",
        ("run", "other.yaml", "--store", STORE, "--evaluation-id", "fixed-id"),
        option("--evaluation-id", "fixed-id"),
        files={"other.yaml": SUITE.replace("again", "once more")},
        setup=earlier_evaluation(),
    ),
    cli(
        "output-deep-under-a-file",
        (*RUN, "-o", "plain.txt/a/b/report.md"),
        option("plain.txt"),
        files={"plain.txt": "a file, not a directory"},
    ),
    cli(
        "grader-python-missing-file",
        (*RUN, "--grader", "python:judge_missing.py"),
        option("--grader", "judge_missing.py"),
    ),
    cli(
        "calibrate-concurrency-zero",
        ("calibrate", "labels.yaml", "-j", "0"),
        option("--concurrency"),
    ),
    cli(
        "calibrate-not-yaml",
        ("calibrate", "labels.yaml"),
        option("labels.yaml"),
        files={"labels.yaml": "items: [unclosed\n"},
    ),
    cli("dashboard-port-zero", ("dashboard", "--port", "0", "--store", STORE), option("--port")),
    cli(
        "merge-report-of-another-tool",
        ("merge", "out.json", "shard.json"),
        option("shard.json"),
        files={"shard.json": '{"results": {"results": []}}'},
    ),
    cli(
        "merge-report-truncated-section",
        ("merge", "out.json", "shard.json"),
        option("shard.json"),
        files={"shard.json": '{"evals": {"suite": 3}}'},
    ),
    cli(
        "merge-missing-shard-url",
        ("merge", "out.db", "sqlite:///missing.db"),
        option("missing.db"),
    ),
    cli(
        "store-prune-keep-zero",
        ("store", "prune", "--keep", "0", "--store", STORE),
        option("--keep"),
    ),
]

# Store URLs: each must be refused (exit 2 naming --store) or be a clear fault (exit 3).
STORE_CASES = [
    cli(
        "bogus-scheme", (*RUN, "--store", "bogus://x"), option("--store", "bogus"), category="store"
    ),
    cli(
        "memory-bare",
        (*RUN, "--store", ":memory:"),
        option("--store", ":memory:"),
        category="store",
    ),
    cli(
        "memory-sqlite-url",
        (*RUN, "--store", "sqlite:///:memory:"),
        option("--store", "memory"),
        category="store",
    ),
    cli(
        "mysql-url",
        (*RUN, "--store", "mysql://u@127.0.0.1/db"),
        option("--store", "mysql"),
        category="store",
    ),
    cli(
        "store-is-a-directory",
        (*RUN, "--store", "folder"),
        option("--store", "folder"),
        files={"folder/keep": ""},
        category="store",
    ),
    cli(
        "store-is-not-a-database",
        (*RUN, "--store", "notes.db"),
        option("--store", "notes.db"),
        files={"notes.db": "these are notes, not a database\n" * 100},
        category="store",
    ),
    cli(
        "store-under-a-file",
        (*RUN, "--store", "plain.txt/results.db"),
        option("--store", "plain.txt"),
        files={"plain.txt": "file"},
        category="store",
    ),
    cli(
        "store-env-bogus",
        RUN,
        UsageError(("EVALS_STORE_URL", "bogus")),
        env={"EVALS_STORE_URL": "bogus://x"},
        category="store",
    ),
    cli(
        "postgres-unreachable-password-hidden",
        (*RUN, "--store", "postgresql://evals:literal-hostile-password-4b3a2918@127.0.0.1:9/db"),
        Correct(
            "an unreachable server is a harness fault naming the host, not the password",
            exit_code=3,
            check=stderr_has("127.0.0.1"),
            status=None,
        ),
        category="store",
    ),
    cli(
        "memory-env",
        RUN,
        UsageError(("EVALS_STORE_URL", ":memory:")),
        env={"EVALS_STORE_URL": ":memory:"},
        category="store",
    ),
    cli(
        "sqlite-url-under-a-file",
        (*RUN, "--store", "sqlite:///plain.txt/results.db"),
        option("--store", "plain.txt"),
        files={"plain.txt": "file"},
        category="store",
    ),
    cli(
        "sqlite-url-not-a-database",
        (*RUN, "--store", "sqlite:///notes.db"),
        option("--store", "notes.db"),
        files={"notes.db": "PK\x03\x04 a zip archive, not a database"},
        category="store",
    ),
    cli(
        "postgres-unknown-driver",
        (*RUN, "--store", "postgresql+asyncpg://u@127.0.0.1/db"),
        option("--store", "asyncpg"),
        category="store",
    ),
    cli(
        "history-store-is-a-directory",
        ("history", "--store", "folder"),
        option("--store", "folder"),
        files={"folder/keep": ""},
        category="store",
    ),
    cli(
        "merge-into-a-directory",
        ("merge", "folder", "shard.db"),
        option("OUT", "folder"),
        files={"folder/keep": "", "shard.db": ""},
        category="store",
    ),
    cli(
        "dashboard-store-mysql",
        ("dashboard", "--store", "mysql://u@127.0.0.1/db"),
        option("--store", "mysql"),
        mode="subprocess",
        limit_s=8,
        category="store",
    ),
    cli(
        "history-newer-schema",
        ("history", "--store", STORE),
        option("newer"),
        setup=lambda ws, evals: _newer_schema(ws),
        category="store",
    ),
    cli(
        "store-newer-schema",
        (*RUN, "--store", STORE),
        option("newer"),
        setup=lambda ws, evals: _newer_schema(ws),
        category="store",
    ),
    cli(
        "store-in-home",
        (*RUN, "--store", "~/results.db"),
        Correct(
            "~ expands to the home directory",
            status=None,
            check=lambda o: _has_runs(o.workspace.home / "results.db"),
        ),
        category="store",
    ),
]


def _newer_schema(ws: Workspace) -> None:
    import sqlite3

    connection = sqlite3.connect(ws.store)
    connection.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description TEXT, "
        "applied_at REAL)"
    )
    connection.execute("INSERT INTO schema_version VALUES (99, 'from the future', 0)")
    connection.commit()
    connection.close()


def _has_runs(store: Any) -> None:
    from tests.hostile.harness import query

    assert len(query(store, "SELECT id FROM runs")) == 4, "runs not in the home store"
