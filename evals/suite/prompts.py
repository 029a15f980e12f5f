"""The `prompts:` section in every form promptfoo accepts, with promptfoo's labels.

Inline strings; `{raw, label, config}` and `{id: file://..., label}` mappings; the legacy
`{path-or-text: label}` mapping. A prompt that looks like a path (promptfoo's
`maybeFilePath`: `file://`, a known extension, a dot three or four characters from the
end, `*`, `/` or `\\`) is read as promptfoo's processPrompt reads it: a glob (no match:
the text itself), text files split on `---` lines, Markdown and Jinja2 files (one
untrimmed prompt each), JSON, YAML (one chat prompt each), JSONL (one prompt per line),
CSV (one prompt per row) files; Python and JavaScript prompt functions (`x.py:fn`,
`x.js[:fn]`, a Python file run whole), executable files and `exec:` commands, whose
output is the prompt of each run; anything else that looks like a path is refused, as
promptfoo refuses it ("There are no prompts in ...").
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evals.common.files import read_text
from evals.common.jsvalues import js_string
from evals.common.paths import glob_paths
from evals.common.yaml12 import load_yaml_text
from evals.model.errors import SuiteError
from evals.model.suite import Prompt, PromptFunction
from evals.suite.csv_tests import current_delimiter
from evals.suite.yaml_lines import LineDict

PROMPT_DELIMITER = "---"


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
    text = read_text(path, "the prompt file", keep_line_endings=True)
    delimiter = current_delimiter()
    if delimiter not in text:
        lines = [line for line in re.split(r"\r?\n", text) if line.strip()]
        start = 1 if lines and lines[0].strip().lower() == "prompt" else 0
        rows = [{"prompt": line} for line in lines[start:]]
    else:
        reader = csv.DictReader(
            io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True
        )
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
    raw = read_text(path, "the prompt file", keep_line_endings=True)
    return Prompt(
        id=f"file://{shown}",
        label=label or f"{shown}: {js_prefix(raw, 50)}...",
        raw=raw,
        path=str(path),
    )


def _text_file_prompts(path: Path, shown: str, label: str | None) -> list[Prompt]:
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


def _jsonl_prompts(path: Path, shown: str, label: str | None) -> list[Prompt]:
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


def _structured_prompt(path: Path, shown: str, label: str | None) -> list[Prompt]:
    raw = _structured_file_text(path)
    cut = raw if path.suffix == ".json" else raw[:80]
    return [Prompt(id=f"file://{shown}", label=label or f"{shown}: {cut}", raw=raw)]


def prompts_from_file(path: Path, shown: str, label: str | None) -> list[Prompt]:
    """The prompts one text, Markdown, Jinja2, CSV, JSON, JSONL or YAML file holds,
    labelled as promptfoo labels them; `shown` is the path as promptfoo writes it."""
    if path.suffix in (".md", ".j2"):
        return [whole_file_prompt(path, shown, label)]
    if path.suffix == ".csv":
        return csv_prompts(path, shown, label)
    if path.suffix == ".jsonl":
        return _jsonl_prompts(path, shown, label)
    if path.suffix in (".json", ".yaml", ".yml"):
        return _structured_prompt(path, shown, label)
    return _text_file_prompts(path, shown, label)


# promptfoo's VALID_FILE_EXTENSIONS and the extensions it runs as executables.
FILE_EXTENSIONS: tuple[str, ...] = (".cjs", ".cts", ".j2", ".js", ".json", ".jsonl", ".md")
FILE_EXTENSIONS += (".mjs", ".mts", ".py", ".ts", ".txt", ".yml", ".yaml")
_DATA_EXTENSIONS = (".csv", ".j2", ".json", ".jsonl", ".md", ".txt", ".yml", ".yaml")
_JAVASCRIPT = re.compile(r"\.(js|cjs|mjs|ts|cts|mts)$", re.IGNORECASE)
_EXECUTABLES = (".sh", ".bash", ".exe", ".bat", ".cmd", ".ps1", ".rb", ".pl")
_NOT_PATHS = ("\n", "portkey://", "langfuse://", "helicone://")


def maybe_file_path(text: str) -> bool:
    """promptfoo's maybeFilePath: whether a one-line prompt names a file (or glob)."""
    if any(part in text for part in _NOT_PATHS):
        return False
    tokens = text.split(":")
    last = tokens[-1]
    before = tokens[-2] if len(tokens) > 1 else None
    named = any(last.endswith(ext) or (before or "").endswith(ext) for ext in FILE_EXTENSIONS)
    dotted = (len(text) >= 3 and text[-3] == ".") or (len(text) >= 4 and text[-4] == ".")
    return text.startswith("file://") or named or dotted or any(c in text for c in "*/\\")


