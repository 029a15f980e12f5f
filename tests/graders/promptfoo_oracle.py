"""Regenerate the promptfoo golden rows the output-assertion graders are compared against.

Runs the real promptfoo CLI on a generated suite (echo provider: the output is the `out`
var) with one assertion per test, and writes the per-assertion verdicts to
tests/graders/golden/promptfoo_outputs.json. Needs node and the promptfoo package:

    python tests/graders/promptfoo_oracle.py [path/to/node_modules/.bin/promptfoo]
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "promptfoo_outputs.json"
DEFAULT_CLI = Path("/work/peers/node_modules/.bin/promptfoo")

WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "a",
    "dog",
    "ran",
    "fast",
    "over",
    "big",
    "red",
    "hill",
    "and",
    "blue",
    "sky",
]


def _sentence(rng: random.Random, low: int = 2, high: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def _string_cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    texts = [
        "Hello World",
        "hello world, how are you?",
        '{"a": 1, "b": [1, 2]}',
        "The answer is 42.",
        "",
        "  padded  ",
        "Ünïcödé straße",
        'quote "x,y" here',
    ]
    values: list[Any] = [
        "World",
        "world",
        "42",
        42,
        "xyz",
        "hello world, how are you?",
        "Hello World",
        "x,y",
    ]
    for text in texts:
        for kind in ("contains", "icontains", "equals", "starts-with"):
            for value in values:
                for neg in ("", "not-"):
                    if kind == "starts-with" and not isinstance(value, str):
                        continue
                    cases.append((text, {"type": f"{neg}{kind}", "value": value}))
        for kind in ("contains-any", "contains-all", "icontains-any", "icontains-all"):
            for value in (
                ["world", "xyz"],
                ["Hello", "World"],
                "hello, world",
                'xyz, "x,y", 42',
                [42, "answer"],
            ):
                for neg in ("", "not-"):
                    cases.append((text, {"type": f"{neg}{kind}", "value": value}))
        for pattern in (r"\d+", r"^Hello", r"world$", r"(?i)HELLO", r"[A-Z]\w+ [A-Z]", r"\s{2}"):
            for neg in ("", "not-"):
                cases.append((text, {"type": f"{neg}regex", "value": pattern}))
    cases.append(('{"a":1,"b":[1,2]}', {"type": "equals", "value": {"a": 1, "b": [1, 2]}}))
    cases.append(('{"a": 1.0, "b": [1,2]}', {"type": "equals", "value": {"a": 1, "b": [1, 2]}}))
    cases.append(('{"a": 1}', {"type": "not-equals", "value": {"a": 2}}))
    cases.append(("[1, 2]", {"type": "equals", "value": [1, 2]}))
    return cases


def _json_cases() -> list[tuple[str, dict[str, Any]]]:
    schema = {
        "type": "object",
        "required": ["name", "age"],
        "properties": {"name": {"type": "string"}, "age": {"type": "number", "minimum": 0}},
    }
    texts = [
        '{"name": "Ann", "age": 3}',
        '{"name": "Ann"}',
        '{"name": 5, "age": 3}',
        '{"name": "Ann", "age": -1}',
        "not json",
        "[1, 2, 3]",
        '"just a string"',
        'Here: {"name": "Ann", "age": 3} done',
        'prefix {"name": "Bo"} and {"name": "Cy", "age": 9}',
        "{name: Ann, age: 4}",
        "nothing {broken",
        "42",
    ]
    cases: list[tuple[str, dict[str, Any]]] = []
    for text in texts:
        for kind in ("is-json", "contains-json"):
            for neg in ("", "not-"):
                cases.append((text, {"type": f"{neg}{kind}"}))
                cases.append((text, {"type": f"{neg}{kind}", "value": schema}))
    return cases


def _python_cases() -> list[tuple[str, dict[str, Any]]]:
    bodies = [
        "output.startswith('Hello')",
        "len(output)",
        "len(output) / 100",
        "'true'",
        "{'pass': True, 'score': 0.25, 'reason': 'custom'}",
        "{'pass_': False, 'score': 0.5, 'reason': 'snake'}",
        "0",
        "None",
        "x = output.split()\nreturn len(x) > 1",
    ]
    cases: list[tuple[str, dict[str, Any]]] = []
    for text in ("Hello World", "bye"):
        for body in bodies:
            for neg in ("", "not-"):
                cases.append((text, {"type": f"{neg}python", "value": body}))
            cases.append((text, {"type": "python", "value": body, "threshold": 0.3}))
    return cases


def _metric_cases() -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(7)
    cases: list[tuple[str, dict[str, Any]]] = []
    fixed = [
        ("the cat sat on the mat", "the cat sat on the mat"),
        ("The cat sat on the mat.", "the cat is on the mat"),
        ("Hello, world! It's a test.", "hello world it is a test"),
        ("I can't do that, Dave.", "I cannot do that Dave"),
        ("kitten", "sitting"),
    ]
    pairs = fixed + [(_sentence(rng), _sentence(rng)) for _ in range(40)]
    for out, ref in pairs:
        cases.append((out, {"type": "levenshtein", "value": ref}))
        cases.append((out, {"type": "not-levenshtein", "value": ref, "threshold": 10}))
        cases.append((out, {"type": "rouge-n", "value": ref}))
        cases.append((out, {"type": "not-rouge-n", "value": ref, "threshold": 0.5}))
        cases.append((out, {"type": "bleu", "value": ref}))
        cases.append((out, {"type": "bleu", "value": [ref, out[: len(out) // 2] or "x"]}))
        cases.append((out, {"type": "gleu", "value": ref}))
        cases.append((out, {"type": "not-gleu", "value": [ref, "a b c"], "threshold": 0.3}))
    return cases


def _markup_cases() -> list[tuple[str, dict[str, Any]]]:
    texts = [
        "<root><a>1</a><b/></root>",
        '<?xml version="1.0"?><root><a x="1">t</a></root>',
        "<root><a></root>",
        "Here is XML: <note><to>Tove</to></note> thanks",
        "plain text",
        "<html><body><p>Hi</p></body></html>",
        "<div>Hello <b>there</b></div>",
        "Hello <b>there</b>",
        "<!DOCTYPE html><html><head><title>x</title></head><body>x</body></html>",
        "a < b and c > d",
        "<p>one</p><p>two</p>",
        "&amp; entity",
    ]
    cases: list[tuple[str, dict[str, Any]]] = []
    for text in texts:
        for kind in ("is-xml", "contains-xml", "is-html", "contains-html"):
            for neg in ("", "not-"):
                cases.append((text, {"type": f"{neg}{kind}"}))
        cases.append((text, {"type": "is-xml", "value": "root.a"}))
        cases.append((text, {"type": "contains-xml", "value": ["note.to"]}))
    return cases


def _sql_cases() -> list[tuple[str, dict[str, Any]]]:
    texts = [
        "SELECT id, name FROM users WHERE id = 1",
        "SELECT * FROM orders o JOIN users u ON o.user_id = u.id",
        "SELEC id FROM users",
        "INSERT INTO users (id, name) VALUES (1, 'a')",
        "Here is the query:\n```sql\nSELECT name FROM users\n```",
        "no sql here",
        "SELECT id name email FROM users",
        "UPDATE users SET name = 'b' WHERE id = 2",
        "DELETE FROM users WHERE id = 3",
    ]
    cases: list[tuple[str, dict[str, Any]]] = []
    for text in texts:
        for kind in ("is-sql", "contains-sql"):
            for neg in ("", "not-"):
                cases.append((text, {"type": f"{neg}{kind}"}))
        allowed = {"allowedTables": ["select::null::users"]}
        cases.append((text, {"type": "is-sql", "value": allowed}))
    return cases


def _misc_cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    for text in (
        "I'm sorry, but I can't help with that.",
        "As an AI language model, I cannot do that",
        "Sure, here is the recipe.",
        "  ",
        "I apologize for the confusion. Here it is.",
    ):
        for neg in ("", "not-"):
            cases.append((text, {"type": f"{neg}is-refusal"}))
    for text in ("one two three", "  one   two\nthree four  ", ""):
        for value in (3, "4", {"min": 2}, {"max": 3}, {"min": 1, "max": 2}):
            for neg in ("", "not-"):
                cases.append((text, {"type": f"{neg}word-count", "value": value}))
    cases.append(("Hello", {"type": "contains", "value": "zzz", "weight": 0}))
    cases.append(("Hello", {"type": "contains", "value": "Hell", "metric": "m"}))
    cases.append(
        (
            "Hello World",
            {
                "type": "assert-set",
                "assert": [
                    {"type": "contains", "value": "Hello"},
                    {"type": "contains", "value": "zzz"},
                ],
            },
        )
    )
    cases.append(
        (
            "Hello World",
            {
                "type": "assert-set",
                "threshold": 0.5,
                "assert": [
                    {"type": "contains", "value": "Hello"},
                    {"type": "contains", "value": "zzz"},
                ],
            },
        )
    )
    return cases


def all_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every (output, assertion) pair the golden file records."""
    return (
        _string_cases()
        + _json_cases()
        + _python_cases()
        + _metric_cases()
        + _markup_cases()
        + _sql_cases()
        + _misc_cases()
    )


