"""Regenerate the goldens of the simulated-user configs with the real promptfoo CLI, offline.

promptfoo's simulated user asks promptfoo's hosted model for each user message; here
`PROMPTFOO_REMOTE_GENERATION_URL` points it at `servers.py`, which answers with the same
Python user (`_shared/user.py`) that evals runs as each config's `config.provider`, and the
agents (`openai:gpt-5-mini`) and the judge are served by the same local server through
`OPENAI_BASE_URL`. Needs node, the promptfoo package and python3 on PATH:

    python -m tests.compat.simulated_user.regenerate [NAME ...] [--cli path/to/promptfoo]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from evals.compat.promptfoo_rows import promptfoo_version, run_promptfoo, trim
from tests.compat.simulated_user.servers import environment, services

HERE = Path(__file__).parent
NAMES = sorted(p.parent.name for p in HERE.glob("*/promptfooconfig.yaml"))
COMMAND = (
    "promptfoo eval -c promptfooconfig.yaml -o {out} --no-cache --no-table --no-write"
    "  (env PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 HOME=<empty tmp dir>"
    " OPENAI_BASE_URL, OPENAI_API_KEY and PROMPTFOO_REMOTE_GENERATION_URL=<servers.py>)"
)


def golden(name: str, cli: Path, base: str) -> dict:
    """promptfoo's trimmed rows for one config."""
    output, proc = run_promptfoo(HERE / name, "promptfooconfig.yaml", cli, environment(base))
    if output is None:
        raise SystemExit(f"{name}: promptfoo wrote no output\n{proc.stderr[-2000:]}")
    return {"promptfoo": promptfoo_version(cli), "command": COMMAND.format(out="golden.json")} | (
        trim(output)
    )


def main(argv: list[str] | None = None) -> int:
    """Regenerate the named goldens, or all of them."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*")
    parser.add_argument(
        "--cli", type=Path, default=Path(os.environ.get("EVALS_PROMPTFOO", "promptfoo"))
    )
    args = parser.parse_args(argv)
    with services() as base:
        for name in args.names or NAMES:
            data = golden(name, args.cli, base)
            text = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
            (HERE / name / "golden.json").write_text(text, encoding="utf-8")
            print(f"{name}: {len(data['rows'])} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
