"""The state of a pytest session that evaluates, and the hooks that do the work.

`EvalsSession` holds the settings, the agents and, for each marked test, its `EvalsRun`.
With `--evals`, `EvaluationHooks` is registered as well: it parametrizes every marked
test over (agent, repeat), turns each finished test into a `RunRecord` carried on its
report, collects the records where the reports arrive (the only process, or
pytest-xdist's controller), and at the end of the session analyses, gates, stores and
reports them as one evaluation, and sets pytest's exit status from the verdict.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evals.model.errors import HarnessFault, SuiteError
from evals.model.results import RunRecord
from evals.model.suite import Case
from evals.model.summary import BaselineReuse
from evals.plan.runs import derive_seed
from evals.testing.agents import AgentCallError, AgentPool
from evals.testing.checks import grade_suite_policy
from evals.testing.evaluation import Outline
from evals.testing.marks import CaseMark, MarkError, case_id, merge, without_slot
from evals.testing.reuse import SessionReuse, plan_reuse
from evals.testing.runs import EvalsRun, Outcome, decode_record, encode_record, run_record
from evals.testing.settings import Settings, load_settings

MARKER = "evals"
SLOT = "_evals_slot"
RUN = pytest.StashKey[EvalsRun]()
CASE = pytest.StashKey["CaseInfo"]()
PHASES = pytest.StashKey[dict[str, pytest.CallInfo[None]]]()
# The (case id, repeat) of a baseline run the stored baseline answers (`evals.testing.reuse`).
REUSED = pytest.StashKey[tuple[str, int]]()
RECORD_ATTRIBUTE = "evals_record"
MARKED_ATTRIBUTE = "evals_marked"
# The fixtures through which a test runs the agent of its run (the session's agents).
AGENT_FIXTURES = ("evals_agent", "evals_agent_label")


@dataclass(frozen=True, slots=True)
class Slot:
    """One (agent, repeat) of a marked test; its id ends the test's node id."""

    agent: str
    repeat: int

    @property
    def id(self) -> str:
        """`baseline-3`: the agent's label and the repeat."""
        return f"{self.agent}-{self.repeat}"


@dataclass(frozen=True, slots=True)
class CaseInfo:
    """The case a marked test item runs, and which run of it."""

    case_id: str
    mark: CaseMark
    description: str
    agent: str
    repeat: int
    variables: dict[str, Any]


def marks_of(node: Any) -> CaseMark:
    """The merged `evals` marks of a test item or of its function's definition."""
    return merge((m.args, m.kwargs) for m in node.iter_markers(MARKER))


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    import orjson

    from evals.common.encoding import dump_json

    return orjson.loads(dump_json(values))


