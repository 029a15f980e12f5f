"""A team's first hour with evals, in projects of its own: the README's commands run as
written in a fresh virtualenv, agents on framework fake models without a list price,
output piped to a file. Each test reproduces what went wrong for a team before: a
verdict that was wrong without saying so, or an exit code that hid it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.adoption.team import PYPROJECT, ROOT, Team, readme_commands
from tests.tiers import find_uv

pytestmark = pytest.mark.slow  # builds a virtualenv and runs whole evaluations


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Team:
    """The team's two projects, installed with `pip install -e` into a fresh virtualenv."""
    uv = find_uv()
    built = Team(tmp_path_factory.mktemp("team"))
    built.write_projects()
    built.install(uv)
    return built


def _rows(report: Path) -> list[dict]:
    return json.loads(report.read_text(encoding="utf-8"))["results"]["results"]


def _agent(row: dict) -> str:
    return row["metadata"]["evals"]["agent"]


def test_the_readmes_own_agent_suite_on_a_fake_model_gives_the_documented_verdict(team: Team):
    """Before: the budget's `max_cost` on GenericFakeChatModel (no list price) errored every
    run, the runs' policy grades were dropped, and the policy gate passed a candidate that
    paid refunds without approval. Now: exit 1, the policy gate counts every violation,
    no run errored, and the unknown cost is named with its fix."""
    (command,) = readme_commands("Your own agent in five minutes")
    assert command == "evals run suite.yaml --repeat 5 -o report.html"

    ran = team.shell(command + " -o report.json", team.desk)

    assert ran.code == 1, ran.output
    assert re.search(r"policy\s+fail\s+5 policy violation\(s\) by candidate", ran.text)
    assert "no price for model 'GenericFakeChatModel'" in ran.text
    assert "add it to the suite's prices:" in ran.text
    rows = _rows(team.desk / "report.json")
    assert {r["metadata"]["evals"]["status"] for r in rows} <= {"pass", "fail"}
    violations = [_agent(r) for r in rows if r["metadata"]["evals"]["policyViolation"]]
    assert violations == ["candidate"] * 5
    assert {r["cost"] for r in rows} == {None}
    html = (team.desk / "report.html").read_text(encoding="utf-8")
    assert "$0.0000" not in html and "unknown" in html


def test_a_prices_entry_makes_the_fake_models_cost_known(team: Team):
    suite = team.desk / "priced.yaml"
    suite.write_text(
        (team.desk / "suite.yaml").read_text(encoding="utf-8")
        + "prices: {GenericFakeChatModel: {input: 0, output: 0}}\n",
        encoding="utf-8",
    )

    ran = team.run(["evals", "run", "priced.yaml", "--repeat", "2", "-o", "priced.json"], team.desk)

    assert ran.code == 1
    assert "unknown" not in ran.text
    assert {r["cost"] for r in _rows(team.desk / "priced.json")} == {0}


def test_a_policy_violation_in_an_errored_run_is_counted(team: Team):
    """A check that raises (here a team's assertion transform with a bug) makes each run an
    error row; the candidate's violations in those runs still fail the policy gate."""
    suite = team.desk / "buggy.yaml"
    suite.write_text(
        (team.desk / "suite.yaml").read_text(encoding="utf-8")
        + "      - {type: contains, value: A100, transform: output.summary.text}\n",
        encoding="utf-8",
    )

    ran = team.run(["evals", "run", "buggy.yaml", "--repeat", "5", "-o", "buggy.json"], team.desk)

    assert ran.code == 1
    assert re.search(r"policy\s+fail\s+5 policy violation\(s\) by candidate", ran.text)
    rows = _rows(team.desk / "buggy.json")
    assert {r["metadata"]["evals"]["errorKind"] for r in rows} == {"grader_error"}
    assert sum(r["metadata"]["evals"]["policyViolation"] for r in rows) == 5


def test_pydantic_ai_on_test_model_counts_every_violation(team: Team):
    """Before: the policy gate counted 5 violations where there were 10."""
    ran = team.run(["evals", "run", "typed.yaml", "--repeat", "5", "-o", "typed.json"], team.desk)

    assert ran.code == 1, ran.output
    assert re.search(r"policy\s+fail\s+10 policy violation\(s\) by candidate", ran.text)
    assert "no price for model 'test'" in ran.text
    rows = _rows(team.desk / "typed.json")
    assert sum(r["metadata"]["evals"]["policyViolation"] for r in rows) == 10


