"""The value a `file://` var stands for when a prompt renders, as promptfoo's renderPrompt
reads it.

By the file's kind: a JavaScript file's module is called as `fn(varName, prompt, vars,
provider)` (in the sandbox) and a Python file's `get_var(var_name, prompt, other_vars)`,
each returning `{output}` (or `{error}`); YAML becomes compact JSON; an image becomes a
data URL (its type from its first bytes, else its extension); video and audio become
base64; a PDF is refused (promptfoo extracts its text); anything else is the file's text
(invalid UTF-8 replaced, as Node reads it), trimmed as JavaScript trims.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from evals.common import jsengine, jsfiles
from evals.common.files import load_function, ref_body
from evals.common.jsvalues import js_stringify, js_trim
from evals.model.errors import SuiteError
from evals.suite.yaml_lines import parse_yaml_file_text

IMAGE_TYPES = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "bmp": "image/bmp",
    "webp": "image/webp",
    "svg": "image/svg+xml",
}
"""promptfoo's image extensions, with the type its getMimeTypeFromExtension gives each."""

VIDEO_EXTENSIONS = frozenset({"mp4", "webm", "ogg", "mov", "avi", "wmv", "mkv", "m4v"})
AUDIO_EXTENSIONS = frozenset({"wav", "mp3", "ogg", "aac", "m4a", "flac", "wma", "aiff", "opus"})
MEDIA_EXTENSIONS = frozenset(IMAGE_TYPES) | VIDEO_EXTENSIONS | AUDIO_EXTENSIONS
"""Files a var reads as bytes (base64), not as text."""

_MAGIC = (
    ("/9j/", "image/jpeg"),
    ("iVBORw0KGgo", "image/png"),
    ("R0lGODlh", "image/gif"),
    ("R0lGODdh", "image/gif"),
    ("UklGR", "image/webp"),
    ("Qk0", "image/bmp"),
    ("Qk1", "image/bmp"),
    ("SUkq", "image/tiff"),
    ("TU0A", "image/tiff"),
    ("AAABAA", "image/x-icon"),
)


class VarFileError(SuiteError):
    """A `file://` var that could not give a value when the prompt rendered."""


def extension(path: Path) -> str:
    """promptfoo's `filePath.split('.').pop()`, lowercased: the text after the last dot."""
    return str(path).rsplit(".", 1)[-1].lower()


def image_data_url(data: bytes, path: Path) -> str:
    """An image as a data URL, typed by its first bytes as promptfoo's
    detectMimeFromBase64 does, else by its extension."""
    encoded = base64.b64encode(data).decode("ascii")
    kind = next((mime for prefix, mime in _MAGIC if encoded.startswith(prefix)), None)
    return f"data:{kind or IMAGE_TYPES[extension(path)]};base64,{encoded}"


def _python_var(path: Path, name: str, prompt: str, variables: dict[str, Any]) -> str:
    result = load_function(path, "get_var", f"var {name!r}")(name, prompt, variables)
    if isinstance(result, dict) and result.get("error"):
        raise VarFileError(f"get_var for {name!r} failed: {result['error']}", file=str(path))
    output = result.get("output") if isinstance(result, dict) else result
    if not isinstance(output, str) or not output:
        raise VarFileError(
            f"get_var for {name!r} returned no output",
            file=str(path),
            fix="return {'output': 'text'} from get_var(var_name, prompt, other_vars)",
        )
    return output.strip()


def _javascript_var(
    path: Path, name: str, prompt: str, variables: dict[str, Any], provider: dict[str, Any]
) -> Any:
    try:
        result = jsfiles.call_var(path, name, prompt, variables, provider)
    except jsengine.JavaScriptLimitError:
        raise
    except (jsengine.JavaScriptError, jsfiles.ModuleFileMissing) as exc:
        raise VarFileError(jsfiles.error_text(exc), file=str(path)) from None
    if isinstance(result, dict) and result.get("error"):
        raise VarFileError(f"Error running {path}: {result['error']}", file=str(path))
    output = result.get("output") if isinstance(result, dict) else None
    if not output:
        raise VarFileError(
            f"Expected {path} to return {{ output: string }} but got {js_stringify(result)}",
            file=str(path),
            fix="return { output: 'text' } from module.exports = (varName, prompt, vars) => ...",
        )
    return output


def load_var_file(
    ref: str,
    name: str,
    prompt: str,
    variables: dict[str, Any],
    root: Path,
    provider: dict[str, Any] | None = None,
) -> Any:
    """The value a `file://` var stands for when a prompt is rendered; `provider` is what a
    JavaScript loader is told of the provider (`{id, label}`)."""
    path = root / ref_body(ref)
    kind = extension(path)
    if path.name.endswith(jsfiles.JS_FILES):
        return _javascript_var(path, name, prompt, variables, provider or {})
    if kind == "py":
        return _python_var(path, name, prompt, variables)
    if kind == "pdf":
        raise VarFileError(
            "a PDF var is not read as text here (promptfoo extracts its text)",
            file=str(path),
            fix="extract the text into a .txt file and name that file",
        )
    if kind in MEDIA_EXTENSIONS:
        data = path.read_bytes()
        if kind in IMAGE_TYPES:
            return image_data_url(data, path)
        return base64.b64encode(data).decode("ascii")
    text = path.read_bytes().decode("utf-8", errors="replace")
    if kind in ("yaml", "yml"):
        return js_stringify(parse_yaml_file_text(text, path))
    return js_trim(text)
