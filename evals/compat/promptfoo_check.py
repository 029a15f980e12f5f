"""`evals compat-check`: do promptfoo and evals give the same rows on these configs?

Every YAML/JSON file under the paths given that is a mapping with `prompts`,
`providers` (or `targets`) and `tests` (or `scenarios`) is a config. Each config is run by
the real promptfoo CLI (`promptfoo eval -c CONFIG -o out.json --no-cache --no-table
--no-write`, with an empty HOME, telemetry and update checks off) and its output trimmed
to a golden, kept under `goldens` (default: a `.promptfoo-goldens` folder beside each
config) so later checks only re-run promptfoo when asked to refresh. The same config is
then loaded and run by the harness, from the config's directory, and the rows are
compared (`evals.compat.promptfoo_rows`).

The report gives agreement per config and per assertion type (each row counts for every
assertion type its test uses), and lists every differing row. A config the harness refuses
to load counts all of promptfoo's rows as differing; a config promptfoo cannot run at all
(no output file) is listed as skipped with promptfoo's last error lines. Rows whose
prompt label or provider name differs while the test is the same are still compared, and
the naming difference is listed apart; vars promptfoo redacts in its output file (names
such as `api_key`) match any value.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evals.common.yaml12 import load_yaml_text
from evals.compat.promptfoo_rows import (
    golden_rows,
    harness_rows,
    is_error_row,
    promptfoo_version,
    row_differences,
    run_promptfoo,
    trim,
)
from evals.model.errors import SuiteError
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class ConfigOutcome:
    """What one config gave: rows compared, rows differing, and why a config was skipped."""

    path: Path
    rows: int = 0
    agreeing: int = 0
    skipped: str | None = None
    refused: str | None = None
    promptfoo_errors: int = 0
    agreeing_errors: int = 0
    differences: list[str] = field(default_factory=list)
    identity: list[str] = field(default_factory=list)
    by_type: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))


def is_config(path: Path) -> bool:
    """Whether a file looks like a promptfoo config: prompts, providers and tests."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else load_yaml_text(text)
    except (OSError, ValueError, yaml.YAMLError):
        return False
    if not isinstance(data, dict):
        return False
    has_targets = "providers" in data or "targets" in data
    return "prompts" in data and has_targets and ("tests" in data or "scenarios" in data)


PROMPTFOO_CONFIG_NAMES = frozenset(f"promptfooconfig{suffix}" for suffix in CONFIG_SUFFIXES)
"""The names `promptfoo eval` looks for: a file so named is a config even when it does not
parse (both tools then say why, rather than the config going unseen)."""


def find_configs(paths: list[Path]) -> list[Path]:
    """Every config named, or found under the directories named, in a stable order. A file
    named on the command line is compared whatever it holds; under a directory, files named
    as promptfoo's configs and files that read as one (prompts, providers and tests)."""
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path.resolve())
            continue
        candidates = sorted(p for p in path.rglob("*") if p.suffix in CONFIG_SUFFIXES)
        found += [
            p.resolve()
            for p in candidates
            if ".promptfoo-goldens" not in p.parts
            and (p.name in PROMPTFOO_CONFIG_NAMES or is_config(p))
        ]
    return found


def golden_path(config: Path, goldens: Path | None) -> Path:
    """Where the golden of `config` is kept."""
    folder = goldens if goldens is not None else config.parent / ".promptfoo-goldens"
    return folder / f"{config.parent.name}__{config.stem}.json"


def promptfoo_golden(
    config: Path, cli: Path, env: dict[str, str]
) -> tuple[dict[str, Any] | None, str]:
    """promptfoo's trimmed output for `config`, or None and what it printed instead."""
    output, proc = run_promptfoo(config.parent, config.name, cli, env)
    if output is None:
        return None, proc.stderr or proc.stdout
    return trim(output), ""


@contextlib.contextmanager
def inside(directory: Path, env: dict[str, str]) -> Iterator[None]:
    """Run with `directory` as the working directory and `env` added to the environment."""
    before_cwd, before_env = Path.cwd(), dict(os.environ)
    os.chdir(directory)
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(before_cwd)
        os.environ.clear()
        os.environ.update(before_env)


def run_harness(config: Path, env: dict[str, str]) -> Any:
    """The harness's evaluation of `config`, run from the config's directory."""
    with inside(config.parent, env):
        suite = load_suite(config)
        return run_evaluation(suite, RunOptions(use_store=False, progress=False, concurrency=2))


