"""Hostile test files: CSV, JSON, JSONL and YAML datasets, generators, file:// vars."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.hostile.builders import GOOD_AGENT, correct_runs, prompt_is
from tests.hostile.corpus_suites import ALIAS_BOMB
from tests.hostile.harness import Case, Correct, ErrorRow, Outcome, UsageError

SUITE = """\
prompts: ['Q: {{q}}']
providers: [{id: file://good.py, label: good}]
tests: %s
gates: {}
"""


def dataset(
    id: str,
    name: str,
    content: str | bytes,
    expect: Any,
    *,
    ref: str | None = None,
    extra: dict[str, str | bytes] | None = None,
    mode: str = "inprocess",
    limit_s: float = 20.0,
    argv: tuple[str, ...] = ("run", "suite.yaml"),
) -> Case:
    """A suite whose tests come from one file, `name`, holding `content`."""
    return Case(
        id=id,
        category="datasets",
        files={
            "suite.yaml": SUITE % (ref or f"file://{name}"),
            "good.py": GOOD_AGENT,
            name: content,
            **(extra or {}),
        },
        expect=expect,
        mode=mode,
        limit_s=limit_s,
        argv=argv,
    )


def bad(name: str, *mentions: str, line: int | tuple[int, ...] | None = None) -> UsageError:
    """Rejected naming the dataset file (at a line when given) and `mentions`."""
    return UsageError((name, *mentions), line=line)


def prompt_lacks(*texts: str) -> Any:
    """A check: one run stored, completed, its prompt holding none of `texts`."""

    def check(outcome: Outcome) -> None:
        runs = outcome.runs()
        assert len(runs) == 1, f"{len(runs)} runs"
        assert runs[0]["status"] != "error", runs[0]["error"]
        assert not any(t in runs[0]["prompt"] for t in texts), runs[0]["prompt"]

    return check


DATASET_ALIAS_BOMB = "- vars: {q: hi}\n  metadata:\n" + "".join(
    f"    {line}\n" for line in ALIAS_BOMB.split("prompts:")[0].splitlines()
)

GENERATOR_EXIT = """\
import sys


def generate_tests():
    sys.exit(0)
"""

CASES = [
    dataset(
        "csv-latin1-byte",
        "tests.csv",
        "q\ncaf\xe9\n".encode("latin-1"),
        bad("tests.csv", "UTF-8", line=2),
    ),
    dataset(
        "csv-wrong-cell-count",
        "tests.csv",
        "q,r\na,b\nc,d,e\n",
        bad("tests.csv", line=3),
    ),
    dataset(
        "csv-nul-byte",
        "tests.csv",
        "q\nhe\x00llo\n",
        Correct("a NUL character in a cell is data", check=prompt_is("Q: he\x00llo")),
    ),
    dataset(
        "csv-empty-file",
        "tests.csv",
        "",
        bad("tests.csv", "no test"),
    ),
    dataset(
        "csv-header-only",
        "tests.csv",
        "q,__expected\n",
        bad("tests.csv", "no test"),
    ),
    dataset(
        "csv-unclosed-quote",
        "tests.csv",
        'q\n"never closed\nnext\n',
        bad("tests.csv", "quote", line=2),
    ),
    dataset(
        "csv-huge-cell-is-data",
        "tests.csv",
        "q\n" + "x" * 300_000 + "\n",
        correct_runs("a 300 kB cell is an ordinary value", 1),
    ),
    dataset(
        "csv-bom-header",
        "tests.csv",
        "\ufeffq\nbom-value\n",
        Correct("the BOM is stripped, as promptfoo does", check=prompt_is("Q: bom-value")),
    ),
    dataset(
        "csv-old-mac-line-endings",
        "tests.csv",
        "q\ra\rb\r",
        correct_runs("carriage-return rows are rows", 2),
    ),
    dataset(
        "csv-windows-line-break-in-a-cell",
        "tests.csv",
        b'q\r\n"two\r\nlines"\r\n',
        Correct(
            "a quoted cell keeps its \\r\\n, as csv-parse does", check=prompt_is("Q: two\r\nlines")
        ),
    ),
    replace(
        dataset(
            "csv-delimiter-two-characters",
            "tests.csv",
            "q\nhi\n",
            bad("suite.yaml", "PROMPTFOO_CSV_DELIMITER"),
        ),
        env={"PROMPTFOO_CSV_DELIMITER": "::"},
    ),
    replace(
        dataset(
            "csv-semicolon-delimiter",
            "tests.csv",
            'q;__expected\n"a, b";contains:a, b\n',
            Correct("cells split at the semicolon", check=prompt_is("Q: a, b")),
        ),
        env={"PROMPTFOO_CSV_DELIMITER": ";"},
    ),
    dataset(
        "csv-template-renders-like-promptfoo",
        "tests.csv",
        'q\n"{{ 7 * 7 }}"\n',
        Correct("a template in a cell renders as in promptfoo", check=prompt_is("Q: 49")),
    ),
    dataset(
        "csv-env-reference-has-no-env",
        "tests.csv",
        'q\n"{{ env.HOSTILE_PLAIN_SECRET }}|{{ env.HOSTILE_API_KEY }}"\n',
        Correct(
            "data cannot read the environment; the run completes",
            check=prompt_lacks("plain-hostile", "sk-hostile"),
        ),
    ),
    dataset(
        "csv-range-bomb-in-cell",
        "tests.csv",
        'q\n"{% for i in range(10**12) %}x{% endfor %}"\n',
        Correct(
            "a var reading a name no test defines (the loop's i) stays as written, as in "
            "promptfoo: the loop never runs",
            check=prompt_is("Q: {% for i in range(10**12) %}x{% endfor %}"),
        ),
    ),
    dataset(
        "csv-output-size-bomb-in-cell",
        "tests.csv",
        "q\n\"{{ 'xy' | replace('', 'x' | center(9000)) | replace('', 'x' | center(9000)) }}\"\n",
        ErrorRow("template_error", message="64 MB"),
    ),
    dataset(
        "csv-string-times-number-is-nan",
        "tests.csv",
        "q\n\"{{ 'x' * 10**9 }}\"\n",
        Correct("JavaScript multiplies a string to NaN, as promptfoo", check=prompt_is("Q: NaN")),
    ),
    dataset(
        "csv-utf16",
        "tests.csv",
        "q\nhello\n".encode("utf-16"),
        bad("tests.csv", "UTF-16"),
    ),
    dataset(
        "jsonl-latin1-on-line-3",
        "tests.jsonl",
        '{"vars": {"q": "a"}}\n{"vars": {"q": "b"}}\n{"vars": {"q": "caf\xe9"}}\n'.encode(
            "latin-1"
        ),
        bad("tests.jsonl", "UTF-8", line=3),
    ),
    dataset(
        "csv-unclosed-quote-in-later-column",
        "tests.csv",
        'q,r\na,b\nc,"d\ne,f\n',
        bad("tests.csv", "quote", line=3),
    ),
    dataset(
        "yaml-dataset-duplicate-key",
        "tests.yaml",
        "- vars: {q: a}\n  description: one\n  description: two\n",
        bad("tests.yaml", "duplicate", line=3),
    ),
    dataset(
        "yaml-dataset-omap-var",
        "tests.yaml",
        "- vars:\n    q: !!omap [{a: 1}, {b: 2}]\n",
        bad("tests.yaml", "q", line=2),
    ),
    dataset(
        "yaml-dataset-file-var-absolute",
        "tests.yaml",
        "- vars: {q: 'file:///etc/passwd'}\n",
        bad("tests.yaml", "outside", line=1),
    ),
    dataset(
        "json-assert-type-unknown-names-dataset",
        "tests.json",
        '[{"vars": {"q": "a"}, "assert": [{"type": "no-such-check", "value": 1}]}]',
        bad("tests.json", "no-such-check"),
        argv=("validate", "suite.yaml"),
    ),
    dataset(
        "csv-file-var-outside-suite",
        "tests.csv",
        "q\nfile:///etc/hostname\n",
        bad("tests.csv", "file://", "outside", line=2),
    ),
    dataset(
        "csv-file-var-parent-dir",
        "tests.csv",
        "q\nfile://../outside/secret.txt\n",
        bad("tests.csv", "file://", "outside", line=2),
    ),
    dataset(
        "csv-file-var-missing",
        "tests.csv",
        "q\nfile://missing.txt\n",
        bad("tests.csv", "missing.txt", line=2),
    ),
    dataset(
        "csv-metadata-priority-unknown",
        "tests.csv",
        "q,__metadata:priority\nhi,P9\n",
        bad("tests.csv", "priority", line=2),
    ),
    dataset(
        "csv-threshold-text",
        "tests.csv",
        "q,__threshold\nhi,high\n",
        bad("tests.csv", "__threshold", line=2),
    ),
    dataset(
        "json-invalid",
        "tests.json",
        '[{"vars": {"q": "a"}},\n {"vars": }]\n',
        bad("tests.json", "JSON", line=2),
    ),
    dataset(
        "json-number-top-level",
        "tests.json",
        "5\n",
        bad("tests.json", "list"),
    ),
    dataset(
        "json-deep-nesting",
        "tests.json",
        '[{"vars": {"q": ' + "[" * 100_000 + "]" * 100_000 + "}}]",
        bad("tests.json", "deep"),
        mode="subprocess",
    ),
    dataset(
        "json-latin1",
        "tests.json",
        '[{"vars": {"q": "caf\xe9"}}]'.encode("latin-1"),
        bad("tests.json", "UTF-8"),
    ),
    dataset(
        "json-vars-not-mapping",
        "tests.json",
        '[{"vars": "hello"}]',
        bad("tests.json", "vars"),
    ),
    dataset(
        "json-test-not-mapping",
        "tests.json",
        '["hello"]',
        bad("tests.json", "mapping"),
    ),
    dataset(
        "json-huge-integer-var",
        "tests.json",
        '[{"vars": {"q": ' + "9" * 5000 + "}}]",
        bad("tests.json", "q"),
    ),
    dataset(
        "jsonl-bad-line",
        "tests.jsonl",
        '{"vars": {"q": "a"}}\n{"vars": \n',
        bad("tests.jsonl", "JSON", line=2),
    ),
    dataset(
        "jsonl-array-line",
        "tests.jsonl",
        '{"vars": {"q": "a"}}\n[1, 2]\n',
        bad("tests.jsonl", "mapping", line=2),
    ),
    dataset(
        "jsonl-blank-lines-skipped",
        "tests.jsonl",
        '\n{"vars": {"q": "a"}}\n\n\n{"vars": {"q": "b"}}\n',
        correct_runs("blank lines are skipped", 2),
    ),
    dataset(
        "yaml-dataset-alias-bomb",
        "tests.yaml",
        DATASET_ALIAS_BOMB,
        bad("tests.yaml", "alias"),
        mode="subprocess",
        limit_s=6,
    ),
    dataset(
        "yaml-dataset-latin1",
        "tests.yaml",
        "- vars: {q: caf\xe9}\n".encode("latin-1"),
        bad("tests.yaml", "UTF-8"),
    ),
    dataset(
        "yaml-dataset-binary-tag",
        "tests.yaml",
        "- vars: {q: !!binary aGVsbG8=}\n",
        bad("tests.yaml", "q", line=1),
    ),
    dataset(
        "yaml-dataset-date-var",
        "tests.yaml",
        "- vars: {q: 2024-01-02}\n",
        Correct("a YAML date is a value like any other", check=prompt_is("Q: 2024-01-02")),
    ),
    dataset(
        "yaml-dataset-set-var",
        "tests.yaml",
        "- vars: {q: !!set {a, b}}\n",
        bad("tests.yaml", "q", line=1),
    ),
    dataset(
        "tests-file-unsupported-type",
        "tests.xlsx",
        b"PK\x03\x04not really a workbook",
        bad("tests.xlsx", "unsupported"),
    ),
    dataset(
        "tests-glob-matches-nothing",
        "tests.csv",
        "q\na\n",
        bad("suite.yaml", "cases/*.csv"),
        ref="file://cases/*.csv",
    ),
    dataset(
        "generator-raises",
        "gen.py",
        "def generate_tests():\n    raise RuntimeError('dataset service down')\n",
        bad("gen.py", "dataset service down"),
        ref="file://gen.py",
    ),
    dataset(
        "generator-returns-number",
        "gen.py",
        "def generate_tests():\n    return 5\n",
        bad("gen.py", "list"),
        ref="file://gen.py",
    ),
    dataset(
        "generator-returns-nothing",
        "gen.py",
        "def generate_tests():\n    return []\n",
        bad("gen.py", "no test"),
        ref="file://gen.py",
    ),
    dataset(
        "generator-calls-sys-exit",
        "gen.py",
        GENERATOR_EXIT,
        bad("gen.py", "SystemExit"),
        ref="file://gen.py",
        mode="subprocess",
    ),
    dataset(
        "generator-keyboard-interrupt",
        "gen.py",
        "def generate_tests():\n    raise KeyboardInterrupt\n",
        bad("gen.py", "KeyboardInterrupt"),
        ref="file://gen.py",
        mode="subprocess",
    ),
    dataset(
        "var-file-yaml-alias-bomb",
        "tests.yaml",
        "- vars: {q: file://bomb.yaml}\n",
        bad("bomb.yaml", "alias"),
        extra={"bomb.yaml": ALIAS_BOMB.split("prompts:")[0]},
        mode="subprocess",
        limit_s=6,
    ),
    dataset(
        "var-file-binary",
        "tests.yaml",
        "- vars: {q: file://blob.txt}\n",
        bad("blob.txt", "UTF-8"),
        extra={"blob.txt": b"\xff\xfe\x81binary"},
    ),
    dataset(
        "yaml-dataset-env-reference-has-no-env",
        "tests.yaml",
        "- vars: {q: '{{ env.HOSTILE_API_KEY }}'}\n",
        Correct(
            "a YAML dataset cannot read the environment",
            check=prompt_lacks("sk-hostile"),
        ),
    ),
]
