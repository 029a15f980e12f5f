"""OpenAI's Chat Completions and Responses formats: requests, replies and transcripts.

- tools and tool choice in the format each API expects (`chat_tools`, `responses_tools`,
  `tool_choice`), from a tool written in either vendor's format;
- replies read with promptfoo's output rules (`read_chat_completion`, `read_response`);
- transcripts as `Step`s (`chat_steps`, `responses_steps`): each assistant turn a model
  step followed by the tool steps it requested, completed by the `tool` messages or
  `function_call_output` items that answer them; tool steps carry `metadata["turn"]`;
- what a tool loop sends back (`tool_outputs`), and what a simulator reads from a request
  and answers (`read_request`, `response_body`).

Pure functions over plain data; nothing here imports the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from evals.model.trajectory import Step
from evals.vendors.messages import (
    DEFAULT_MODEL,
    Reply,
    RequestView,
    ToolCall,
    ToolResult,
    choice_mode,
    compact,
    content_text,
    forced_tool_name,
    function_definition,
    model_step,
    normalize_finish_reason,
    plain,
    read_value,
    text_messages,
    tool_outcome,
    tool_step,
    usage_number,
)


def chat_tools(tools: Sequence[Any]) -> list[Any]:
    """Tools in the Chat Completions format; non-function tools pass through."""
    out = []
    for tool in tools:
        definition = function_definition(tool)
        out.append({"type": "function", "function": definition} if definition else tool)
    return out


def responses_tools(tools: Sequence[Any]) -> list[Any]:
    """Tools in the Responses API format (flat function definitions)."""
    out = []
    for tool in tools:
        definition = function_definition(tool)
        out.append({"type": "function", **definition} if definition else tool)
    return out


def tool_choice(choice: object, api: str) -> Any:
    """tool_choice for the Chat (`api="chat"`) or Responses (`api="responses"`) API."""
    name = forced_tool_name(choice)
    if name:
        if api == "chat":
            return {"type": "function", "function": {"name": name}}
        return {"type": "function", "name": name}
    return choice_mode(choice) or choice


def _chat_calls(message: dict[str, Any]) -> list[ToolCall]:
    calls = [
        ToolCall.read(c.get("id"), function.get("name"), function.get("arguments"))
        for c in map(plain, message.get("tool_calls") or [])
        if isinstance(function := plain(c.get("function")), dict)
    ]
    legacy = plain(message.get("function_call"))
    if isinstance(legacy, dict):
        calls.append(ToolCall.read(None, legacy.get("name"), legacy.get("arguments")))
    return calls


def _chat_output(message: dict[str, Any], finish: str | None, metadata: dict[str, Any]) -> Any:
    content = message.get("content")
    calls = message.get("tool_calls")
    legacy = message.get("function_call")
    if message.get("refusal"):
        metadata["isRefusal"] = True
        return message["refusal"]
    if finish == "content_filter":
        metadata["isRefusal"] = True
        return content or "Content filtered by provider"
    if content and (legacy or calls):
        return content if calls == [] else message
    if content in (None, "") and (legacy or calls):
        return legacy or calls
    return content


def read_chat_completion(
    data: dict[str, Any], *, show_thinking: bool = True, json_output: bool = False
) -> Reply:
    """A Chat Completions response with promptfoo's output rules.

    The output is the text, the refusal, or the tool calls when the model wrote no text;
    with `json_output` (a `json_schema` response format) text is parsed as JSON; the
    model's reasoning, when it returns some, is prefixed with `show_thinking`.
    """
    choice = data["choices"][0]
    message = plain(choice.get("message")) or {}
    finish = normalize_finish_reason(choice.get("finish_reason"))
    metadata: dict[str, Any] = {"model": data.get("model"), "responseId": data.get("id")}
    output = _chat_output(message, finish, metadata)
    text = message.get("content")
    if json_output and isinstance(output, str):
        try:
            output = json.loads(output)
        except json.JSONDecodeError:
            metadata["jsonParseError"] = True
    reasoning = message.get("reasoning") or message.get("reasoning_content")
    if reasoning and isinstance(output, str) and show_thinking:
        output = f"Thinking: {reasoning}\n\n{output}"
    usage = data.get("usage") or {}
    return Reply(
        output=output,
        text=text if isinstance(text, str) and text else None,
        calls=_chat_calls(message),
        finish_reason=finish,
        input_tokens=usage_number(usage, "prompt_tokens"),
        output_tokens=usage_number(usage, "completion_tokens"),
        total_tokens=usage_number(usage, "total_tokens"),
        cached_tokens=usage_number(usage.get("prompt_tokens_details"), "cached_tokens"),
        metadata={k: v for k, v in metadata.items() if v is not None},
    )


def _response_finish(data: dict[str, Any], called_tools: bool, refused: bool) -> str | None:
    if refused:
        return "content_filter"
    if data.get("status") == "incomplete":
        reason = (data.get("incomplete_details") or {}).get("reason")
        return "length" if reason == "max_output_tokens" else normalize_finish_reason(reason)
    if called_tools:
        return "tool_calls"
    return "stop" if data.get("status") == "completed" else None


def read_response(data: dict[str, Any]) -> Reply:
    """A Responses API response with promptfoo's output rules.

    The output joins, line by line, the messages' text, each function call as compact
    JSON and reasoning summaries; a refusal is the output on its own. `text` is the
    messages' text alone (the SDK's `output_text`).
    """
    parts: list[str] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    refusal = None
    for item in map(plain, data.get("output") or []):
        kind = item.get("type")
        if kind == "function_call":
            parts.append(compact(item))
            calls.append(
                ToolCall.read(item.get("call_id"), item.get("name"), item.get("arguments"))
            )
        elif kind == "message" and item.get("role") == "assistant":
            text = ""
            for block in map(plain, item.get("content") or []):
                if block.get("type") == "output_text":
                    text += block.get("text", "")
                elif block.get("type") == "refusal":
                    refusal = block.get("refusal", "")
            if text:
                parts.append(text)
                texts.append(text)
        elif kind == "reasoning" and item.get("summary"):
            parts.append("Reasoning: " + "\n".join(s.get("text", "") for s in item["summary"]))
    metadata: dict[str, Any] = {"model": data.get("model"), "responseId": data.get("id")}
    if refusal is not None:
        metadata["isRefusal"] = True
    usage = data.get("usage") or {}
    return Reply(
        output=refusal if refusal is not None else "\n".join(parts),
        text="".join(texts) or None,
        calls=calls,
        finish_reason=_response_finish(data, bool(calls), refusal is not None),
        input_tokens=usage_number(usage, "input_tokens"),
        output_tokens=usage_number(usage, "output_tokens"),
        total_tokens=usage_number(usage, "total_tokens"),
        cached_tokens=usage_number(usage.get("input_tokens_details"), "cached_tokens"),
        metadata={k: v for k, v in metadata.items() if v is not None},
    )


def chat_steps(messages: Iterable[Any], model: str | None = None) -> list[Step]:
    """Steps from Chat Completions messages (a completion object counts as its message)."""
    steps: list[Step] = []
    calls: dict[str, Step] = {}
    turn = -1
    for raw in map(plain, messages):
        message, usage, name = raw, None, model
        if "choices" in raw:
            message = plain(raw["choices"][0]["message"])
            usage, name = raw.get("usage"), raw.get("model") or model
        role = message.get("role")
        if role == "assistant":
            turn += 1
            steps.append(
                model_step(
                    name or DEFAULT_MODEL,
                    usage_number(plain(usage), "prompt_tokens"),
                    usage_number(plain(usage), "completion_tokens"),
                    content_text(message.get("content")),
                )
            )
            for call in map(plain, message.get("tool_calls") or []):
                function = plain(call.get("function")) or {}
                step = tool_step(
                    function.get("name", ""), function.get("arguments"), call.get("id"), turn=turn
                )
                steps.append(step)
                calls[str(call.get("id"))] = step
        elif role == "tool":
            answered = calls.pop(str(message.get("tool_call_id")), None)
            if answered is not None:
                answered.result, answered.error = tool_outcome(message.get("content"))
    return steps


class _ResponsesTranscript:
    """Reads Responses items in order; a model step opens at each assistant-side item."""

    def __init__(self, model: str | None) -> None:
        self.model = model
        self.steps: list[Step] = []
        self.calls: dict[str, Step] = {}
        self.turn = -1
        self.open = False

    def open_turn(self, name: str | None, usage: Any = None) -> None:
        self.turn += 1
        self.open = True
        usage = plain(usage)
        self.steps.append(
            model_step(
                name or self.model or DEFAULT_MODEL,
                usage_number(usage, "input_tokens"),
                usage_number(usage, "output_tokens"),
            )
        )

    def take(self, item: dict[str, Any]) -> None:
        kind = item.get("type", "message")
        assistant_side = kind in ("function_call", "reasoning") or (
            kind == "message" and item.get("role") == "assistant"
        )
        if assistant_side and not self.open:
            self.open_turn(None)
        if kind == "message" and item.get("role") == "assistant":
            text = content_text(item.get("content"))
            if isinstance(text, str) and text:
                self.steps[-1].metadata.setdefault("text", text)
        elif kind == "function_call":
            call_id = item.get("call_id") or item.get("id")
            step = tool_step(item.get("name", ""), item.get("arguments"), call_id, turn=self.turn)
            self.steps.append(step)
            self.calls[str(call_id)] = step
        elif not assistant_side:
            self.open = False
            if kind == "function_call_output":
                answered = self.calls.pop(str(item.get("call_id")), None)
                if answered is not None:
                    answered.result, answered.error = tool_outcome(item.get("output"))


def responses_steps(items: Iterable[Any], model: str | None = None) -> list[Step]:
    """Steps from Responses API items; a response object contributes its `output` items."""
    transcript = _ResponsesTranscript(model)
    for raw in map(plain, items):
        if "output" in raw and raw.get("type") != "function_call_output":
            transcript.open_turn(raw.get("model"), raw.get("usage"))
            for item in map(plain, raw["output"]):
                transcript.take(item)
            transcript.open = False
        else:
            transcript.take(raw)
    return transcript.steps


def tool_outputs(results: Sequence[ToolResult]) -> list[dict[str, Any]]:
    """One `function_call_output` item per call, carrying the JSON of the tool's output."""
    return [
        {"type": "function_call_output", "call_id": call.call_id, "output": json.dumps(output)}
        for call, output in results
    ]


