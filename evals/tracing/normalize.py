"""Traces and transcripts, converted into the one `Step` trajectory model.

OpenTelemetry spans become steps here: GenAI semantic conventions (`gen_ai.operation.name`
chat / execute_tool, with OpenInference and OpenLLMetry attributes translated onto them by
`conventions`) and the tool attribute names promptfoo's trajectory assertions read
(`tool.name`, `function.arguments`, `ai.toolCall.name`, ...), ordered by start time.

Vendor transcripts are read by `evals.vendors` (OpenAI Chat Completions messages and
Responses items, Anthropic Messages); `to_steps` recognises any of them, or a list of
spans, by its shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from evals.model.trajectory import Step, StepKind
from evals.tracing import conventions, genai
from evals.vendors import anthropic, openai
from evals.vendors.messages import plain, read_arguments, read_value

# promptfoo's tool attribute families (src/tracing/toolAttributes.ts), in its order.
TOOL_NAME_KEYS = (
    "tool.name",
    "tool_name",
    "tool",
    "function.name",
    "function_name",
    "ai.toolCall.name",
    "gen_ai.tool.name",
    "agent.tool_name",
    "agent.tool",
    "agent.toolName",
    "codex.mcp.tool",
)
TOOL_ARGUMENT_KEYS = (
    *(f"tool{s}" for s in (".args", ".arguments", ".input", "_args", "_arguments", "_input")),
    *(f"function{s}" for s in (".args", ".arguments", ".input", "_args", "_arguments")),
    *(f"ai.toolCall{s}" for s in (".args", ".arguments", ".input")),
    *(f"gen_ai.tool{s}" for s in (".args", ".arguments", ".input")),
    "gen_ai.tool.call.args",
    "gen_ai.tool.call.arguments",
    *(f"agent.tool{s}" for s in (".args", ".arguments", ".input")),
    *(f"codex.mcp{s}" for s in (".args", ".arguments", ".input")),
    "args",
    "arguments",
    "input",
)
TOOL_RESULT_KEYS = (
    "gen_ai.tool.call.result",
    "tool.result",
    "tool.output",
    "tool_result",
    "tool_output",
    "function.result",
    "function.output",
    "ai.toolCall.result",
    "agent.tool.result",
)
_NAME_KEY = re.compile(r"tool.?name|function.?name", re.IGNORECASE)
_TOOL_KEY = re.compile(r"(^|[._])tool($|[._])", re.IGNORECASE)
_NOT_NAME_KEY = re.compile(r"result|output|definition", re.IGNORECASE)
_ARGS_KEY = re.compile(r"(^|[._])(arguments|args|input)($|[._])", re.IGNORECASE)
_NOT_ARGS_KEY = re.compile(r"result|output|error|status", re.IGNORECASE)


def _attributes(span: Mapping[str, Any]) -> Mapping[str, Any]:
    return span.get("attributes") or {}


def _first_string(attributes: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def span_tool_name(span: Mapping[str, Any]) -> str | None:
    """The tool a span executed, by promptfoo's rules (known keys, key shapes, `mcp` names)."""
    attributes = _attributes(span)
    direct = _first_string(attributes, TOOL_NAME_KEYS)
    if direct:
        return direct
    for key, value in attributes.items():
        if not isinstance(value, str) or not value.strip():
            continue
        if isinstance(read_value(value), (dict, list)):
            continue
        if _NAME_KEY.search(key):
            return value.strip()
        if _TOOL_KEY.search(key) and not _NOT_NAME_KEY.search(key):
            return value.strip()
    name = str(span.get("name", ""))
    if name.startswith("mcp ") and "/" in name[:-1]:
        return name[name.rindex("/") + 1 :].strip()
    return None


def span_tool_arguments(span: Mapping[str, Any]) -> Any:
    """A tool span's arguments by promptfoo's key order (usage counts are never arguments)."""
    attributes = _attributes(span)
    for key in TOOL_ARGUMENT_KEYS:
        value = read_value(attributes.get(key))
        if value is not None:
            return value
    for key, raw in attributes.items():
        if key.startswith("gen_ai.usage.") or _NOT_ARGS_KEY.search(key):
            continue
        if _ARGS_KEY.search(key):
            value = read_value(raw)
            if value is not None:
                return value
    return None


