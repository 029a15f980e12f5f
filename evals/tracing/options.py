"""Whether and how an evaluation is traced, from the suite's `trace:` block and the environment.

Default ("auto"): tracing is on when any agent runs out of process or over the network
(`exec:`, `http(s)`, `openai:`, `anthropic:`), where a run already costs milliseconds, or
when an OTLP backend is configured through `OTEL_EXPORTER_OTLP_*`. Suites of in-process
Python agents are not traced unless `trace: {enabled: true}` (or `--trace`) asks for it, so
their runs pay nothing. The OTLP receiver runs only when some agent is out of process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evals.common.files import FILE_PREFIX
from evals.model.errors import SuiteError

if TYPE_CHECKING:
    from evals.model.suite import ProviderSpec

IN_PROCESS_PREFIXES = ("echo", "python:", FILE_PREFIX)
OUT_OF_PROCESS_PREFIXES = ("exec:", "http:", "https:")
OTLP_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


@dataclass(slots=True)
class TraceOptions:
    """The decided tracing setup of one evaluation."""

    enabled: bool
    receiver: bool
    export: bool
    redact: list[str] = field(default_factory=list)
    secrets: frozenset[str] = frozenset()


def _is_in_process(spec: ProviderSpec) -> bool:
    return spec.id.startswith(IN_PROCESS_PREFIXES)


def _is_out_of_process(spec: ProviderSpec) -> bool:
    return spec.id == "http" or spec.id.startswith(OUT_OF_PROCESS_PREFIXES)


def otlp_export_configured(environ: Mapping[str, str] | None = None) -> bool:
    """True when the standard OTLP endpoint variables point at a backend."""
    env = os.environ if environ is None else environ
    return any(env.get(name) for name in OTLP_ENDPOINT_VARIABLES)


def _trace_block(raw: Mapping[str, Any]) -> dict[str, Any]:
    block = raw.get("trace")
    if block is None:
        return {}
    if isinstance(block, bool):
        return {"enabled": block}
    if not isinstance(block, dict):
        raise SuiteError("`trace:` must be a mapping such as {enabled: true, redact: [...]}")
    redact = block.get("redact", [])
    if not isinstance(redact, list) or not all(isinstance(p, str) for p in redact):
        raise SuiteError("`trace.redact` must be a list of attribute-key patterns")
    return block


def decide_trace_options(
    providers: list[ProviderSpec],
    suite_raw: Mapping[str, Any],
    enabled: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> TraceOptions:
    """Tracing setup for these agents: an explicit `enabled` wins over the suite, then auto."""
    block = _trace_block(suite_raw)
    export = otlp_export_configured(environ)
    choice = enabled if enabled is not None else block.get("enabled")
    if choice is None:
        choice = export or not all(_is_in_process(p) for p in providers)
    on = bool(choice)
    return TraceOptions(
        enabled=on,
        receiver=on and any(_is_out_of_process(p) for p in providers),
        export=on and export,
        redact=list(block.get("redact", [])),
    )