_CLASS = re.compile(r"\[(?:\\.|[^\]\\])+\]|\[\](?:\\.|[^\]\\])*\]")


def has_magic(pattern: str) -> bool:
    """minimatch's hasMagic (as glob calls it): an unescaped `*` or `?`, a character class
    or an extglob `+( )`, `@( )`, `!( )`; braces alone are not magic."""
    plain = re.sub(r"\\.", "", pattern)
    if "*" in plain or "?" in plain:
        return True
    return bool(_CLASS.search(plain) or re.search(r"[+@!]\(", plain))


_FUNCTION_FILES = re.compile(r"\.(js|cjs|mjs|ts|cts|mts|py|go|rb)$", re.IGNORECASE)


@dataclass
class PromptSources:
    """What reading prompts needs from the suite loader: the suite's folder, a way to
    record each file read (for the fingerprint) and to give notice of a prompt that
    looked like a path but is used as text."""

    root: Path
    where: str
    record: Callable[[Path], None]
    notice: Callable[[str], None]
    """Gives notice of a problem promptfoo leaves to the runs (`_Loader.notice`)."""


def split_function(text: str) -> tuple[str, str | None]:
    """promptfoo's parsePathOrGlob: `path:function` for a code file (the last colon, not
    the first two characters), else the path alone."""
    cut = text.rfind(":")
    if cut > 1 and _FUNCTION_FILES.search(text[:cut]):
        return text[:cut], text[cut + 1 :]
    return text, None


_PATH_FIX = (
    "a one-line prompt holding '/', '*', '\\' or ending like a file name is a path to "
    "promptfoo: correct the path, or give the prompt a second line (a YAML block, |)"
)


def _refused(raw: str, why: str, sources: PromptSources) -> SuiteError:
    return SuiteError(
        f"There are no prompts in {json.dumps(raw, ensure_ascii=False)}: {why}",
        file=sources.where,
        fix=_PATH_FIX,
    )


def _missing(raw: str, path: Path, sources: PromptSources) -> SuiteError:
    shown = os.path.relpath(path, sources.root)
    return SuiteError(
        f"prompt file not found: {shown} (the prompt {json.dumps(raw, ensure_ascii=False)})",
        file=sources.where,
        fix=f"create {path} or correct the path (relative to {sources.root}); " + _PATH_FIX,
    )


def process_prompt(
    raw: str, label: str | None, config: Any, sources: PromptSources, depth: int = 1
) -> list[Prompt]:
    """The prompts one entry of `prompts:` stands for, as promptfoo's processPrompt reads
    it (a text, a file, a glob, a prompt function or a command)."""
    if raw.startswith("exec:"):
        return [_exec_prompt(raw[5:], raw, label, config, sources)]
    if not maybe_file_path(raw):
        return [Prompt(id=raw, label=raw if label is None else label, raw=raw, config=config)]
    text = raw.removeprefix("file://")
    path_text, function = split_function(text)
    path = sources.root / path_text
    if path.is_dir() or has_magic(text):
        return _globbed(raw, path_text, function, label, config, sources, depth)
    shown = Path(os.path.relpath(path.resolve(), sources.root)).as_posix()
    suffix = Path(path_text).suffix
    if suffix in _DATA_EXTENSIONS:
        if not path.is_file():
            raise _missing(raw, path.resolve(), sources)
        sources.record(path.resolve())
        prompts = prompts_from_file(path, shown, label)
        # promptfoo's text and Markdown processors drop the prompt's config
        return prompts if suffix in (".txt", ".md") else _configured(prompts, config)
    if _JAVASCRIPT.search(suffix) or suffix == ".py":
        return [_function_prompt(path.resolve(), shown, function, raw, label, config, sources)]
    if suffix in _EXECUTABLES or _is_executable(path):
        return [_exec_prompt(path_text, raw, label, config, sources)]
    raise _refused(raw, "it reads as a file path, and no such prompt file exists", sources)


def _configured(prompts: list[Prompt], config: Any) -> list[Prompt]:
    for prompt in prompts:
        prompt.config = config
    return prompts