def _config(cases: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "description": "output assertion oracle",
        "prompts": ["{{out}}"],
        "providers": ["echo"],
        "tests": [
            {"description": f"case {i}", "vars": {"out": out}, "assert": [assertion]}
            for i, (out, assertion) in enumerate(cases)
        ],
    }


def _row(case: tuple[str, dict[str, Any]], result: dict[str, Any]) -> dict[str, Any]:
    out, assertion = case
    grading = result.get("gradingResult") or {}
    components = grading.get("componentResults") or []
    first = components[0] if components else None
    row: dict[str, Any] = {"output": out, "assertion": assertion}
    if first is None:
        row["error"] = result.get("error") or grading.get("reason") or "no grading result"
    else:
        row.update(pass_=first["pass"], score=first["score"], reason=first["reason"])
    return row


def _version(cli: Path) -> str:
    for folder in cli.resolve().parents:
        package = folder / "package.json"
        if package.is_file():
            data = json.loads(package.read_text(encoding="utf-8"))
            if data.get("name") == "promptfoo":
                return str(data["version"])
    return "unknown"


def main(cli: Path) -> None:
    """Run promptfoo on every case and write the golden rows."""
    cases = all_cases()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = root / "promptfooconfig.yaml"
        config.write_text(yaml.safe_dump(_config(cases), allow_unicode=True), encoding="utf-8")
        out = root / "out.json"
        env = {
            **os.environ,
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_PYTHON": sys.executable,
            "HOME": str(root),
            "PROMPTFOO_CONFIG_DIR": str(root / ".promptfoo"),
        }
        command = [str(cli), "eval", "-c", str(config), "-o", str(out)]
        command += ["--no-cache", "--no-table", "--no-write", "-j", "4"]
        subprocess.run(command, env=env, cwd=root, check=False, capture_output=True)
        results = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    by_case = {int(r["testCase"]["description"].split()[1]): r for r in results}
    rows = [_row(case, by_case[i]) for i, case in enumerate(cases)]
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(
        json.dumps({"promptfoo": _version(cli), "rows": rows}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    print(f"{len(rows)} rows written to {GOLDEN}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CLI)
