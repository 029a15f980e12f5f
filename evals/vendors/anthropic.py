"""Anthropic's Messages format: prompts, tools, replies and transcripts.

- a prompt as messages and a system block (`parse_prompt`, promptfoo's parseMessages);
- tools and tool choice in the Messages format (`tools`, `tool_choice`);
- replies read with promptfoo's output rules (`read_message`);
- transcripts as `Step`s (`message_steps`): `tool_use` blocks (several per turn run in
  parallel) answered by `tool_result` blocks, `is_error` marking a failed tool;
- what a tool loop sends back (`tool_results`), and what a simulator reads from a request
  and answers (`read_request`, `message_body`).

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


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}]


def parse_prompt(prompt: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(messages, system) for the Messages API, as promptfoo's parseMessages builds them.

    A JSON chat array keeps its turns and lifts the system message out; plain text is
    read line by line, where `system:`, `user:` and `assistant:` prefixes start turns.
    """
    try:
        parsed = json.loads(prompt)
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, list) and all(isinstance(m, dict) for m in parsed):
        system = next((m for m in parsed if m.get("role") == "system"), None)
        messages = [
            {"role": m["role"], "content": _text_blocks(m.get("content"))}
            for m in parsed
            if m.get("role") and m.get("role") != "system"
        ]
        return messages, None if system is None else _text_blocks(system.get("content"))
    return _parse_lines(prompt)


