"""OpenTelemetry traces of runs: one trace per run, stored with the run, redacted.

`run_tracer` is the entry point an evaluation wraps its runs in. When tracing is off it
yields a `NullTracer` and OpenTelemetry is not even imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from evals.tracing.null import NULL_TRACER, NullRunTrace, NullTracer
from evals.tracing.options import TraceOptions, decide_trace_options
from evals.tracing.redact import Redactor

if TYPE_CHECKING:
    from evals.model.evaluation import EvaluationMeta
    from evals.model.suite import Suite
    from evals.tracing.sdk import RunTracer

__all__ = [
    "NULL_TRACER",
    "NullRunTrace",
    "NullTracer",
    "Redactor",
    "TraceOptions",
    "decide_trace_options",
    "run_tracer",
]


@contextmanager
def run_tracer(
    suite: Suite, meta: EvaluationMeta, enabled: bool | None = None
) -> Iterator[RunTracer | NullTracer]:
    """The tracer of one evaluation of `suite` (`meta` is its EvaluationMeta).

    `enabled` (the `--trace/--no-trace` choice) overrides the suite's `trace.enabled`;
    left None, the default described in `evals.tracing.options` applies.
    """
    options = replace(
        decide_trace_options(suite.providers, suite.raw, enabled), secrets=suite.secrets
    )
    if not options.enabled:
        yield NULL_TRACER
        return
    from evals.tracing.sdk import open_run_tracer

    with open_run_tracer(
        options, suite_id=suite.suite_id, suite_version=suite.version, evaluation_id=meta.id
    ) as tracer:
        yield tracer
