"""The support desk instrumented with OpenLLMetry (Traceloop): the OpenAI SDK by
`opentelemetry-instrumentation-openai`. Only model calls are spans; the harness reads the
tool calls each model call requested, and the results the next call sent back, from them.
Run by the suite as `exec: python openllmetry_agent.py [--candidate]`."""

from __future__ import annotations

import sys

from desk import Wrap, main
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider


def instrument(provider: TracerProvider) -> Wrap:
    """Instrument the OpenAI SDK; tools are left as they are."""
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    return lambda fn: fn


if __name__ == "__main__":
    main(sys.argv, "openllmetry-desk", instrument)
