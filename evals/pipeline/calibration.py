"""Judge calibration end to end: grade a calibration file with the judge, measure agreement.

`evals calibrate FILE` prints the agreement; the judge gates of a suite
(`gates.judge_calibration` with `min_judge_kappa` / `min_judge_accuracy`) measure the
suite's judge the same way before an evaluation's gates are decided.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from evals.analysis.agreement import Agreement, tally
from evals.common.files import resolve_ref
from evals.grade.calibration import CalibrationFile, judge_calibration, load_calibration
from evals.model.gates import GateConfig


def calibrate(
    path: Path, grader: str | None = None, concurrency: int = 4
) -> tuple[CalibrationFile, list[Agreement]]:
    """Grade every item of a calibration file with its judge and measure agreement."""
    calibration = load_calibration(path)
    if grader:
        calibration.options["provider"] = grader
    verdicts = asyncio.run(judge_calibration(calibration, concurrency))
    return calibration, tally(verdicts)


# Agreements measured in this process, by calibration file (path, size, modification time)
# and judge: every look of an adaptive or staged run decides the judge gates, and each
# decides on the same measurement instead of calling the judge on the whole file again.
_MEASURED: dict[tuple[str, int, int, str], Agreement] = {}


def measure_judge(config: GateConfig, suite_root: Path, grader: Any = None) -> Agreement | None:
    """The judge's overall agreement with the humans of `config.judge_calibration`.

    Runs `calibrate` with `grader` (the suite's grader provider) replacing the file's, once
    per process for the same file and judge; None when no judge gate is configured.
    """
    if not config.judge_calibration:
        return None
    if config.min_judge_kappa is None and config.min_judge_accuracy is None:
        return None
    path = resolve_ref(config.judge_calibration, suite_root)
    stat = path.stat()
    key = (
        str(path),
        stat.st_size,
        stat.st_mtime_ns,
        json.dumps(grader, sort_keys=True, default=str),
    )
    if key not in _MEASURED:
        _, rows = calibrate(path, grader)
        _MEASURED[key] = rows[-1]
    return _MEASURED[key]