def step_kind_of_span(span: Mapping[str, Any]) -> StepKind | None:
    """The step a span stands for: model, tool, approval, message, or None (not a step)."""
    attributes = _attributes(conventions.genai_view(span))
    operation = attributes.get(genai.OPERATION)
    if operation in genai.MODEL_OPERATIONS:
        return "model"
    if operation == genai.EXECUTE_TOOL:
        return "tool"
    kind = attributes.get(genai.STEP_KIND)
    if kind in ("approval", "message"):
        return kind
    if operation is None and span_tool_name(span):
        return "tool"
    return None


def _times(span: Mapping[str, Any]) -> tuple[float | None, float | None]:
    if "start_ns" in span:
        start, end = span.get("start_ns"), span.get("end_ns")
        return (
            None if start is None else start / 1e9,
            None if end is None else end / 1e9,
        )
    start, end = span.get("startTime"), span.get("endTime")
    return (
        None if start is None else start / 1e3,
        None if end is None else end / 1e3,
    )


def _span_error(span: Mapping[str, Any]) -> str | None:
    status = span.get("status") or {}
    code = status.get("code") if isinstance(status, dict) else None
    message = status.get("message") if isinstance(status, dict) else None
    if code is None and "statusCode" in span:
        code, message = span.get("statusCode"), span.get("statusMessage")
    if code not in ("ERROR", 2):
        return None
    return message or str(_attributes(span).get(genai.ERROR_TYPE) or "error")


def _span_step(span: Mapping[str, Any], kind: StepKind) -> Step:
    attributes = _attributes(span)
    started, ended = _times(span)
    step = Step(kind=kind, name="", started_at=started, ended_at=ended, error=_span_error(span))
    step.input_tokens = attributes.get(genai.INPUT_TOKENS)
    step.output_tokens = attributes.get(genai.OUTPUT_TOKENS)
    step.cost = attributes.get(genai.STEP_COST)
    step.effect = attributes.get(genai.STEP_EFFECT)
    step.approval = attributes.get(genai.STEP_APPROVAL)
    step.call_id = attributes.get(genai.TOOL_CALL_ID)
    if kind == "model":
        step.name = str(
            attributes.get(genai.REQUEST_MODEL)
            or attributes.get(genai.RESPONSE_MODEL)
            or span.get("name", "")
        )
    elif kind == "tool":
        genai_name = attributes.get(genai.TOOL_NAME)
        step.name = (
            genai_name
            if isinstance(genai_name, str) and genai_name
            else span_tool_name(span) or str(span.get("name", ""))
        )
    else:
        step.name = str(attributes.get(genai.STEP_NAME) or span.get("name", ""))
    raw_arguments = (
        span_tool_arguments(span) if kind == "tool" else attributes.get(genai.TOOL_ARGUMENTS)
    )
    arguments = read_arguments(raw_arguments)
    step.arguments = arguments.value
    if arguments.value is None and arguments.raw is not None:
        step.metadata["raw_arguments"] = arguments.raw
    result = next((attributes[k] for k in TOOL_RESULT_KEYS if attributes.get(k) is not None), None)
    step.result = read_value(result)
    span_id = span.get("span_id") or span.get("spanId")
    if span_id:
        step.metadata["span_id"] = span_id
    return step


def trajectory_from_spans(spans: Iterable[Mapping[str, Any]]) -> list[Step]:
    """Steps from the model, tool, approval and message spans of a trace, by start time.

    Ties are broken by end time, then by the order the spans were given (as promptfoo
    does); spans that are not steps (the run span, grading) are skipped. Accepts the
    stored span dicts and promptfoo's span shape (`startTime` in ms, `statusCode`).
    """
    translated = conventions.translate(spans)
    indexed = list(enumerate(translated))

    def order(item: tuple[int, Mapping[str, Any]]) -> tuple[float, float, int]:
        start, end = _times(item[1])
        start = start if start is not None else 0.0
        return (start, end if end is not None else start, item[0])

    steps = []
    for _, span in sorted(indexed, key=order):
        kind = step_kind_of_span(span)
        if kind is not None:
            steps.append(_span_step(span, kind))
    return conventions.add_requested_calls(translated, steps)


def to_steps(data: Any) -> list[Step]:
    """Steps from a transcript in any supported format, recognised by its shape."""
    items = [plain(x) for x in data]
    dicts = [x for x in items if isinstance(x, dict)]
    if any("span_id" in x or "spanId" in x for x in dicts):
        return trajectory_from_spans(dicts)
    if any(
        x.get("type") in ("function_call", "function_call_output", "reasoning")
        or x.get("object") == "response"
        for x in dicts
    ):
        return openai.responses_steps(dicts)
    for x in dicts:
        content = x.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return anthropic.message_steps(dicts)
    return openai.chat_steps(dicts)
