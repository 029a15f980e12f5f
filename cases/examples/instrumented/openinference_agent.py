"""The support desk instrumented with OpenInference: the OpenAI SDK by
`openinference-instrumentation-openai` (LLM spans) and each tool by OpenInference's
`@tracer.tool` decorator (TOOL spans). Run by the suite as
`exec: python openinference_agent.py [--candidate]`."""

from __future__ import annotations

import sys

from desk import Wrap, main
from openinference.instrumentation import OITracer, TraceConfig
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider


def instrument(provider: TracerProvider) -> Wrap:
    """Instrument the OpenAI SDK; the returned decorator makes each tool a TOOL span."""
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = OITracer(provider.get_tracer(__name__), config=TraceConfig())
    return tracer.tool


if __name__ == "__main__":
    main(sys.argv, "openinference-desk", instrument)