def row_types(row: dict[str, Any]) -> list[str]:
    """The assertion types a golden row's test uses ('(none)' for a test without any)."""
    types = sorted({str(c["type"]) for c in row["components"]})
    return types or ["(none)"]


REDACTED = "[REDACTED]"


def _same_vars(expected: str, actual: str) -> bool:
    """Equal vars, where promptfoo's output file redacted a value (secret-looking names)."""
    want, got = json.loads(expected), json.loads(actual)
    if want.keys() != got.keys():
        return False
    return all(w == REDACTED or w == got[k] for k, w in want.items())


def _prompt_text(label: str) -> str:
    """A prompt label without its file prefix (`dir/p.txt: text`) and whitespace."""
    head, sep, tail = label.partition(": ")
    text = tail if sep and " " not in head and ("/" in head or "." in head) else label
    return "".join(text.split())


def _pairing_passes(key: tuple[Any, ...], other: tuple[Any, ...]) -> list[bool]:
    """How well a harness row key fits a promptfoo row key, best test first."""
    same_test = other[3] == key[3] and _same_vars(key[2], other[2])
    same_text = _prompt_text(other[0]) == _prompt_text(key[0])
    return [
        same_test and other[:2] == key[:2],
        same_test and other[1] == key[1] and same_text,
        same_test and other[0] == key[0],
    ]


def pair_rows(expected: dict[Any, Any], actual: dict[Any, Any]) -> tuple[dict[Any, Any], list[str]]:
    """Pair each promptfoo row with the harness's row for the same test and repeat.

    Rows are keyed by (prompt label, provider, vars, repeat). A row whose key is missing is
    paired with an unpaired harness row of equal vars (allowing promptfoo's redactions) and
    repeat that has the same provider and prompt text (the label's file prefix aside) or the
    same prompt label: the verdicts are then still compared, and the label or provider
    difference is reported on its own.
    """
    pairs = {k: actual[k] for k in expected.keys() & actual.keys()}
    spare = [k for k in actual if k not in pairs]
    notes = []
    for level in range(3):
        for key in [k for k in expected if k not in pairs]:
            fits = [o for o in spare if _pairing_passes(key, o)[level]]
            if fits:
                pairs[key] = actual[fits[0]]
                spare.remove(fits[0])
                if fits[0][:2] != key[:2]:
                    notes.append(f"row identity {key[:2]} != {fits[0][:2]}")
    notes += [f"extra row {k}" for k in spare]
    return pairs, notes


def compare(config: Path, golden: dict[str, Any], env: dict[str, str]) -> ConfigOutcome:
    """Run the harness on `config` and compare its rows with promptfoo's."""
    outcome = ConfigOutcome(config)
    expected = golden_rows(golden)
    outcome.rows = len(expected)
    try:
        actual = harness_rows(run_harness(config, env))
    except SuiteError as exc:
        outcome.refused = str(exc).splitlines()[0][:300]
        actual = {}
    except Exception as exc:  # a crash is a finding to report, not a reason to stop
        outcome.refused = f"crash: {type(exc).__name__}: {exc}"[:300]
        actual = {}
    pairs, outcome.identity = pair_rows(expected, actual)
    for key, row in expected.items():
        found = pairs.get(key)
        diffs = ["missing row"] if found is None else row_differences(row, found)
        verdict = "differ" if diffs else "agree"
        for kind in row_types(row):
            outcome.by_type[kind][verdict] += 1
        if is_error_row(row):
            outcome.promptfoo_errors += 1
            outcome.agreeing_errors += not diffs
        if diffs:
            outcome.differences += [f"{key}: {d}" for d in diffs]
        else:
            outcome.agreeing += 1
    return outcome


