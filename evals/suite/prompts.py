"""The `prompts:` section in every form promptfoo accepts, with promptfoo's labels.

Inline strings; `{raw, label}` and `{id: file://..., label}` mappings; `file://` text
files split on `---` lines; JSON, YAML (one chat prompt each) and JSONL (one prompt per
line) files; and globs over any of these.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from evals.common.files import is_file_ref
from evals.model.errors import SuiteError
from evals.model.suite import Prompt

PROMPT_DELIMITER = "---"
ResolveFiles = Callable[[str, Any, str], list[Path]]


def split_text_prompts(text: str) -> list[str]:
    """The prompts of a text file: blocks separated by lines holding only `---`."""
    prompts: list[str] = []
    buffer: list[str] = []
    for line in text.splitlines():
        if line.strip() == PROMPT_DELIMITER:
            prompts.append("\n".join(buffer).strip())
            buffer = []
        else:
            buffer.append(line)
    prompts.append("\n".join(buffer).strip())
    return [p for p in prompts if p]


def _structured_file_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    try:
        loaded = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return text
    return json.dumps(loaded, ensure_ascii=False, separators=(",", ":"))


def prompts_from_file(path: Path, shown: str, label: str | None) -> list[Prompt]:
    """The prompts one file holds, labelled as promptfoo labels them."""
    if path.suffix == ".jsonl":
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line]
        many = len(lines) > 1
        return [
            Prompt(
                id=f"file://{shown}#{i}" if many else f"file://{shown}",
                label=(f"{label or shown}: {line}" if many else label or shown),
                raw=line,
                path=str(path),
            )
            for i, line in enumerate(lines)
        ]
    if path.suffix in (".json", ".yaml", ".yml"):
        raw = _structured_file_text(path)
        cut = raw if path.suffix == ".json" else raw[:80]
        return [Prompt(id=f"file://{shown}", label=label or f"{shown}: {cut}", raw=raw)]
    parts = split_text_prompts(path.read_text(encoding="utf-8"))
    return [
        Prompt(
            id=f"file://{shown}#{i}" if len(parts) > 1 else f"file://{shown}",
            label=f"{label}: {shown}: {raw}" if label else f"{shown}: {raw}",
            raw=raw,
            path=str(path),
        )
        for i, raw in enumerate(parts)
    ]


def load_prompts(value: Any, resolve_files: ResolveFiles, root: Path, where: str) -> list[Prompt]:
    """Every prompt of a `prompts:` value; `resolve_files` expands `file://` refs and globs."""
    items = value if isinstance(value, list) else [value]
    out: list[Prompt] = []
    for item in items:
        if is_file_ref(item):
            out.extend(_from_ref(item, item, None, resolve_files, root))
        elif isinstance(item, str):
            out.append(Prompt(id=item, label=item, raw=item))
        elif isinstance(item, dict) and ("raw" in item or "id" in item):
            source = item.get("raw", item.get("id"))
            label = item.get("label")
            if is_file_ref(source):
                out.extend(_from_ref(source, item, label, resolve_files, root))
            else:
                text = str(source)
                out.append(
                    Prompt(id=str(item.get("id") or label or text), label=label or text, raw=text)
                )
        else:
            raise SuiteError(
                "each prompt must be a string or a mapping with raw/label",
                file=where,
                line=getattr(item, "line", None),
                fix="write prompts: ['Answer: {{question}}']",
            )
    return out


def _from_ref(
    ref: str, node: Any, label: str | None, resolve_files: ResolveFiles, root: Path
) -> list[Prompt]:
    out: list[Prompt] = []
    for path in resolve_files(ref, node, "prompt"):
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        out.extend(prompts_from_file(path, shown, label))
    return out