class EvalsSession:
    """One pytest session's evaluation state, with or without `--evals`."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._settings: Settings | None = None
        self._pool: AgentPool | None = None

    @property
    def settings(self) -> Settings:
        """The session's settings, read on first use (at start-up with `--evals`)."""
        if self._settings is None:
            self._settings = load_settings(self.config)
        return self._settings

    @property
    def pool(self) -> AgentPool:
        """The session's agents, built as tests first call them."""
        if self._pool is None:
            settings = self.settings
            self._pool = AgentPool(
                settings.agents, settings.root, settings.timeout_s, settings.conversation
            )
        return self._pool

    def close(self) -> None:
        """Release the agents."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def run_of(self, item: pytest.Item) -> EvalsRun:
        """The run a marked item serves: its case, agent, repeat and seeds.

        Without `--evals` a marked test runs once, as repeat 0 of the candidate (or the
        only agent).
        """
        run = item.stash.get(RUN, None)
        if run is not None:
            return run
        info = item.stash.get(CASE, None) or self.case_info(item, None)
        settings = self.settings
        spec = next(s for s in settings.agents if s.label == info.agent)
        suite_id, salt = settings.suite_id, settings.salt
        run = EvalsRun(
            suite_id=suite_id,
            case_id=info.case_id,
            agent=info.agent,
            repeat=info.repeat,
            seed=derive_seed(suite_id, info.case_id, info.agent, info.repeat, salt),
            shared_seed=derive_seed(suite_id, info.case_id, "", info.repeat, salt),
            description=info.description,
            metadata=info.mark.case_metadata(),
            vars=info.variables,
            suite_root=settings.root,
            suite_config=settings.suite_config,
            case_options=settings.case_options,
            provider_config=spec.config,
        )
        item.stash[RUN] = run
        return run

    def case_info(self, item: pytest.Item, slot: Slot | None) -> CaseInfo:
        """The case of an item (raises MarkError for a mark that cannot be used)."""
        mark = marks_of(item)
        callspec = getattr(item, "callspec", None)
        params = dict(callspec.params) if callspec is not None else {}
        params.pop(SLOT, None)
        node_id = item.nodeid if slot is None else without_slot(item.nodeid, slot.id)
        identity = case_id(mark, node_id)
        doc = getattr(getattr(item, "obj", None), "__doc__", None)
        summary = doc.strip().splitlines()[0] if doc and doc.strip() else None
        return CaseInfo(
            case_id=identity,
            mark=mark,
            description=mark.description or summary or node_id.rpartition("::")[2],
            agent=slot.agent if slot is not None else self.settings.default_agent(),
            repeat=slot.repeat if slot is not None else 0,
            variables=_plain(params),
        )


def _detail(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    return traceback.format_exception_only(excinfo.type, excinfo.value)[-1].strip()


def outcome_of(phases: dict[str, pytest.CallInfo[None]]) -> Outcome | None:
    """How a test ended, as a run: pass, fail (an assertion or `pytest.fail`), error
    (anything else, with its kind), or None when it was skipped or did not run."""
    from evals.agents.validate import MalformedResponse

    skipped = (pytest.skip.Exception, pytest.xfail.Exception)
    setup, call, teardown = (phases.get(w) for w in ("setup", "call", "teardown"))
    for phase, info in (("setup", setup), ("call", call)):
        excinfo = info.excinfo if info is not None else None
        if excinfo is None:
            continue
        error = excinfo.value
        if isinstance(error, skipped):
            return None
        if isinstance(error, AgentCallError):
            return Outcome("error", str(error), error.kind)
        if isinstance(error, MalformedResponse):
            return Outcome("error", f"malformed agent response: {error}", "malformed")
        if phase == "call" and isinstance(error, AssertionError | pytest.fail.Exception):
            return Outcome("fail", str(error) or _detail(excinfo))
        if phase == "setup":
            return Outcome("error", f"setup failed: {_detail(excinfo)}", "infra")
        return Outcome("error", f"test raised {_detail(excinfo)}", "agent_error")
    if call is None:
        return None
    failed = teardown.excinfo if teardown is not None else None
    if failed is not None and not isinstance(failed.value, skipped):
        return Outcome("error", f"teardown failed: {_detail(failed)}", "infra")
    return Outcome("pass")


class EvaluationHooks:
    """The hooks of a `pytest --evals` session (registered only then)."""

    def __init__(self, session: EvalsSession) -> None:
        self.session = session
        self.config = session.config
        self.worker = hasattr(self.config, "workerinput")
        self.started_at = time.time()
        self.records: list[RunRecord] = []
        self.outline: Outline | None = None
        self.other_failures = 0
        self.result: Any = None
        self.messages: list[str] = []
        self.repeats: dict[str, int | None] = {}
        self.reuse: SessionReuse | None = None

    # Collection: every marked test runs once per (agent, repeat).

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize a marked test over the session's agents and its repeats."""
        if metafunc.definition.get_closest_marker(MARKER) is None:
            return
        try:
            mark = marks_of(metafunc.definition)
        except MarkError as exc:
            pytest.fail(f"{metafunc.definition.nodeid}: {exc}", pytrace=False)
        settings = self.session.settings
        repeat = settings.repeat or mark.repeat or settings.default_repeat
        self.repeats[metafunc.definition.nodeid] = mark.repeat
        slots = [Slot(agent, r) for r in range(repeat) for agent in settings.agent_labels]
        metafunc.fixturenames.append(SLOT)
        metafunc.parametrize(SLOT, slots, ids=[s.id for s in slots], indirect=True)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Give each selected marked item its case (after -k and -m have selected); keep
        the environment's tags; check the ids."""
        kept, deselected, problems = [], [], []
        seen: dict[tuple[str, str, int], str] = {}
        cases: dict[str, Case] = {}
        tags = set(self.session.settings.tags or [])
        for item in items:
            if item.get_closest_marker(MARKER) is None:
                kept.append(item)
                continue
            unrouted = self._unrouted(item)
            if unrouted is not None:
                if unrouted not in problems:
                    problems.append(unrouted)
                continue
            callspec = getattr(item, "callspec", None)
            slot = callspec.params.get(SLOT) if callspec is not None else None
            if slot is None:
                problems.append(
                    f"{item.nodeid}: only a parameter is marked evals; mark the test function "
                    "(a parameter's mark adds the details of its case)"
                )
                continue
            try:
                info = self.session.case_info(item, slot)
            except MarkError as exc:
                problems.append(f"{item.nodeid}: {exc}")
                continue
            if tags and not tags.intersection(info.mark.tags):
                deselected.append(item)
                continue
            if info.mark.repeat != self.repeats.get(item.nodeid.split("[", 1)[0]):
                problems.append(f"{item.nodeid}: put repeat= on the test function's mark")
                continue
            key = (info.case_id, info.agent, info.repeat)
            if key in seen:
                problems.append(
                    f"{item.nodeid} and {seen[key]} are both case {info.case_id!r}; "
                    "give each a distinct evals(case=...) or description"
                )
                continue
            seen[key] = item.nodeid
            item.stash[CASE] = info
            cases.setdefault(
                info.case_id,
                Case(
                    len(cases),
                    info.case_id,
                    info.description,
                    {},
                    [],
                    metadata=info.mark.case_metadata(),
                ),
            )
            kept.append(item)
        if problems:
            raise pytest.UsageError("evals marks:\n  " + "\n  ".join(problems))
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = kept
        self._outline(items, list(cases.values()))
        self._plan_reuse(items)

    def _plan_reuse(self, items: list[pytest.Item]) -> None:
        """Answer the baseline's items the store holds (`evals.testing.reuse`), the drift
        guard's items first so that their runs are in before the first answered one."""
        assert self.outline is not None
        infos = [(item, item.stash[CASE]) for item in items if CASE in item.stash]
        planned = {(info.case_id, info.agent, info.repeat) for _, info in infos}
        fresh = bool(self.config.getoption("evals_fresh_baseline"))
        plan = plan_reuse(self.session.settings, self.outline, planned, fresh)
        if isinstance(plan, str):
            self.messages.append(plan)
        if not isinstance(plan, SessionReuse):
            return
        self.reuse = plan
        guards = set()
        for item, info in infos:
            key = (info.case_id, info.repeat)
            if info.agent != plan.agent:
                continue
            if key in plan.answers:
                item.stash[REUSED] = key
            elif key in plan.guarded:
                guards.add(item)
        items.sort(key=lambda item: item not in guards)

    def _unrouted(self, item: pytest.Item) -> str | None:
        """Why a marked test cannot evaluate the session's agents, None when it can.

        With several agents (a baseline and a candidate), or agents named with
        --evals-baseline/--evals-candidate, a test whose fixtures never use `evals_agent`
        (or `evals_agent_label`) runs its own agent in every column: the named agents are
        never called, and an agent would be compared with itself."""
        settings = self.session.settings
        if not (len(settings.agents) > 1 or settings.named_agents):
            return None
        if set(AGENT_FIXTURES) & set(getattr(item, "fixturenames", ())):
            return None
        labels = " and ".join(settings.agent_labels)
        test = item.nodeid.split("[", 1)[0]
        return (
            f"{test} runs for the agents {labels} but never calls them: none of its fixtures "
            "uses evals_agent, so every agent's runs would run the test's own agent (an agent "
            "compared with itself). Call the run's agent through evals_agent, in the test or "
            "in your own fixture (`def agent(evals_agent): return evals_agent`), or build "
            "each agent from evals_agent_label in your fixture"
        )

    def _outline(self, items: list[pytest.Item], cases: list[Case]) -> None:
        from evals.suite.fingerprint import fingerprint
        from evals.testing.evaluation import fingerprint_files

        test_files = sorted({Path(item.path) for item in items if CASE in item.stash})
        files = fingerprint_files(test_files, Path(self.config.rootpath), self.session.settings)
        self.outline = Outline(
            cases, fingerprint(files, Path(self.config.rootpath)), [str(f) for f in files]
        )
        if self.worker:
            self.config.workeroutput["evals"] = json.dumps(self.outline.to_dict())  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist: take the suite's outline from the first worker that finished."""
        data = getattr(node, "workeroutput", {}).get("evals")
        if data is not None and self.outline is None:
            self.outline = Outline.from_dict(json.loads(data))

    # Running: the run is current while its test executes; its record rides on the report.

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Skip a baseline item the stored baseline answers, unless the drift guard's runs
        (which ran first) differ from the stored ones: then it runs fresh."""
        key = item.stash.get(REUSED, None)
        if key is None or self.reuse is None:
            return
        if not self.worker:
            drift = self.reuse.drift or self.reuse.decide(self.records)
            if drift.drifted:
                del item.stash[REUSED]
                return
        pytest.skip(f"baseline run answered from stored evaluation {self.reuse.source}")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        """Make the item's run current for the checks while the test executes."""
        from evals.testing.runs import active

        with active(self.session.run_of(item) if CASE in item.stash else None):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Mark the reports of evaluation runs; the last one carries the run's record."""
        report: pytest.TestReport = yield
        if CASE not in item.stash:
            return report
        setattr(report, MARKED_ATTRIBUTE, True)
        phases = item.stash.setdefault(PHASES, {})
        phases[call.when] = call
        if call.when == "teardown":
            record = self._record(item, phases)
            if record is not None:
                setattr(report, RECORD_ATTRIBUTE, encode_record(record))
        return report

    def _record(
        self, item: pytest.Item, phases: dict[str, pytest.CallInfo[None]]
    ) -> RunRecord | None:
        key = item.stash.get(REUSED, None)
        if key is not None and self.reuse is not None:
            answer = self.reuse.answer(key)
            answer.agent_index = self.session.settings.agent_labels.index(answer.key.agent)
            return answer
        outcome = outcome_of(phases)
        if outcome is None:
            return None
        run = self.session.run_of(item)
        raised = grade_suite_policy(run)
        if raised is not None and outcome.status != "error":
            outcome = Outcome("error", raised, "grader_error")
        timed = phases.get("call") or phases["setup"]
        settings = self.session.settings
        return run_record(
            run,
            outcome,
            case_index=0,
            agent_index=settings.agent_labels.index(run.agent),
            started_at=timed.start,
            ended_at=timed.stop,
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Where reports arrive (here, or from xdist's workers): keep each run's record,
        and count failures of tests that are not runs, which fail the session as usual."""
        if self.worker:
            return
        encoded = getattr(report, RECORD_ATTRIBUTE, None)
        if encoded is not None:
            self.records.append(decode_record(encoded))
        elif report.failed and not getattr(report, MARKED_ATTRIBUTE, False):
            self.other_failures += 1

    # The end: one evaluation, its store, its reports and the session's exit status.

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Analyse and gate the runs, store and report them, and exit by the verdict."""
        self.session.close()
        if self.worker or self.config.option.collectonly:
            return
        if not self.records:
            self.messages.append("no run of a test marked evals completed: nothing to evaluate")
            return
        if session.exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            self.messages.append("the session did not complete: the evaluation is not stored")
            return
        if self.outline is None:
            self.messages.append("no worker reported the suite's cases: nothing to evaluate")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        session.exitstatus = self._evaluate()

    def _evaluate(self) -> int:
        from evals.pipeline.verdict import verdict_passed
        from evals.testing import evaluation

        assert self.outline is not None
        settings = self.session.settings
        index = {case.id: case.index for case in self.outline.cases}
        for record in self.records:
            record.case_index = index.get(record.key.case_id, len(index))
        reuse = self._settle_reuse()
        try:
            self.result = evaluation.evaluate(
                settings,
                self.outline,
                self.records,
                started_at=self.started_at,
                args=list(self.config.invocation_params.args),
                reuse=reuse,
            )
            if settings.use_store:  # the summary's last block says where
                evaluation.store(self.result, settings.store_url)
            evaluation.write_reports(self.result, settings.outputs)
            self.messages.extend(f"wrote {out}" for out in settings.outputs)
        except (HarnessFault, SuiteError) as exc:
            self.messages.append(f"harness fault: {exc}")
            return pytest.ExitCode.INTERNAL_ERROR
        if self.other_failures:
            return pytest.ExitCode.TESTS_FAILED
        passed = verdict_passed(self.result)
        return pytest.ExitCode.OK if passed else pytest.ExitCode.TESTS_FAILED

    def _settle_reuse(self) -> BaselineReuse | None:
        """What the stored baseline did, once every record is in, said in two lines (the
        baseline, the agent calls). Under pytest-xdist the plan is the workers' (the
        controller collects nothing) and the guard decides here: on drift the stored runs
        are dropped, leaving the baseline's fresh runs."""
        settings = self.session.settings
        reuse = self.reuse
        if reuse is None and any(r.response.cached for r in self.records):
            assert self.outline is not None
            runs = {(r.key.case_id, r.key.agent, r.key.repeat) for r in self.records}
            fresh = bool(self.config.getoption("evals_fresh_baseline"))
            plan = plan_reuse(settings, self.outline, runs, fresh)
            reuse = plan if isinstance(plan, SessionReuse) else None
        if reuse is None:
            return None
        planned = len(self.records)
        drift = reuse.decide(self.records)
        if drift.drifted:
            kept = [
                r for r in self.records if not (r.key.agent == reuse.agent and r.response.cached)
            ]
            if len(kept) < len(self.records):
                self.messages.append(
                    f"drift found after {len(self.records) - len(kept)} baseline run(s) were "
                    "answered from the store (each pytest-xdist worker saw only its own "
                    "runs): they are dropped and the baseline keeps its fresh runs; "
                    "--evals-fresh-baseline runs all of them fresh"
                )
            self.records = kept
        settled = reuse.settled(self.records, planned)
        self.messages += [line for line in (settled.headline(), settled.calls_line()) if line]
        return settled

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        """The harness's summary, after pytest's own (so it ends the output): per-case
        intervals and flake, the gates and the verdict."""
        result = yield
        if not self.worker and (self.result is not None or self.messages):
            self._summary(terminalreporter)
        return result

    def _summary(self, terminalreporter: Any) -> None:
        """The session's messages, then the harness's summary, which ends the output
        with its last block (verdict, gates, evaluation, store, next commands)."""
        terminalreporter.write_sep("=", "evals")
        for message in self.messages:
            terminalreporter.write_line(message)
        if self.result is not None:
            from evals.testing.evaluation import closing, terminal_text

            writer = getattr(terminalreporter, "_tw", None)
            on_terminal = bool(getattr(terminalreporter, "isatty", False))
            text = terminal_text(
                self.result,
                width=getattr(writer, "fullwidth", 100) if on_terminal else None,
                color=bool(getattr(terminalreporter, "hasmarkup", False)),
                closing=closing(self.result, self.session.settings),
            )
            terminalreporter.write(text)
        sys.stdout.flush()