def test_a_misspelled_key_stops_the_run_instead_of_passing(team: Team):
    """Before: `asert:` graded nothing and the run exited 0."""
    suite = team.desk / "typo.yaml"
    suite.write_text(
        (team.desk / "suite.yaml").read_text(encoding="utf-8").replace("    assert:", "    asert:"),
        encoding="utf-8",
    )

    ran = team.run(["evals", "run", "typo.yaml", "--repeat", "5"], team.desk)

    assert ran.code == 2
    assert "typo.yaml:12: unknown key 'asert' in test #1" in ran.text
    assert "did you mean 'assert'?" in ran.text


def test_compare_names_each_side_and_never_an_agent_with_itself(team: Team):
    ran = team.run(
        ["evals", "run", "typed.yaml", "--repeat", "3", "--evaluation-id", "t1"], team.desk
    )
    assert ran.code == 1

    same = team.run(["evals", "compare", "t1", "t1", "-o", "same.json", "-q"], team.desk)

    assert same.code == 1, same.output  # the candidate's policy violations fail the gate
    summary = json.loads((team.desk / "same.json").read_text(encoding="utf-8"))["evals"]["summary"]
    assert {a["agent"] for a in summary["agents"]} == {"baseline", "candidate"}
    assert summary["comparison"]["overall"]["difference"] == pytest.approx(-1.0)


def test_the_readmes_pytest_section_runs_as_written(team: Team):
    """The README's test file and settings, with its commands: the candidate alone passes
    (exit 0); baseline against a candidate that e-mails the answer fails on policy."""
    first, _parallel, compared = readme_commands("Your pytest tests in five minutes")

    alone = team.shell(first, team.research)
    assert alone.code == 0, alone.output
    assert "Gate verdict" in alone.text

    against = team.shell(compared, team.research)
    assert against.code == 1, against.output
    assert re.search(r"policy\s+fail\s+5 policy violation\(s\) by candidate", against.text)


def test_the_readmes_pytest_test_counts_a_violation_whatever_else_fails(team: Team):
    """Before: the README's test checked the answer before the policy, so a candidate that
    dropped the quotes and e-mailed the answer out failed on the quotes, its policy was
    never checked, and the policy gate said "no policy violations by candidate"."""
    *_, compared = readme_commands("Your pytest tests in five minutes")

    ran = team.shell(compared.replace(":proposed", ":careless"), team.research)

    assert ran.code == 1, ran.output
    assert re.search(r"policy\s+fail\s+5 policy violation\(s\) by candidate", ran.text)


def test_a_test_that_never_calls_the_named_agents_is_refused(team: Team):
    """Before: with --evals-baseline/--evals-candidate a test using its own fixture ran the
    fixture's agent in both columns, never importing the named agents (a candidate raising
    SystemExit at import passed, exit 0)."""
    tests = team.research / "tests" / "test_own_fixture.py"
    tests.write_text(
        "import pytest\n\n\n@pytest.fixture\ndef desk(evals_run):\n"
        "    return lambda question: {'output': 'BUSI: \"quoted\"'}\n\n\n"
        "@pytest.mark.evals(repeat=2)\ndef test_quote(desk, evals_run):\n"
        "    result = desk('BUSI?')\n    evals_run.record(result)\n"
        "    assert '\"' in result['output']\n",
        encoding="utf-8",
    )
    (team.research / "pkg" / "broken.py").write_text(
        "raise SystemExit('cannot import the candidate')\n", encoding="utf-8"
    )
    try:
        ran = team.run(
            [
                "pytest",
                "--evals",
                "tests/test_own_fixture.py",
                "--evals-baseline",
                "pkg.agents:shipped",
                "--evals-candidate",
                "pkg.agents:proposed",
            ],
            team.research,
        )
        assert ran.code == 4, ran.output
        assert "test_own_fixture.py::test_quote runs for the agents baseline and candidate" in (
            ran.text
        )
        broken = team.run(
            ["pytest", "--evals", "--evals-candidate", "pkg.broken:agent"], team.research
        )
        assert broken.code != 0
    finally:
        tests.unlink()


