"""Where planned runs execute: in this process (the default) or as tasks on a Ray cluster.

Every executor takes the same planned runs and hands back the same graded records
through `on_record`, so the store, statistics and gates do not know where runs ran.
"""

from __future__ import annotations

import os
from pathlib import Path

from evals.common.extras import require_extra
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationMeta
from evals.model.protocols import Executor, Tracer
from evals.model.suite import Suite
from evals.run.local import LocalExecutor

EXECUTORS = ("local", "ray")


def check_executor(name: str, suite: Suite, pass_env: list[str] | None) -> tuple[str, ...]:
    """The variables the executor `name` hands to its workers (the suite's `pass_env:`
    and `pass_env`); a SuiteError (exit code 2, before any run) when the executor's extra
    is missing or a named variable is not set here."""
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
    if name != "ray":
        return ()
    require_extra("ray", "--executor ray")
    names = tuple(dict.fromkeys([*suite.pass_env, *(pass_env or [])]))
    missing = [n for n in names if n not in os.environ]
    if missing:
        raise SuiteError(
            f"pass_env names {', '.join(missing)}, not set in this environment",
            file=str(suite.path),
            fix="export the variable before running, or leave it out of pass_env",
        )
    return names


def build_executor(
    name: str,
    suite: Suite,
    *,
    meta: EvaluationMeta,
    concurrency: int,
    timeout_s: float | None,
    tracer: Tracer,
    trace: bool | None = None,
    cache_path: Path | None = None,
    ray_address: str | None = None,
    pass_env: list[str] | None = None,
) -> Executor:
    """The executor called `name` (`local` or `ray`) for one evaluation of `suite`.

    The local executor traces runs with `tracer`; Ray workers open their own tracer for
    the evaluation `meta` with the same `trace` choice, since a tracer cannot travel.
    Ray workers receive the variables the suite's `pass_env:` and `pass_env` name; each
    must be set here (a SuiteError otherwise, before any run).
    """
    names = check_executor(name, suite, pass_env)
    if name == "ray":
        from evals.run.ray_executor import RayExecutor

        return RayExecutor(
            suite,
            meta=meta,
            concurrency=concurrency,
            timeout_s=timeout_s,
            trace=trace,
            cache_path=cache_path,
            address=ray_address,
            pass_env=names,
        )
    return LocalExecutor(
        suite, concurrency=concurrency, timeout_s=timeout_s, tracer=tracer, cache_path=cache_path
    )