def error_line(output: str) -> str:
    """The line of promptfoo's output that says what went wrong: the first naming an error
    or exception (not a line of a stack trace or of the code shown), else its last line."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    for line in lines:
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception")) or line.lower().startswith("error"):
            return line[:300]
    return lines[-1][:300] if lines else "(nothing printed)"


def harness_load(config: Path, env: dict[str, str]) -> str:
    """Whether the harness loads `config`, said for a config promptfoo refused."""
    try:
        with inside(config.parent, env):
            load_suite(config)
    except SuiteError as exc:
        return f"evals refuses it too: {str(exc).splitlines()[0][:300]}"
    return "evals loads it"


def evaluate(
    config: Path, cli: Path, goldens: Path | None, refresh: bool, env: dict[str, str]
) -> ConfigOutcome:
    """Golden (cached or fresh) then comparison, for one config."""
    target = golden_path(config, goldens)
    if refresh or not target.exists():
        golden, error = promptfoo_golden(config, cli, env)
        if golden is None:
            note = f"promptfoo wrote no output: {error_line(error)}; {harness_load(config, env)}"
            return ConfigOutcome(config, skipped=note)
        target.parent.mkdir(parents=True, exist_ok=True)
        golden = {"promptfoo": promptfoo_version(cli), **golden}
        target.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", "utf-8")
    golden = json.loads(target.read_text(encoding="utf-8"))
    return compare(config, golden, env)


def percent(part: int, whole: int) -> str:
    """`part/whole` as a percentage with one decimal, or '-' for nothing compared."""
    return f"{100 * part / whole:.1f} %" if whole else "-"


def report(outcomes: list[ConfigOutcome], root: Path, verbose: bool) -> dict[str, Any]:
    """Print the agreement tables and return them as data."""
    compared = [o for o in outcomes if o.skipped is None]
    rows = sum(o.rows for o in compared)
    agreeing = sum(o.agreeing for o in compared)
    print(f"configs: {len(outcomes)} found, {len(compared)} compared, rows: {rows}")
    errors = sum(o.promptfoo_errors for o in compared)
    agreeing_errors = sum(o.agreeing_errors for o in compared)
    print(f"agreement: {agreeing}/{rows} rows ({percent(agreeing, rows)})")
    clean, clean_agreeing = rows - errors, agreeing - agreeing_errors
    print(
        f"rows promptfoo graded without an error: {clean_agreeing}/{clean} agree"
        f" ({percent(clean_agreeing, clean)}); rows promptfoo made errors:"
        f" {agreeing_errors}/{errors} agree\n"
    )
    print("| config | rows | agree | note |\n| --- | --- | --- | --- |")
    for o in outcomes:
        name = o.path.relative_to(root) if o.path.is_relative_to(root) else o.path
        note = o.skipped or (f"refused: {o.refused}" if o.refused else "")
        print(f"| {name} | {o.rows} | {o.agreeing} | {note.replace('|', '/')[:160]} |")
    types: dict[str, Counter[str]] = defaultdict(Counter)
    for o in compared:
        for kind, counts in o.by_type.items():
            types[kind].update(counts)
    print("\n| assertion type | rows | agree |\n| --- | --- | --- |")
    for kind in sorted(types):
        total = types[kind]["agree"] + types[kind]["differ"]
        agree = types[kind]["agree"]
        print(f"| {kind} | {total} | {agree} ({percent(agree, total)}) |")
    if verbose:
        for o in compared:
            for line in o.differences + o.identity:
                print(f"{o.path.name}: {line}")
    return {
        "rows": rows,
        "agreeing": agreeing,
        "promptfoo_error_rows": errors,
        "configs": [
            {
                "config": str(o.path),
                "rows": o.rows,
                "agreeing": o.agreeing,
                "skipped": o.skipped,
                "refused": o.refused,
                "promptfoo_errors": o.promptfoo_errors,
                "differences": o.differences,
                "identity": o.identity,
            }
            for o in outcomes
        ],
        "by_type": {k: dict(v) for k, v in types.items()},
    }


def check(
    paths: list[Path],
    *,
    cli: Path,
    goldens: Path | None = None,
    refresh: bool = False,
    env: dict[str, str] | None = None,
    verbose: bool = False,
) -> dict[str, Any]:
    """Compare promptfoo and the harness on every config under `paths`; print the report
    and return it as data (SuiteError when no config is found)."""
    configs = find_configs(paths)
    if not configs:
        raise SuiteError(
            "no promptfoo config found under the paths given",
            fix="name config files or folders holding them (prompts, providers and tests)",
        )
    needs_cli = refresh or any(not golden_path(c, goldens).exists() for c in configs)
    if needs_cli and shutil.which(str(cli)) is None:
        raise SuiteError(
            f"the promptfoo CLI {str(cli)!r} was not found, and configs have no golden yet",
            fix="install promptfoo (npm install promptfoo@0.121) and name it with --promptfoo "
            "or $EVALS_PROMPTFOO, or point --goldens at goldens already made",
        )
    outcomes = [evaluate(config, cli, goldens, refresh, env or {}) for config in configs]
    root = Path(os.path.commonpath([str(c.parent) for c in configs]))
    return report(outcomes, root, verbose)
