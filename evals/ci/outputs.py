"""The files every `evals ci` job leaves: reports per comparison, summary, comment, JSON.

A CI job's verdict is the worst of its comparisons' verdicts. Its Markdown summary goes
to `summary.md` and, in GitHub Actions, to the job summary ($GITHUB_STEP_SUMMARY); the
pull request's sticky comment to `comment.md`; the outcome as JSON to `ci.json`; each
comparison to `<name>.html`, `<name>.junit.xml` (published as a check) and `<name>.json`.
A job stopped by an error (exit 2 or 3) writes the summary, the comment and `ci.json`
all the same, saying what went wrong and what to do, so the comment a pull request
shows is never the verdict of an earlier push.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import orjson

from evals.model.ci import CiKind, CiOutcome
from evals.model.errors import ExitCode, SuiteError
from evals.model.evaluation import EvaluationResult

REPORT_SUFFIXES = (".html", ".junit.xml", ".json")


def overall_verdict(results: Sequence[EvaluationResult], rule: bool = True) -> str:
    """fail if any comparison failed, else undetermined if any is, else pass: with `rule`
    each comparison's verdict under its environment's rule (`GateReport.outcome`; a pull
    request's comparison passes unless a loss beyond its tolerance is shown), else what its
    data show (`GateReport.verdict`, as a stage of a staged job reports it)."""
    verdicts = {result.gates.outcome if rule else result.gates.verdict for result in results}
    for verdict in ("fail", "undetermined"):
        if verdict in verdicts:
            return verdict
    return "pass"


def exit_code(results: Sequence[EvaluationResult]) -> int:
    """1 when a comparison's build does not pass (`GateReport.passed`, which decides how an
    undetermined verdict counts), else 0."""
    return int(ExitCode.OK if all(r.gates.passed for r in results) else ExitCode.GATE_FAILED)


def undetermined_note(results: Sequence[EvaluationResult]) -> str | None:
    """How the undetermined blocking gates count, in one sentence; None when there are none."""
    names = [
        f"{gate.name} ({result.meta.agents[-1] if result.meta.agents else result.meta.id})"
        for result in results
        for gate in result.gates.gates
        if gate.blocking and gate.status == "undetermined"
    ]
    if not names:
        return None
    failed = [
        gate.name
        for result in results
        for gate in result.gates.gates
        if gate.blocking and gate.status == "fail"
    ]
    if failed:
        effect = f"the build fails on {', '.join(failed)} whatever they would say"
    elif all(result.gates.passed for result in results):
        effect = "they do not fail the build"
    else:
        effect = "the build fails on them"
    return (
        f"undetermined gate(s): {', '.join(names)}: the data cannot tell either way; {effect}; "
        "more repeats (`--until-decided`, or the repeats `evals plan` suggests) would decide them"
    )


def write_outputs(outcome: CiOutcome, out: Path, names: Sequence[str]) -> None:
    """Write the job's reports, summary, comment and JSON into `out`."""
    write_result_reports(outcome.results, out, names)
    write_job_files(outcome, out)


def write_result_reports(
    results: Sequence[EvaluationResult], out: Path, names: Sequence[str]
) -> None:
    """Write each result's reports into `out` as `NAME.html`, `.junit.xml` and `.json`
    (the runs read from the store, which must still hold them)."""
    from evals.reports import write_report

    out.mkdir(parents=True, exist_ok=True)
    for name, result in zip(names, results, strict=True):
        for suffix in REPORT_SUFFIXES:
            write_report(out / f"{name}{suffix}", result)


def write_job_files(outcome: CiOutcome, out: Path) -> None:
    """Write the job's summary, comment and JSON into `out` (and the job summary)."""
    from evals.reports.ci import render_ci_comment, render_ci_summary

    out.mkdir(parents=True, exist_ok=True)
    summary = render_ci_summary(outcome)
    (out / "summary.md").write_text(summary, encoding="utf-8")
    if outcome.kind == "pr":
        (out / "comment.md").write_text(render_ci_comment(outcome), encoding="utf-8")
    (out / "ci.json").write_bytes(orjson.dumps(outcome.to_dict(), option=orjson.OPT_INDENT_2))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(summary + "\n")


# What a reader does about a job that could not decide, by exit code.
NEXT_STEPS = {
    int(ExitCode.INVALID_INPUT): (
        "the suite, an agent or the job's input could not be used as given (at the pull "
        "request's head, or main's suite at the merge base); this is not a verdict on the "
        "agent. Reproduce it with `evals validate SUITE` in a checkout of the branch, fix the "
        "error above and push: the job runs again"
    ),
    int(ExitCode.HARNESS_FAULT): (
        "a fault of the job's environment or of evals, not a verdict on the agent. Re-run the "
        "job; if it recurs, report it with the workflow log"
    ),
}


def error_outcome(kind: CiKind, suite: str, error: BaseException, run_url: str | None) -> CiOutcome:
    """The outcome of a job stopped by `error`: exit 2 for a SuiteError, else 3."""
    code = int(ExitCode.INVALID_INPUT if isinstance(error, SuiteError) else ExitCode.HARNESS_FAULT)
    message = str(error).strip() or type(error).__name__
    first, _, rest = message.partition("\n")
    notes = [f"error: {first}"]
    if rest.strip():
        notes.append(" ".join(line.strip() for line in rest.splitlines() if line.strip()))
    notes.append(f"what to do: {NEXT_STEPS[code]}")
    return CiOutcome(
        kind=kind,
        suite_id=suite,
        verdict="error",
        exit_code=code,
        notes=notes,
        title="no verdict, the job stopped on an error",
        run_url=run_url,
    )
