"""A pytest session's runs as one evaluation: the suite, statistics, gates, store, reports.

The marked tests are the suite's cases, the session's agents its providers, and the
suite file (when there is one) its gates and settings. The records are analysed and
gated by the same functions `evals run` calls (`evals.pipeline.evaluation.analyse`), the
verdict read as `evals run` reads it (`evals.pipeline.verdict`), the runs stored through
the same store process, in one evaluation per session, and reports written by the same
writers, so history, `evals compare`, the reports and the dashboard read a pytest
evaluation like any other.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.model.results import RunRecord
from evals.model.suite import Case, EvaluateOptions, Prompt, Suite
from evals.model.summary import BaselineReuse
from evals.testing.settings import Settings

if TYPE_CHECKING:
    from evals.reports.closing import Closing

PROMPT = Prompt(id="pytest", label="pytest", raw="{{prompt}}")


@dataclass(slots=True)
class Outline:
    """What collection learnt of the suite: its cases in order and its content's fingerprint.

    Travels from a pytest-xdist worker to the controller as JSON.
    """

    cases: list[Case]
    fingerprint: str
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The outline as JSON."""
        return {
            "cases": [
                {"id": c.id, "description": c.description, "metadata": c.metadata}
                for c in self.cases
            ],
            "fingerprint": self.fingerprint,
            "files": self.files,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outline:
        """Rebuild an outline from `to_dict` output."""
        cases = [
            Case(index, str(c["id"]), str(c["description"]), {}, [], metadata=c["metadata"])
            for index, c in enumerate(data["cases"])
        ]
        return cls(cases, str(data["fingerprint"]), list(data.get("files") or []))


def fingerprint_files(test_files: list[Path], rootdir: Path, settings: Settings) -> list[Path]:
    """Every file the evaluation's content depends on: the test modules, the conftest.py
    files above them (up to the rootdir), their local imports, the suite file and what it
    references, and the recorded cases of `evals.testing.cases_from`."""
    from evals.suite.fingerprint import expand_python_imports
    from evals.testing.generated import recorded_files

    files = set(test_files) | set(settings.files) | set(recorded_files())
    root = rootdir.resolve()
    for test_file in test_files:
        for folder in test_file.resolve().parents:
            if (folder / "conftest.py").is_file():
                files.add(folder / "conftest.py")
            if folder == root or root not in folder.parents:
                break
    return expand_python_imports(sorted(files))


def suite_of(settings: Settings, outline: Outline) -> Suite:
    """The suite a session evaluated, as the harness's reports and statistics read it."""
    return Suite(
        path=settings.path,
        suite_id=settings.suite_id,
        description=settings.description,
        version=settings.version,
        prompts=[PROMPT],
        providers=list(settings.agents),
        cases=outline.cases,
        evaluate_options=EvaluateOptions(repeat=settings.repeat or settings.default_repeat),
        gates=settings.gates,
        env={},
        raw=settings.suite_config,
        files=[Path(f) for f in outline.files],
        fingerprint=outline.fingerprint,
    )


def evaluate(
    settings: Settings,
    outline: Outline,
    records: list[RunRecord],
    *,
    started_at: float,
    args: list[str],
    reuse: BaselineReuse | None = None,
) -> EvaluationResult:
    """The evaluation of a session's records: metadata, statistics and gate decisions.

    The records are put in the order of `evals run`'s plan (repeat, case, agent), so
    every report lists them the same way whatever order the tests ran in. With a stored
    baseline standing in (`reuse`), the gates spend what `evals run` spends then.
    """
    from evals.pipeline.calibration import measure_judge
    from evals.pipeline.evaluation import analyse, new_meta

    suite = suite_of(settings, outline)
    gate_config = suite.gates.for_environment(settings.environment)
    repeat = suite.evaluate_options.repeat
    options = RunOptions(
        repeat=repeat,
        tags=settings.tags,
        environment=settings.environment,
        seed=settings.salt,
        store_url=settings.store_url,
        use_store=settings.use_store,
    )
    meta = new_meta(suite, options, repeat)
    meta.started_at = started_at
    meta.config["runner"] = "pytest"
    meta.config["pytest_args"] = list(args)
    meta.config["suite_file"] = meta.config.pop("suite_path")  # not a suite `evals` can load
    ordered = sorted(records, key=lambda r: (r.key.repeat, r.case_index, r.agent_index))
    grader = settings.case_options.get("provider")
    judge = measure_judge(gate_config, suite.root, grader)
    summary, gates = analyse(suite, ordered, gate_config, settings.environment, judge, reuse=reuse)
    gates.reuse = reuse
    meta.ended_at = time.time()
    meta.status = "complete"
    return EvaluationResult(suite, meta, ordered, summary, gates, gate_config, repeat)


def store(result: EvaluationResult, url: str | None) -> None:
    """Write the evaluation to the results store, once: its metadata, every run, and
    its statistics and gates. A store failure raises the harness's HarnessFault."""
    from evals.store.process import StoreProcess

    process = StoreProcess(url)
    try:
        process.begin(result.meta, create=True)
        process.add_group(result.records)
        process.finish(result.meta, result.summary, result.gates)
    finally:
        process.close()


def write_reports(result: EvaluationResult, outputs: list[Path]) -> None:
    """Write each report file, its format chosen by its extension as in `evals run -o`."""
    from evals.reports import write_report

    for out in outputs:
        write_report(out, result)


def terminal_text(
    result: EvaluationResult, width: int | None, color: bool, closing: Closing | None = None
) -> str:
    """The harness's terminal summary (per-case table, tags, gates, and the last block
    `closing` describes) as text; `width` None is output that is no terminal (a CI log):
    COLUMNS when set, else as wide as the rows."""
    from rich.console import Console

    from evals.reports import render_terminal
    from evals.reports.terminal import log_width

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width or log_width(),
        force_terminal=color,
        color_system="standard" if color else None,
    )
    render_terminal(result, console, closing)
    return buffer.getvalue()


def closing(result: EvaluationResult, settings: Settings) -> Closing:
    """The facts of the summary's last block: the store the session's evaluation went to
    (named again by `--store` in the commands shown when the session chose it: neither
    `evals compare` nor the dashboard reads pytest's settings), and promptfoo's rule for
    a suite without gates."""
    from evals.pipeline.verdict import rule_sentence
    from evals.reports.closing import Closing
    from evals.store.location import display_location, without_password

    rule = rule_sentence(result)
    if not settings.use_store:
        return Closing(rule=rule)
    chosen = settings.store_url
    return Closing(
        store=display_location(chosen),
        store_option=without_password(chosen) if chosen else None,
        rule=rule,
    )
