"""Regenerate the promptfoo goldens of the compatibility configs.

Runs the real promptfoo CLI on every `configs/<name>/promptfooconfig.yaml` and keeps, per
result row, what the comparison test checks: the row's prompt, provider, test and repeat
position, verdict, score, named scores and each component's type and verdict (and the
reason of comparison components); per prompt column, promptfoo's named scores (where derived
metrics land). Model-graded assertions talk to the local judge of tests/graders/judge_server.py
through OPENAI_BASE_URL. Needs node, the promptfoo package and python3 on PATH (for Python
providers, asserts and transforms):

    python tests/compat/regenerate.py [NAME ...] [--cli path/to/promptfoo]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CONFIGS = HERE / "configs"
DEFAULT_CLI = Path("/work/peers/node_modules/.bin/promptfoo")
COMMAND = (
    "promptfoo eval -c promptfooconfig.yaml -o {out} --no-cache --no-table --no-write"
    "  (env PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 HOME=<empty tmp dir>"
    " OPENAI_BASE_URL=<tests/graders/judge_server.py>)"
)
GROUP_TYPES = ("max-score", "select-best")


def component_fields(component: dict[str, Any]) -> dict[str, Any]:
    """A component result's type, verdict and score; comparisons keep their reason too."""
    kind = (component.get("assertion") or {}).get("type")
    fields = {"type": kind, "pass": component["pass"], "score": component.get("score")}
    if kind in GROUP_TYPES:
        fields["reason"] = component.get("reason")
    return fields


def promptfoo_version(cli: Path) -> str:
    """The version string of the promptfoo package behind `cli`."""
    for directory in cli.resolve().parents:
        package = directory / "package.json"
        if package.is_file() and "version" in package.read_text(encoding="utf-8"):
            return str(json.loads(package.read_text(encoding="utf-8"))["version"])
    raise SystemExit(f"no package.json above {cli}")


def row_key_fields(result: dict[str, Any], prompt_positions: dict[int, int]) -> dict[str, Any]:
    """The identity of one result row, independent of promptfoo's internal ids."""
    provider = result.get("provider") or {}
    test = result.get("testCase") or {}
    return {
        "prompt": prompt_positions[result["promptIdx"]],
        "provider": provider.get("label") or provider.get("id"),
        "description": test.get("description"),
        "vars": result.get("vars") or {},
    }


def trim(output: dict[str, Any]) -> dict[str, Any]:
    """Keep the parts of promptfoo's output file the comparison reads."""
    results = output["results"]
    positions: dict[int, int] = {}
    per_provider: Counter[str] = Counter()
    columns = []
    for index, prompt in enumerate(results["prompts"]):
        positions[index] = per_provider[prompt["provider"]]
        per_provider[prompt["provider"]] += 1
        columns.append(
            {
                "prompt": positions[index],
                "provider": prompt["provider"],
                "label": prompt["label"],
                "namedScores": prompt["metrics"].get("namedScores", {}),
            }
        )
    rows = []
    ordered = sorted(results["results"], key=lambda r: (r["testIdx"], r["promptIdx"]))
    for result in ordered:
        grading = result.get("gradingResult") or {}
        rows.append(
            {
                **row_key_fields(result, positions),
                "promptLabel": (result.get("prompt") or {}).get("label"),
                "output": (result.get("response") or {}).get("output"),
                "success": result["success"],
                "score": result["score"],
                "namedScores": result.get("namedScores") or {},
                "error": result.get("error"),
                "components": [component_fields(c) for c in grading.get("componentResults") or []],
            }
        )
    return {"columns": columns, "rows": rows, "stats": results["stats"]}


def run_promptfoo(
    directory: Path, config: str, cli: Path, env: dict[str, str]
) -> tuple[dict[str, Any] | None, subprocess.CompletedProcess[str]]:
    """promptfoo's output file for `config` in `directory` (None if it wrote none).

    Runs `promptfoo eval -c CONFIG -o out.json --no-cache --no-table --no-write` with an
    empty HOME, telemetry and update checks off, and `env` added to the environment.
    """
    with tempfile.TemporaryDirectory() as home:
        out = Path(home) / "out.json"
        environment = {
            **os.environ,
            **env,
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "HOME": home,
        }
        cmd = [str(cli), "eval", "-c", config, "-o", str(out)]
        cmd += ["--no-cache", "--no-table", "--no-write"]
        proc = subprocess.run(cmd, cwd=directory, env=environment, capture_output=True, text=True)
        if not out.exists():
            return None, proc
        return json.loads(out.read_text(encoding="utf-8")), proc


def run_one(name: str, cli: Path, version: str, judge_url: str) -> bool:
    """Run promptfoo on one config and write its trimmed golden next to it."""
    directory = CONFIGS / name
    env = {"OPENAI_BASE_URL": judge_url, "OPENAI_API_KEY": "local-judge"}
    output, proc = run_promptfoo(directory, "promptfooconfig.yaml", cli, env)
    if output is None:
        print(f"{name}: promptfoo wrote no output\n{proc.stderr[-2000:]}", file=sys.stderr)
        return False
    golden = {"promptfoo": version, "command": COMMAND.format(out="golden.json"), **trim(output)}
    text = json.dumps(golden, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    (directory / "golden.json").write_text(text, encoding="utf-8")
    print(f"{name}: {len(golden['rows'])} rows (exit {proc.returncode})")
    return True


def main(argv: list[str] | None = None) -> int:
    """Regenerate the named goldens, or all of them."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--cli", type=Path, default=DEFAULT_CLI)
    args = parser.parse_args(argv)
    names = args.names or sorted(p.parent.name for p in CONFIGS.glob("*/promptfooconfig.yaml"))
    version = promptfoo_version(args.cli)
    sys.path.insert(0, str(HERE.parents[1]))
    from tests.graders.judge_server import base_url, judge_server

    with judge_server() as judge:
        failed = [name for name in names if not run_one(name, args.cli, version, base_url(judge))]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