def test_an_example_needing_an_extra_stops_naming_it(team: Team):
    """Without `[instrumentation]`, the instrumented example stops before any run with exit
    2 naming the extra (before: every run errored with a raw traceback quoted in the
    error-rate gate's reason)."""
    suite = ROOT / "cases" / "examples" / "instrumented" / "openinference.yaml"

    ran = team.run(["evals", "run", str(suite), "--no-store"], team.work)

    assert ran.code == 2, ran.output
    assert "needs" in ran.text or "not installed" in ran.text
    assert "[instrumentation]" in ran.text
    assert "Traceback" not in ran.output


# A team's own package, `quotes`: the agent reads a price feed (a file outside its code,
# standing for an API whose answers may move while the code stays the same).
QUOTES_ENGINE = '''\
"""The quote desk's engine."""

import random
from pathlib import Path

FEED = Path(__file__).resolve().parents[1] / "feed.txt"


def answer(prompt, seed):
    if FEED.read_text(encoding="utf-8").strip() == "down":
        return "feed unavailable"
    return f"quote {prompt}" if random.Random(seed).random() < 0.85 else "unknown ticker"
'''

QUOTES_AGENTS = """\
from quotes.engine import answer


def shipped(prompt, options, context):
    return {"output": answer(prompt, context["seed"])}


def proposed(prompt, options, context):
    return {"output": answer(prompt, context["seed"] + 1)}
"""


def test_a_second_run_reuses_the_unchanged_baseline_and_an_edit_or_a_moved_feed_runs_it_fresh(
    team: Team,
):
    """The team's own package installed with `pip install -e`: the first run calls both
    agents; the second answers the unchanged baseline from the store, re-running a fifth
    fresh as a drift check; an edit of the package's code changes the baseline's
    fingerprint, so it runs fresh; a feed that went down since shows as drift, and the
    baseline runs fresh, said so."""
    project = team.work / "quotes-desk"
    (project / "quotes").mkdir(parents=True)
    (project / "quotes" / "__init__.py").write_text("", encoding="utf-8")
    (project / "quotes" / "engine.py").write_text(QUOTES_ENGINE, encoding="utf-8")
    (project / "quotes" / "agents.py").write_text(QUOTES_AGENTS, encoding="utf-8")
    pyproject = PYPROJECT.format(name="quotes-desk", package="quotes")
    (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (project / "feed.txt").write_text("up\n", encoding="utf-8")
    tests = "\n".join(
        f"  - vars: {{ticker: T{n}}}\n    assert: [{{type: contains, value: quote}}]"
        for n in range(20)
    )
    (project / "suite.yaml").write_text(
        "prompts: ['{{ticker}}']\n"
        "providers:\n"
        "  - {id: 'file://quotes/agents.py:shipped', label: shipped}\n"
        "  - {id: 'file://quotes/agents.py:proposed', label: proposed}\n"
        "gates: {baseline: shipped, candidate: proposed}\n"
        f"tests:\n{tests}\n",
        encoding="utf-8",
    )
    python = str(team.venv / "bin" / "python")
    subprocess.run(
        [find_uv(), "pip", "install", "-q", "--python", python, "-e", str(project)],
        check=True,
        capture_output=True,
    )
    command = ["evals", "run", "suite.yaml", "--repeat", "3", "-o", "report.json"]

    def reuse() -> dict | None:
        report = json.loads((project / "report.json").read_text(encoding="utf-8"))
        return report["evals"]["gates"]["reuse"]

    first = team.run(command, project)
    assert reuse() is None and "stored run(s)" not in first.text, first.output

    second = team.run(command, project)
    assert "baseline shipped: 40 stored run(s) reused, 20 re-run fresh" in second.text
    assert "agent calls: 80 against 120 with every agent run fresh (40 saved, 33%)" in second.text
    assert (reuse() or {})["reused"] == 40

    engine = project / "quotes" / "engine.py"
    engine.write_text(engine.read_text(encoding="utf-8") + "\n# tuned\n", encoding="utf-8")
    edited = team.run(command, project)
    assert reuse() is None and "stored run(s)" not in edited.text, edited.output

    (project / "feed.txt").write_text("down\n", encoding="utf-8")
    moved = team.run(command, project)
    assert "baseline shipped: drift found (20 stored run(s) re-run fresh pass 0.0 %" in moved.text
    assert "baseline re-run fresh" in moved.text
    assert (reuse() or {})["fell_back"] is True
