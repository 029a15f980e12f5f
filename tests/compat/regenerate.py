"""Regenerate the promptfoo goldens of the compatibility configs.

Runs the real promptfoo CLI on every `configs/<name>/promptfooconfig.yaml` and keeps, per
result row, what the comparison test checks: the row's prompt, provider, test and repeat
position, verdict, score, named scores and each component's type and verdict (and the
reason of comparison components); per prompt column, promptfoo's named scores (where derived
metrics land). Model-graded assertions talk to the local judge of tests/graders/judge_server.py
through OPENAI_BASE_URL. Needs node, the promptfoo package and python3 on PATH (for Python
providers, asserts and transforms):

    python tests/compat/regenerate.py [NAME ...] [--cli path/to/promptfoo]

promptfoo 0.121 grades `meteor` only when its `import("natural")` sees natural's named
exports: `meteor_wordnet` was written with a promptfoo whose node_modules/natural re-exports
natural 8.1.1 as an ES module (docs/promptfoo.md, "`meteor` and promptfoo 0.121").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from evals.compat.promptfoo_rows import promptfoo_version, run_promptfoo, trim

HERE = Path(__file__).parent
CONFIGS = HERE / "configs"
DEFAULT_CLI = Path(os.environ.get("EVALS_PROMPTFOO", "promptfoo"))
COMMAND = (
    "promptfoo eval -c promptfooconfig.yaml -o {out} --no-cache --no-table --no-write"
    "  (env PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 HOME=<empty tmp dir>"
    " OPENAI_BASE_URL=<tests/graders/judge_server.py>)"
)


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
