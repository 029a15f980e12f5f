"""What evals prints cannot run commands of the CI runner reading the log.

GitHub Actions obeys any line of a job's log that starts with `::` (after blanks) as a
workflow command: `::error::` annotates, `::add-mask::` hides text, `::stop-commands::`
silences the log's own commands. A tag, a case's description or an agent's error that evals
prints can hold such a line (a newline in it, or the terminal wrapping a long cell before
`::`). Inside GitHub Actions, everything evals prints therefore sits between
`::stop-commands::TOKEN` and `::TOKEN::`, the runner's documented way to print untrusted
text: the token is random, so what is printed cannot end the pause.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def workflow_commands_paused() -> Iterator[None]:
    """Within the block, lines evals prints are not workflow commands (in GitHub Actions;
    elsewhere nothing changes)."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        yield
        return
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", file=sys.stdout, flush=True)
    try:
        yield
    finally:
        sys.stderr.flush()
        print(f"::{token}::", file=sys.stdout, flush=True)
