"""OpenInference and OpenLLMetry (Traceloop) span attributes, re-expressed as GenAI ones.

Instrumented apps emit one of three attribute conventions for the same model and tool
calls. The normalizer reads the OpenTelemetry GenAI semantic conventions; this module
translates the other two onto them, so any instrumentation gives one trajectory:

- **OpenInference** (`openinference.span.kind`): `LLM` spans become `chat` (model from
  `llm.model_name`, tokens from `llm.token_count.prompt`/`completion`, requested tool calls
  from `llm.output_messages.*.message.tool_calls.*`, tool results the next call received
  from `llm.input_messages.*` with role `tool`); `TOOL` spans become `execute_tool` (name
  `tool.name`, arguments from `input.value` (`tool.parameters` is the tool's schema),
  result `output.value`,
  call id `tool.id`); `AGENT` is `invoke_agent`; other kinds (CHAIN, RETRIEVER, ...) are
  not steps.
- **OpenLLMetry** (`traceloop.span.kind`, `llm.request.type`): `tool` spans become
  `execute_tool` (name `traceloop.entity.name`, arguments and result unwrapped from
  `traceloop.entity.input`/`output`); LLM spans use the GenAI names or the legacy ones
  (`gen_ai.usage.prompt_tokens`, `llm.usage.*`, `gen_ai.completion.N.tool_calls.M.*`,
  `gen_ai.prompt.N.*`); `task`/`workflow` spans are not steps.

Requested tool calls and the tool results sent back are written as
`gen_ai.output.messages` and `gen_ai.input.messages` (GenAI message JSON), which
`add_requested_calls` reads when a trace has model spans but no tool spans (an app that
instruments only its model client). LangChain tool messages serialized into span values
are unwrapped to their content, with status `error` as the error. A model span nested in
another model span (two instrumentors on one call) is dropped.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evals.model.trajectory import Step
from evals.tracing import genai
from evals.vendors.messages import read_arguments, read_value

OI_KIND = "openinference.span.kind"
TL_KIND = "traceloop.span.kind"
TL_REQUEST_TYPE = "llm.request.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TRANSLATED = "evals.conventions.translated"
_TOOL_ERROR = "evals.conventions.tool_error"

_OI_OPERATIONS = {"LLM": genai.CHAT, "TOOL": genai.EXECUTE_TOOL, "AGENT": "invoke_agent"}
_TL_OPERATIONS = {"tool": genai.EXECUTE_TOOL, "agent": "invoke_agent"}


def _first(attributes: Mapping[str, Any], *keys: str) -> Any:
    return next((attributes[k] for k in keys if attributes.get(k) not in (None, "")), None)


def _indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.0.a.b = x` attributes as a list of nested dicts, by index."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        head, _, rest = key[len(prefix) + 1 :].partition(".")
        if not head.isdigit() or not rest:
            continue
        node = items.setdefault(int(head), {})
        *path, leaf = rest.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return [items[i] for i in sorted(items)]


def _numbered(node: Any) -> list[Any]:
    """A `{"0": {...}, "1": {...}}` subtree (from `_indexed`) as a list."""
    if not isinstance(node, dict):
        return []
    return [node[k] for k in sorted((k for k in node if k.isdigit()), key=int)]


def langchain_tool_output(value: Any) -> tuple[Any, str | None]:
    """(result, error) of a tool output, unwrapping serialized LangChain ToolMessages."""
    data = read_value(value)
    if isinstance(data, dict) and isinstance(data.get("output"), dict) and len(data) <= 2:
        data = data["output"]
    if isinstance(data, dict):
        message = data.get("kwargs") if data.get("lc") else data.get("data")
        if isinstance(message, dict) and "content" in message and data.get("type") != "ai":
            content = read_value(message["content"])
            if message.get("status") == "error":
                return None, content if isinstance(content, str) else json.dumps(content)
            return content, None
    return data, None


def langchain_tool_input(value: Any) -> Any:
    """A tool's arguments, unwrapping OpenLLMetry's `{"input_str", "inputs", ...}` record."""
    data = read_value(value)
    if not isinstance(data, dict) or "input_str" not in data:
        return data
    if isinstance(data.get("inputs"), dict):
        return data["inputs"]
    text = data["input_str"]
    parsed = read_value(text)
    if isinstance(parsed, str):
        try:
            parsed = ast.literal_eval(parsed)
        except (ValueError, SyntaxError):
            return {"input": text}
    return parsed


def _calls_part(calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "tool_call",
            "id": call.get("id"),
            "name": call.get("name"),
            "arguments": read_value(call.get("arguments")),
        }
        for call in calls
        if call.get("name")
    ]


def _genai_message(
    role: str, calls: Sequence[Mapping[str, Any]], message: Mapping[str, Any]
) -> dict[str, Any]:
    """One message in GenAI form: its tool calls, then its tool result or its text."""
    parts = _calls_part(calls)
    if role == "tool":
        parts.append(
            {
                "type": "tool_call_response",
                "id": message.get("tool_call_id"),
                "response": message.get("content"),
            }
        )
    elif message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    return {"role": role, "parts": parts}


def _oi_messages(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    for entry in _indexed(attributes, prefix):
        message = entry.get("message") or {}
        calls = [
            {
                "id": call.get("tool_call", {}).get("id"),
                "name": call.get("tool_call", {}).get("function", {}).get("name"),
                "arguments": call.get("tool_call", {}).get("function", {}).get("arguments"),
            }
            for call in _numbered(message.get("tool_calls"))
        ]
        messages.append(_genai_message(str(message.get("role") or ""), calls, message))
    return messages


def _tl_messages(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [
        _genai_message(str(entry.get("role") or ""), _numbered(entry.get("tool_calls")), entry)
        for entry in _indexed(attributes, prefix)
    ]


def _model(attributes: dict[str, Any], model: Any, tokens: tuple[Any, Any]) -> None:
    attributes[genai.OPERATION] = genai.CHAT
    if model is not None:
        attributes.setdefault(genai.REQUEST_MODEL, model)
    for key, value in zip((genai.INPUT_TOKENS, genai.OUTPUT_TOKENS), tokens, strict=True):
        if value is not None:
            attributes.setdefault(key, value)


def _tool(attributes: dict[str, Any], name: Any, arguments: Any, output: Any) -> None:
    attributes[genai.OPERATION] = genai.EXECUTE_TOOL
    if name is not None:
        attributes[genai.TOOL_NAME] = name
    if arguments is not None:
        attributes[genai.TOOL_ARGUMENTS] = json.dumps(arguments, default=str)
    if output is not None:
        result, error = langchain_tool_output(output)
        attributes.pop(genai.TOOL_RESULT, None)
        if error is not None:
            attributes[_TOOL_ERROR] = error
        elif result is not None:
            attributes[genai.TOOL_RESULT] = json.dumps(result, default=str)


def _openinference(attributes: dict[str, Any]) -> None:
    kind = str(attributes.get(OI_KIND, "")).upper()
    if kind == "LLM":
        tokens = (
            attributes.get("llm.token_count.prompt"),
            attributes.get("llm.token_count.completion"),
        )
        _model(attributes, attributes.get("llm.model_name"), tokens)
        attributes.setdefault(
            INPUT_MESSAGES, json.dumps(_oi_messages(attributes, "llm.input_messages"))
        )
        attributes.setdefault(
            OUTPUT_MESSAGES, json.dumps(_oi_messages(attributes, "llm.output_messages"))
        )
    elif kind == "TOOL":
        arguments = read_arguments(attributes.get("input.value"), plain_text=True).value
        _tool(attributes, attributes.get("tool.name"), arguments, attributes.get("output.value"))
        if attributes.get("tool.id"):
            attributes[genai.TOOL_CALL_ID] = attributes["tool.id"]
    else:
        attributes[genai.OPERATION] = _OI_OPERATIONS.get(kind, kind.lower() or "unknown")


def _openllmetry(attributes: dict[str, Any]) -> None:
    kind = str(attributes.get(TL_KIND) or "")
    if kind == "tool":
        _tool(
            attributes,
            _first(attributes, "traceloop.entity.name", genai.TOOL_NAME),
            langchain_tool_input(attributes.get("traceloop.entity.input")),
            attributes.get("traceloop.entity.output"),
        )
    elif kind:
        attributes.setdefault(genai.OPERATION, _TL_OPERATIONS.get(kind, kind))
    elif attributes.get(TL_REQUEST_TYPE) in ("chat", "completion"):
        model = _first(
            attributes, "gen_ai.request.model", "gen_ai.response.model", "llm.request.model"
        )
        tokens = (
            _first(attributes, "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens"),
            _first(attributes, "gen_ai.usage.completion_tokens", "llm.usage.completion_tokens"),
        )
        _model(attributes, model, tokens)
        attributes.setdefault(INPUT_MESSAGES, json.dumps(_tl_messages(attributes, "gen_ai.prompt")))
        attributes.setdefault(
            OUTPUT_MESSAGES, json.dumps(_tl_messages(attributes, "gen_ai.completion"))
        )


def genai_view(span: Mapping[str, Any]) -> Mapping[str, Any]:
    """The span with its OpenInference or OpenLLMetry attributes also in GenAI names.

    A GenAI span (or one already translated) is returned as is; otherwise a copy with a
    new attributes dict, so stored spans are never changed.
    """
    attributes = span.get("attributes") or {}
    if attributes.get(TRANSLATED):
        return span
    if OI_KIND in attributes:
        translate = _openinference
    elif TL_KIND in attributes or TL_REQUEST_TYPE in attributes:
        translate = _openllmetry
    else:
        return span
    new = dict(attributes)
    translate(new)
    new[TRANSLATED] = True
    error = new.pop(_TOOL_ERROR, None)
    status = span.get("status")
    if error is None and isinstance(status, dict) and "Traceback" in str(status.get("message")):
        error = last_line(str(status["message"]))
    if error is None:
        return {**span, "attributes": new}
    return {**span, "attributes": new, "status": {"code": "ERROR", "message": error}}


def last_line(text: str) -> str:
    """The last non-empty line of a traceback, which names the exception."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else text