def read_request(body: dict[str, Any]) -> RequestView:
    """A Responses API request body: its user messages, tool names and the tool outputs
    it sends back (as data when they are JSON)."""
    items = body["input"]
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    users = [str(content_text(x["content"])) for x in items if x.get("role") == "user"]
    outputs = [read_value(x["output"]) for x in items if x.get("type") == "function_call_output"]
    tools = [t["name"] for t in body.get("tools", []) if "name" in t]
    return RequestView(body["model"], users, tools, outputs, text_messages(items))


def output_items(answer: str | Sequence[tuple[str, dict[str, Any]]], index: int) -> list[Any]:
    """A Responses API reply's `output`: a message with the final text, or one function
    call per (name, arguments); `index` numbers the ids within a conversation."""
    if isinstance(answer, str):
        return [
            {
                "type": "message",
                "id": f"msg_{index}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer, "annotations": []}],
            }
        ]
    return [
        {
            "type": "function_call",
            "id": f"fc_{index}_{i}",
            "call_id": f"call_{index}_{i}",
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        for i, (name, args) in enumerate(answer)
    ]


def response_body(
    model: str, output: list[Any], index: int, usage: tuple[int, int]
) -> dict[str, Any]:
    """A complete Responses API reply around `output` items; `usage` is (input, output)."""
    tokens_in, tokens_out = usage
    return {
        "id": f"resp_{index}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
