"""The `prompts:` section in every form promptfoo accepts, with promptfoo's labels.

Inline strings; `{raw, label}` and `{id: file://..., label}` mappings; the legacy
`{path-or-text: label}` mapping; `file://` text files split on `---` lines; Markdown and
Jinja2 files (one untrimmed prompt each); JSON, YAML (one chat prompt each), JSONL (one
prompt per line) and CSV (one prompt per row: `prompt` and optional `label` columns)
files; and globs over any of these.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from evals.common.files import is_file_ref, read_text
from evals.common.jsvalues import js_string
from evals.common.yaml12 import load_yaml_text
from evals.model.errors import SuiteError
from evals.model.suite import Prompt
from evals.suite.yaml_lines import LineDict

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
    text = read_text(path, "the prompt file")
    try:
        loaded = json.loads(text) if path.suffix == ".json" else load_yaml_text(text)
    except (ValueError, yaml.YAMLError):
        return text
    return json.dumps(loaded, ensure_ascii=False, separators=(",", ":"))


def csv_prompts(path: Path, shown: str, label: str | None) -> list[Prompt]:
    """promptfoo's processCsvPrompts: a `prompt` column (and `label`), or one prompt a line
    when the file has no comma."""
    text = read_text(path, "the prompt file")
    if "," not in text:
        lines = [line for line in re.split(r"\r?\n", text) if line.strip()]
        start = 1 if lines and lines[0].strip().lower() == "prompt" else 0
        rows = [{"prompt": line} for line in lines[start:]]
    else:
        reader = csv.DictReader(io.StringIO(text), skipinitialspace=True)
        rows = [{k.strip(): (v or "").strip() for k, v in row.items() if k} for row in reader]
    prompts = [row for row in rows if row.get("prompt")]
    return [
        Prompt(
            id=f"file://{shown}#{i}",
            label=row.get("label") or label or f"Prompt {i + 1} - {row['prompt']}",
            raw=row["prompt"],
            path=str(path),
        )
        for i, row in enumerate(prompts)
    ]


def js_prefix(text: str, units: int) -> str:
    """JavaScript's `text.slice(0, units)`: the first `units` UTF-16 code units."""
    data = text.encode("utf-16-le", "surrogatepass")[: 2 * units]
    return data.decode("utf-16-le", "surrogatepass")


def whole_file_prompt(path: Path, shown: str, label: str | None) -> Prompt:
    """promptfoo's Markdown and Jinja2 processors: the whole file, untrimmed and unsplit,
    labelled with its first 50 characters unless the prompt has a label."""
    raw = read_text(path, "the prompt file")
    return Prompt(
        id=f"file://{shown}",
        label=label or f"{shown}: {js_prefix(raw, 50)}...",
        raw=raw,
        path=str(path),
    )


def prompts_from_file(path: Path, shown: str, label: str | None) -> list[Prompt]:
    """The prompts one file holds, labelled as promptfoo labels them."""
    if path.suffix in (".md", ".j2"):
        return [whole_file_prompt(path, shown, label)]
    if path.suffix == ".csv":
        return csv_prompts(path, shown, label)
    if path.suffix == ".jsonl":
        lines = [line for line in read_text(path, "the prompt file").splitlines() if line]
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
    parts = split_text_prompts(read_text(path, "the prompt file"))
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
    """Every prompt of a `prompts:` value; `resolve_files` expands `file://` refs and globs.

    A mapping that is not one prompt (`raw`/`id`) is promptfoo's legacy form: each key a
    prompt (a path or text), its value the label.
    """
    if isinstance(value, dict) and value and "raw" not in value and "id" not in value:
        value = legacy_prompt_map(value)
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


def legacy_prompt_map(value: dict[Any, Any]) -> list[Any]:
    """`{prompt: label}` entries as `{raw, label}` prompts, as promptfoo's normalizeInput reads
    a prompts mapping (the key is the prompt, a path or text; the value its label)."""
    out: list[Any] = []
    for raw, label in value.items():
        entry = LineDict(raw=js_string(raw), label=_label_text(label))
        entry.line = value.key_lines.get(raw, value.line) if isinstance(value, LineDict) else 0
        entry.key_lines = {}
        entry.file = None
        out.append(entry)
    return out


def _label_text(label: Any) -> str | None:
    return label if label is None or isinstance(label, str) else js_string(label)


def _from_ref(
    ref: str, node: Any, label: str | None, resolve_files: ResolveFiles, root: Path
) -> list[Prompt]:
    out: list[Prompt] = []
    for path in resolve_files(ref, node, "prompt"):
        shown = Path(os.path.relpath(path, root)).as_posix()  # as promptfoo shows it
        out.extend(prompts_from_file(path, shown, label))
    return out