def _parent(span: Mapping[str, Any]) -> Any:
    return span.get("parent_span_id") or span.get("parentSpanId")


def _span_id(span: Mapping[str, Any]) -> Any:
    return span.get("span_id") or span.get("spanId")


def _is_model(span: Mapping[str, Any]) -> bool:
    return (span.get("attributes") or {}).get(genai.OPERATION) in genai.MODEL_OPERATIONS


def _with_parent_tool_call(span: Mapping[str, Any], parent: Mapping[str, Any] | None) -> Any:
    """OpenInference LangChain tool spans: arguments and call id from the enclosing node,
    whose input is the model's tool call."""
    attributes = span.get("attributes") or {}
    if parent is None or attributes.get(OI_KIND) != "TOOL":
        return span
    call = read_value((parent.get("attributes") or {}).get("input.value"))
    call = call.get("tool_call") if isinstance(call, dict) else None
    if not isinstance(call, dict) or call.get("name") != attributes.get(genai.TOOL_NAME):
        return span
    new = dict(attributes)
    new[genai.TOOL_ARGUMENTS] = json.dumps(call.get("args") or {}, default=str)
    if call.get("id"):
        new[genai.TOOL_CALL_ID] = call["id"]
    return {**span, "attributes": new}


def translate(spans: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Every span in GenAI terms, minus model spans nested inside another model span;
    tool spans without a call id get the id (and, when they lost them, the arguments) of
    the call a model span requested for them."""
    views = [genai_view(s) for s in spans]
    by_id = {_span_id(s): s for s in views if _span_id(s)}
    out = []
    for span in views:
        parent = by_id.get(_parent(span))
        if _is_model(span):
            ancestor, seen = parent, set()
            while ancestor is not None and _span_id(ancestor) not in seen:
                if _is_model(ancestor):
                    break
                seen.add(_span_id(ancestor))
                ancestor = by_id.get(_parent(ancestor))
            if ancestor is not None and _is_model(ancestor):
                continue
        out.append(_with_parent_tool_call(span, parent))
    return _claim_requested_calls(out)


def _start(span: Mapping[str, Any]) -> float:
    start = span.get("start_ns", span.get("startTime"))
    return float(start) if isinstance(start, (int, float)) else 0.0


def _claim_requested_calls(spans: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    out = list(spans)
    pending: list[dict[str, Any]] = []
    for i in sorted(range(len(out)), key=lambda i: _start(out[i])):
        attributes = out[i].get("attributes") or {}
        if _is_model(out[i]):
            pending.extend(_parts(out[i], OUTPUT_MESSAGES, "tool_call"))
            continue
        if attributes.get(genai.OPERATION) != genai.EXECUTE_TOOL:
            continue
        call_id = attributes.get(genai.TOOL_CALL_ID)
        name = attributes.get(genai.TOOL_NAME)
        call = next(
            (c for c in pending if (c.get("id") == call_id if call_id else c.get("name") == name)),
            None,
        )
        if call is None:
            continue
        pending.remove(call)
        if call_id:
            continue
        new = dict(attributes)
        if call.get("id"):
            new[genai.TOOL_CALL_ID] = call["id"]
        arguments = read_value(new.get(genai.TOOL_ARGUMENTS))
        if arguments is None or (isinstance(arguments, dict) and set(arguments) == {"input"}):
            new[genai.TOOL_ARGUMENTS] = json.dumps(call.get("arguments"), default=str)
        out[i] = {**out[i], "attributes": new}
    return out


def _messages(span: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    data = read_value((span.get("attributes") or {}).get(key))
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def _parts(span: Mapping[str, Any], key: str, kind: str) -> list[dict[str, Any]]:
    return [
        part
        for message in _messages(span, key)
        for part in message.get("parts") or []
        if isinstance(part, dict) and part.get("type") == kind
    ]


def _responses(model_spans: list[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    seen: set[Any] = set()
    responses = []
    for span in model_spans:
        for part in _parts(span, INPUT_MESSAGES, "tool_call_response"):
            key = (part.get("id"), json.dumps(part.get("response"), default=str))
            if key not in seen:
                seen.add(key)
                responses.append((part.get("id"), part.get("response")))
    return responses


def add_requested_calls(spans: list[Mapping[str, Any]], steps: list[Step]) -> list[Step]:
    """Tool steps for the calls model spans requested, when the trace has no tool spans.

    An app that instruments only its model client still shows which tools the model
    called: each requested call (GenAI `tool_call` parts) becomes a tool step after its
    model step, with the result a later model call received for it (matched by call id,
    else in order). Steps are unchanged when any tool span exists.
    """
    if any(s.kind == "tool" for s in steps):
        return steps
    model_spans = [s for s in spans if _is_model(s)]
    by_span = {str(_span_id(s)): s for s in model_spans}
    responses = _responses(model_spans)
    out: list[Step] = []
    calls: list[Step] = []
    for step in steps:
        out.append(step)
        span = by_span.get(str(step.metadata.get("span_id")))
        if step.kind != "model" or span is None:
            continue
        for part in _parts(span, OUTPUT_MESSAGES, "tool_call"):
            call = Step(
                kind="tool",
                name=str(part.get("name")),
                arguments=read_arguments(read_value(part.get("arguments")), plain_text=True).value,
                started_at=step.ended_at,
                call_id=part.get("id"),
                metadata={"requested": True, "source": "model span"},
            )
            out.append(call)
            calls.append(call)
    unmatched: list[Any] = []
    for call_id, response in responses:
        answered = next((c for c in calls if c.call_id == call_id and c.result is None), None)
        if answered is None:
            unmatched.append(response)
        else:
            answered.result = read_value(response)
    waiting = [c for c in calls if c.result is None]
    for call, response in zip(waiting, unmatched, strict=False):
        call.result = read_value(response)
    return out