def _is_executable(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and bool(mode & 0o111)


def _globbed(
    raw: str,
    pattern: str,
    function: str | None,
    label: str | None,
    config: Any,
    sources: PromptSources,
    depth: int,
) -> list[Prompt]:
    """A glob's prompts (each match read as a prompt of its own, without the entry's label
    and config, as promptfoo reads each match); one that matches nothing is the text
    itself, as in promptfoo (`What is 1/2?`), with a notice when it was written as a file
    (`file://`)."""
    out: list[Prompt] = []
    try:  # a pattern pathlib cannot read (`a**b`) matches no file here
        paths = glob_paths(pattern, sources.root) if depth > 0 else []
    except ValueError:
        paths = []
    for path in paths:
        match = Path(os.path.relpath(path, sources.root)).as_posix()
        entry = f"{match}:{function}" if function else match
        out.extend(process_prompt(entry, None, None, sources, depth - 1))
    if out:
        return out
    if raw.startswith("file://"):
        sources.notice(
            f"no file matches the prompt {raw!r}: it is used as the prompt's text, as in promptfoo"
        )
    return [Prompt(id=raw, label=raw if label is None else label, raw=raw, config=config)]


def _function_prompt(
    path: Path,
    shown: str,
    function: str | None,
    raw: str,
    label: str | None,
    config: Any,
    sources: PromptSources,
) -> Prompt:
    """A Python or JavaScript prompt function, labelled as promptfoo labels it."""
    if not path.is_file():
        raise _missing(raw, path, sources)
    sources.record(path)
    source = read_text(path, "the prompt file")
    if path.suffix == ".py":
        kind = "python" if function else "python-script"
        default = f"{shown}:{function}" if function else f"{shown}: {source}"
    else:
        kind = "javascript"
        default = f"{shown}:{function}" if function else shown
        from evals.suite.prompt_functions import check_javascript_prompt

        check_javascript_prompt(path, function, sources.where)
    return Prompt(
        id=f"file://{shown}:{function}" if function else f"file://{shown}",
        label=default if label is None else label,
        raw=source,
        path=str(path),
        function=PromptFunction(kind, str(path), function),
        config={} if config is None and kind == "javascript" else config,
    )


def _exec_prompt(
    command: str, raw: str, label: str | None, config: Any, sources: PromptSources
) -> Prompt:
    """A command (`exec:` or an executable file) whose output is each run's prompt; `raw`
    is the script's text when it is a small text file, as in promptfoo."""
    shown = command.removeprefix("file://")
    script = sources.root / shown.split()[0] if shown.split() else None
    text = shown
    if script is not None and script.is_file() and script.stat().st_size < 100 * 1024:
        sources.record(script.resolve())
        content = script.read_text(encoding="utf-8", errors="replace")
        if not re.search(r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]", content[:1000]):
            text = content
    return Prompt(
        id=raw,
        label=shown if label is None else label,
        raw=text,
        function=PromptFunction("exec", shown),
        config=config,
    )


def load_prompts(value: Any, sources: PromptSources) -> list[Prompt]:
    """Every prompt of a `prompts:` value, each entry read as promptfoo reads it.

    A mapping that is not one prompt (`raw`/`id`) is promptfoo's legacy form: each key a
    prompt (a path or text), its value the label.
    """
    if isinstance(value, dict) and value and "raw" not in value and "id" not in value:
        value = legacy_prompt_map(value)
    items = value if isinstance(value, list) else [value]
    out: list[Prompt] = []
    for item in items:
        try:
            out.extend(_entry_prompts(item, sources))
        except SuiteError as exc:
            if exc.line is None and exc.file == sources.where:
                exc.line = getattr(item, "line", None) or None
            raise
    return out


def _entry_prompts(item: Any, sources: PromptSources) -> list[Prompt]:
    if isinstance(item, str):
        return process_prompt(item, None, None, sources)
    if isinstance(item, dict) and ("raw" in item or "id" in item):
        source = item.get("raw") or item.get("id")
        if not isinstance(source, str):
            source = js_string(source)
        prompts = process_prompt(source, item.get("label"), item.get("config"), sources)
        if len(prompts) == 1 and prompts[0].function is None and item.get("id"):
            prompts[0].id = str(item["id"])
        return prompts
    raise SuiteError(
        "each prompt must be a string or a mapping with raw/label",
        file=sources.where,
        line=getattr(item, "line", None),
        fix="write prompts: ['Answer: {{question}}']",
    )


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
