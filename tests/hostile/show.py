"""Run corpus cases by id and show what evals did: `python -m tests.hostile.show ID...`.

Each case runs as the `evals` command (whatever its mode) in a fresh temporary directory,
with the hostile HTTP endpoint up; the exit code, the end of stderr, the last exception
line and the stored evaluations and runs are printed. For diagnosing a case, not a test.
"""

from __future__ import annotations

import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from tests.hostile.corpus import CASES
from tests.hostile.harness import make_workspace, run_setup, run_subprocess
from tests.hostile.server import hostile_server

_EXCEPTION = re.compile(r"^\w[\w.]*(Error|Exception|Exit|Interrupt|Fault)\b.*$", re.MULTILINE)


def show(case_id: str, url: str) -> None:
    """Run one case and print its outcome."""
    matches = [c for c in CASES if case_id in (c.id, f"{c.category}/{c.id}")]
    if not matches:
        print(f"no case {case_id!r}")
        return
    case = replace(matches[0], mode="subprocess")
    with tempfile.TemporaryDirectory() as tmp:
        ws = make_workspace(Path(tmp), case, url)
        if case.setup is not None:
            case.setup(ws, lambda *argv: run_setup(ws, *argv, env=case.env))
        outcome = run_subprocess(case, ws)
        print(
            f"== {case.category}/{case.id}: exit {outcome.code} in {outcome.seconds:.1f} s"
            f"{' (killed)' if outcome.timed_out else ''}; expected {case.expect.describe()}"
        )
        found = [m.group(0) for m in _EXCEPTION.finditer(outcome.stderr)]
        if found:
            print(f"   last exception: {found[-1][:300]}")
        print(f"   stderr end: {outcome.stderr[-600:]!r}")
        for evaluation in outcome.evaluations():
            print(
                f"   evaluation {evaluation['id']}: {evaluation['status']} {evaluation['verdict']}"
            )
        for run in outcome.runs():
            print(
                f"   run {run['agent']}#{run['repeat']}: {run['status']} {run['error_kind']} "
                f"{str(run['error'])[:200]!r}"
            )


def main(ids: list[str]) -> None:
    """Show each case named on the command line."""
    with hostile_server() as url:
        for case_id in ids:
            show(case_id, url)


if __name__ == "__main__":
    main(sys.argv[1:])
