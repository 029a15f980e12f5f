"""A run's span tree, from the trace stored with it: each span under its parent, with its
duration and status, each model call's input messages (and system instructions and
output messages), each tool call's arguments and result, and every attribute folded.

Pure functions from stored span dicts (`evals.tracing.spans.span_to_dict`) to escaped HTML
(nested `<details>`, open to the first level); nothing in a span is read as markup.
"""

from __future__ import annotations

import html
import json
from typing import Any

# Attributes shown first, by what they are, when a span has them (GenAI conventions; the
# tracer translates OpenInference and OpenLLMetry attributes onto them).
SHOWN = (
    ("model", "gen_ai.request.model"),
    ("system instructions", "gen_ai.system_instructions"),
    ("input messages", "gen_ai.input.messages"),
    ("output messages", "gen_ai.output.messages"),
    ("tool", "gen_ai.tool.name"),
    ("tool arguments", "gen_ai.tool.call.arguments"),
    ("tool result", "gen_ai.tool.call.result"),
    ("input tokens", "gen_ai.usage.input_tokens"),
    ("output tokens", "gen_ai.usage.output_tokens"),
    ("error", "error.type"),
)
LIMIT = 20_000  # characters of one value shown; the rest is cut with a note


def _pretty(value: Any) -> str:
    """A value as readable text: JSON text re-indented, structures as JSON, cut at LIMIT."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            text = value
        else:
            text = (
                value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
            )
    else:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > LIMIT:
        text = text[:LIMIT] + f"\n… {len(text) - LIMIT:,} more characters"
    return text


def children(spans: list[dict[str, Any]]) -> dict[str | None, list[dict[str, Any]]]:
    """The spans under each parent id (None: the roots, and spans whose parent is not in
    the trace), each list in start order."""
    ids = {span.get("span_id") for span in spans}
    found: dict[str | None, list[dict[str, Any]]] = {}
    for span in sorted(spans, key=lambda s: (s.get("start_ns") or 0, str(s.get("name")))):
        parent = span.get("parent_span_id")
        found.setdefault(parent if parent in ids else None, []).append(span)
    return found


def _duration(span: dict[str, Any]) -> str:
    start, end = span.get("start_ns"), span.get("end_ns")
    if start is None or end is None:
        return ""
    return f"{(end - start) / 1e6:,.1f} ms"


def _block(label: str, value: Any) -> str:
    return (
        f"<div class='span-field'><b>{html.escape(label)}</b>"
        f"<pre style='white-space:pre-wrap;overflow-wrap:anywhere;margin:0.1rem 0 0.4rem'>"
        f"{html.escape(_pretty(value))}</pre></div>"
    )


def span_html(
    span: dict[str, Any], below: dict[str | None, list[dict[str, Any]]], depth: int
) -> str:
    """One span and, nested, its children."""
    attributes = span.get("attributes") or {}
    status = (span.get("status") or {}).get("code") or "UNSET"
    colour = "#d1453b" if status == "ERROR" else "#555"
    summary = (
        f"<summary><b>{html.escape(str(span.get('name')))}</b> "
        f"<span style='color:#555'>{html.escape(_duration(span))}</span> "
        f"<span style='color:{colour}'>{html.escape(status.lower())}</span></summary>"
    )
    fields = "".join(_block(label, attributes[key]) for label, key in SHOWN if key in attributes)
    description = (span.get("status") or {}).get("description")
    if description:
        fields += _block("status", description)
    for event in span.get("events") or []:
        fields += _block(f"event {event.get('name')}", event.get("attributes") or {})
    rest = {k: v for k, v in attributes.items() if k not in {key for _, key in SHOWN}}
    if rest:
        fields += (
            "<details><summary>every attribute</summary>"
            + _block("attributes", rest)
            + "</details>"
        )
    nested = "".join(
        span_html(child, below, depth + 1) for child in below.get(span.get("span_id"), [])
    )
    opened = " open" if depth == 0 else ""
    name = html.escape(str(span.get("name")), quote=True)
    indent = 0 if depth == 0 else 1
    return (
        f"<details class='span' data-span='{name}'{opened} style='margin:0.15rem 0 0.15rem "
        f"{indent}rem;border-left:2px solid #e3e5e8;padding-left:0.5rem'>"
        f"{summary}{fields}{nested}</details>"
    )


def tree_html(spans: list[dict[str, Any]]) -> str:
    """The span tree of a run's stored trace, roots first; a note when it stored none."""
    if not spans:
        return (
            "<p style='color:#666'>No trace stored with this run (tracing off, or an agent "
            "whose calls are not traced).</p>"
        )
    below = children(spans)
    return "".join(span_html(root, below, 0) for root in below.get(None, []))