def _parse_lines(prompt: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    system = None
    messages: list[dict[str, Any]] = []
    role: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if role and lines:
            messages.append({"role": role, "content": [{"type": "text", "text": "\n".join(lines)}]})
            lines.clear()

    for line in (raw.strip() for raw in prompt.split("\n")):
        if not line:
            continue
        if line.startswith("system:"):
            system = [{"type": "text", "text": line[len("system:") :].strip()}]
        elif line.startswith(("user:", "assistant:")):
            flush()
            role = "user" if line.startswith("user:") else "assistant"
            lines.append(line.split(":", 1)[1].strip())
        else:
            role = role or "user"
            lines.append(line)
    flush()
    if not messages and system is None:
        messages.append({"role": "user", "content": [{"type": "text", "text": prompt.strip()}]})
    return messages, system


def tools(definitions: Sequence[Any]) -> list[Any]:
    """Tools in the Messages API format (`input_schema`); non-function tools pass through."""
    out = []
    for tool in definitions:
        definition = function_definition(tool)
        if definition is None:
            out.append(tool)
            continue
        converted = {
            "name": definition["name"],
            "input_schema": definition.get("parameters") or {"type": "object", "properties": {}},
        }
        if definition.get("description"):
            converted["description"] = definition["description"]
        out.append(converted)
    return out


def tool_choice(choice: object) -> Any:
    """tool_choice for the Messages API: auto, any (required), none, or one named tool."""
    name = forced_tool_name(choice)
    if name:
        return {"type": "tool", "name": name}
    mode = choice_mode(choice)
    if mode is None:
        return choice
    return {"type": {"required": "any"}.get(mode, mode)}


def _thinking_output(blocks: list[dict[str, Any]], show_thinking: bool) -> str:
    texts = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(block.get("text", ""))
        elif kind == "thinking" and show_thinking and block.get("thinking", "").strip():
            texts.append(f"Thinking: {block['thinking']}\nSignature: {block.get('signature')}")
        elif kind == "redacted_thinking" and show_thinking:
            texts.append(f"Redacted Thinking: {block.get('data')}")
        elif kind not in ("thinking", "redacted_thinking"):
            texts.append(compact(block))
    return "\n\n".join(t for t in texts if t != "")


def read_message(data: dict[str, Any], *, show_thinking: bool = True) -> Reply:
    """A Messages API response with promptfoo's output rules.

    With tool calls or thinking the output joins the text, each `tool_use` block as
    compact JSON and (with `show_thinking`) the thinking; otherwise it is the text.
    Input tokens include the cache's reads and writes.
    """
    blocks = [plain(b) for b in data.get("content") or []]
    if any(b.get("type") in ("tool_use", "thinking", "redacted_thinking") for b in blocks):
        output = _thinking_output(blocks, show_thinking)
    else:
        output = "\n\n".join(str(b.get("text", "")) for b in blocks)
    calls = [
        ToolCall.read(b.get("id"), b.get("name"), b.get("input"))
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    usage = data.get("usage") or {}
    cache_read = usage_number(usage, "cache_read_input_tokens") or 0
    cache_write = usage_number(usage, "cache_creation_input_tokens") or 0
    input_tokens = usage_number(usage, "input_tokens")
    metadata = {
        "model": data.get("model"),
        "responseId": data.get("id"),
        "stopReason": data.get("stop_reason"),
    }
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    return Reply(
        output=output,
        text=text or None,
        calls=calls,
        finish_reason=normalize_finish_reason(data.get("stop_reason")),
        input_tokens=None if input_tokens is None else input_tokens + cache_read + cache_write,
        output_tokens=usage_number(usage, "output_tokens"),
        cached_tokens=cache_read or None,
        metadata={k: v for k, v in metadata.items() if v is not None},
    )


def message_steps(messages: Iterable[Any], model: str | None = None) -> list[Step]:
    """Steps from Anthropic Messages: `tool_use` blocks (several per turn run in parallel)
    and `tool_result` blocks with `is_error`."""
    steps: list[Step] = []
    calls: dict[str, Step] = {}
    turn = -1
    for message in map(plain, messages):
        content = message.get("content")
        blocks = [plain(b) for b in content] if isinstance(content, list) else []
        if message.get("role") == "assistant":
            turn += 1
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            if isinstance(content, str):
                text = content
            usage = plain(message.get("usage"))
            steps.append(
                model_step(
                    message.get("model") or model or DEFAULT_MODEL,
                    usage_number(usage, "input_tokens"),
                    usage_number(usage, "output_tokens"),
                    text,
                    stop_reason=message.get("stop_reason") or None,
                )
            )
            for block in blocks:
                if block.get("type") == "tool_use":
                    tool = tool_step(
                        block.get("name", ""), block.get("input"), block.get("id"), turn=turn
                    )
                    steps.append(tool)
                    calls[str(block.get("id"))] = tool
        else:
            for block in blocks:
                if block.get("type") == "tool_result":
                    answered = calls.pop(str(block.get("tool_use_id")), None)
                    if answered is not None:
                        is_error = bool(block.get("is_error"))
                        answered.result, answered.error = tool_outcome(
                            block.get("content"), is_error
                        )
    return steps


def tool_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """One user message with a `tool_result` block per call, errors flagged `is_error`."""
    blocks = [
        {
            "type": "tool_result",
            "tool_use_id": call.call_id,
            "content": json.dumps(output),
            "is_error": isinstance(output, dict) and "error" in output,
        }
        for call, output in results
    ]
    return {"role": "user", "content": blocks}


def read_request(body: dict[str, Any]) -> RequestView:
    """A Messages API request body: its user texts, tool names and the tool results it
    sends back (as data when they are JSON)."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    outputs = [
        read_value(content_text(b["content"]))
        for m in users
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    texts = [
        str(text) for m in users if isinstance(text := content_text(m["content"]), str) and text
    ]
    tools = [t["name"] for t in body.get("tools", []) if "name" in t]
    return RequestView(body["model"], texts, tools, outputs, text_messages(body["messages"]))


def content_blocks(answer: str | Sequence[tuple[str, dict[str, Any]]], index: int) -> list[Any]:
    """A Messages API reply's `content`: the final text, or one `tool_use` block per
    (name, arguments); `index` numbers the ids within a conversation."""
    if isinstance(answer, str):
        return [{"type": "text", "text": answer}]
    return [
        {"type": "tool_use", "id": f"toolu_{index}_{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(answer)
    ]


def message_body(
    model: str, content: list[Any], index: int, usage: tuple[int, int]
) -> dict[str, Any]:
    """A complete Messages API reply around `content` blocks (stopping for tool use when
    it holds any); `usage` is (input, output)."""
    calls_tools = any(block.get("type") == "tool_use" for block in content)
    tokens_in, tokens_out = usage
    return {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls_tools else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    }
