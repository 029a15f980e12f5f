"""Every agent transcript format, converted into the one `Step` trajectory model.

Pure functions over plain data (SDK objects are accepted through their `model_dump`):

- OpenAI Chat Completions messages: assistant `tool_calls` and `tool` role results;
- OpenAI Responses items: `function_call` and `function_call_output`;
- Anthropic Messages: `tool_use` and `tool_result` blocks, parallel calls and `is_error`;
- OpenTelemetry spans: GenAI semantic conventions (`gen_ai.operation.name` chat /
  execute_tool) and the tool attribute names promptfoo's trajectory assertions read
  (`tool.name`, `function.arguments`, `ai.toolCall.name`, ...), ordered by start time.

Each model call becomes a `model` step followed by the `tool` steps it requested; tool
steps carry `metadata["turn"]`, the index of the model call that asked for them, so
parallel calls of one turn stay recognisable. A tool result that is an object with a
non-empty `error` field is an error (tools return errors as data).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from evals.model.trajectory import Step, StepKind
from evals.tracing import conventions, genai

_DEFAULT_MODEL = "assistant"

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


def _plain(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    return dump() if callable(dump) else obj


def _structured(value: Any) -> Any:
    """promptfoo's normalizeStructuredAttribute: JSON strings become data, blanks None."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text
    return value


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Arguments as a dict, plus metadata keeping what could not be parsed."""
    value = _structured(raw)
    if value is None or isinstance(value, dict):
        return value, {}
    if isinstance(raw, str) and isinstance(value, str):
        return None, {"raw_arguments": raw}
    return {"input": value}, {}


def _content_text(content: Any) -> Any:
    if isinstance(content, list):
        texts = [
            str(part.get("text", ""))
            for part in map(_plain, content)
            if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text")
        ]
        return "".join(texts) if texts else content
    return content


def _outcome(content: Any, is_error: bool = False) -> tuple[Any, str | None]:
    """(result, error) of a tool result payload."""
    value = _structured(_content_text(content))
    if is_error:
        return None, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict) and value.get("error"):
        error = value["error"]
        return None, error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    return value, None


def _tool_step(name: str, raw_arguments: Any, call_id: str | None, turn: int) -> Step:
    arguments, metadata = _arguments(raw_arguments)
    return Step(
        kind="tool",
        name=name,
        arguments=arguments,
        call_id=call_id,
        metadata={"turn": turn, **metadata},
    )


def _model_step(name: str, usage: Any, input_key: str, output_key: str, text: Any) -> Step:
    usage = _plain(usage) or {}
    metadata = {"text": text} if isinstance(text, str) and text else {}
    return Step(
        kind="model",
        name=name,
        input_tokens=usage.get(input_key),
        output_tokens=usage.get(output_key),
        metadata=metadata,
    )


def from_openai_chat(messages: Iterable[Any], model: str | None = None) -> list[Step]:
    """Steps from Chat Completions messages (a completion object counts as its message)."""
    steps: list[Step] = []
    calls: dict[str, Step] = {}
    turn = -1
    for raw in map(_plain, messages):
        message, usage, name = raw, None, model
        if "choices" in raw:
            message = _plain(raw["choices"][0]["message"])
            usage, name = raw.get("usage"), raw.get("model") or model
        role = message.get("role")
        if role == "assistant":
            turn += 1
            text = _content_text(message.get("content"))
            steps.append(
                _model_step(
                    name or _DEFAULT_MODEL, usage, "prompt_tokens", "completion_tokens", text
                )
            )
            for call in map(_plain, message.get("tool_calls") or []):
                function = _plain(call.get("function")) or {}
                step = _tool_step(
                    function.get("name", ""), function.get("arguments"), call.get("id"), turn
                )
                steps.append(step)
                calls[str(call.get("id"))] = step
        elif role == "tool":
            step = calls.pop(str(message.get("tool_call_id")), None)
            if step is not None:
                step.result, step.error = _outcome(message.get("content"))
    return steps


def from_openai_responses(items: Iterable[Any], model: str | None = None) -> list[Step]:
    """Steps from Responses API items; a response object contributes its `output` items."""
    steps: list[Step] = []
    calls: dict[str, Step] = {}
    state = {"turn": -1, "open": False}

    def open_turn(name: str | None, usage: Any = None) -> None:
        state["turn"] += 1
        state["open"] = True
        steps.append(
            _model_step(
                name or model or _DEFAULT_MODEL, usage, "input_tokens", "output_tokens", None
            )
        )

    def take(item: dict[str, Any]) -> None:
        kind = item.get("type", "message")
        assistant_side = kind in ("function_call", "reasoning") or (
            kind == "message" and item.get("role") == "assistant"
        )
        if assistant_side and not state["open"]:
            open_turn(None)
        if kind == "message" and item.get("role") == "assistant":
            text = _content_text(item.get("content"))
            if isinstance(text, str) and text:
                steps[-1].metadata.setdefault("text", text)
        elif kind == "function_call":
            call_id = item.get("call_id") or item.get("id")
            step = _tool_step(item.get("name", ""), item.get("arguments"), call_id, state["turn"])
            steps.append(step)
            calls[str(call_id)] = step
        elif not assistant_side:
            state["open"] = False
            if kind == "function_call_output":
                step = calls.pop(str(item.get("call_id")), None)
                if step is not None:
                    step.result, step.error = _outcome(item.get("output"))

    for raw in map(_plain, items):
        if "output" in raw and raw.get("type") != "function_call_output":
            open_turn(raw.get("model"), raw.get("usage"))
            for item in map(_plain, raw["output"]):
                take(item)
            state["open"] = False
        else:
            take(raw)
    return steps


def from_anthropic(messages: Iterable[Any], model: str | None = None) -> list[Step]:
    """Steps from Anthropic Messages: `tool_use` blocks (several per turn run in parallel)
    and `tool_result` blocks with `is_error`."""
    steps: list[Step] = []
    calls: dict[str, Step] = {}
    turn = -1
    for message in map(_plain, messages):
        content = message.get("content")
        blocks = [_plain(b) for b in content] if isinstance(content, list) else []
        if message.get("role") == "assistant":
            turn += 1
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            if isinstance(content, str):
                text = content
            name = message.get("model") or model or _DEFAULT_MODEL
            step = _model_step(name, message.get("usage"), "input_tokens", "output_tokens", text)
            if message.get("stop_reason"):
                step.metadata["stop_reason"] = message["stop_reason"]
            steps.append(step)
            for block in blocks:
                if block.get("type") == "tool_use":
                    tool = _tool_step(
                        block.get("name", ""), block.get("input"), block.get("id"), turn
                    )
                    steps.append(tool)
                    calls[str(block.get("id"))] = tool
        else:
            for block in blocks:
                if block.get("type") == "tool_result":
                    tool = calls.pop(str(block.get("tool_use_id")), None)
                    if tool is not None:
                        is_error = bool(block.get("is_error"))
                        tool.result, tool.error = _outcome(block.get("content"), is_error)
    return steps


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
        if isinstance(_structured(value), (dict, list)):
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
        value = _structured(attributes.get(key))
        if value is not None:
            return value
    for key, raw in attributes.items():
        if key.startswith("gen_ai.usage.") or _NOT_ARGS_KEY.search(key):
            continue
        if _ARGS_KEY.search(key):
            value = _structured(raw)
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
    step.arguments, metadata = _arguments(raw_arguments)
    step.metadata.update(metadata)
    result = next((attributes[k] for k in TOOL_RESULT_KEYS if attributes.get(k) is not None), None)
    step.result = _structured(result)
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
    items = [_plain(x) for x in data]
    dicts = [x for x in items if isinstance(x, dict)]
    if any("span_id" in x or "spanId" in x for x in dicts):
        return trajectory_from_spans(dicts)
    if any(
        x.get("type") in ("function_call", "function_call_output", "reasoning")
        or x.get("object") == "response"
        for x in dicts
    ):
        return from_openai_responses(dicts)
    for x in dicts:
        content = x.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return from_anthropic(dicts)
    return from_openai_chat(dicts)
