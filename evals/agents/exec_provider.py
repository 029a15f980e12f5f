"""promptfoo's `exec:` provider: any command that reads its arguments and prints an answer.

`exec: python agent.py` runs `python agent.py PROMPT OPTIONS_JSON CONTEXT_JSON` in the
suite's directory; what it prints on stdout is the output. `python` and `python3` as the
command are the interpreter running evals (`sys.executable`), whatever PATH holds, so a
script finds what evals' environment has installed; its imports are checked before any
run (`script_imports`). A non-zero exit, or stderr
with no stdout, is an error. The harness adds one thing to promptfoo's contract: stdout
that is a JSON provider response (`{"output": ...}` or `{"error": ...}`, with tokenUsage,
cost, trajectory...) is read as such, so a script can report usage and its trajectory.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext, normalize_response
from evals.agents.processes import (
    MAX_REPLY_BYTES,
    abandon_group,
    end_group,
    exited,
    new_group,
    read_at_most,
    read_tail,
    start_agent_process,
    tail,
)
from evals.agents.validate import MalformedResponse, load_json
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec

_ANSI_ESCAPE = re.compile(r"\x1b(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")
_SCRIPT_PART = re.compile(r"""[^\s"']+|"([^"]*)"|'([^']*)'""")


def parse_command(provider_id: str) -> list[str]:
    """The words of an `exec:` command, honouring single and double quotes like promptfoo."""
    command = provider_id.split(":", 1)[1] if ":" in provider_id else provider_id
    parts = []
    for match in _SCRIPT_PART.finditer(command):
        double, single = match.group(1), match.group(2)
        parts.append(double if double is not None else single if single is not None else match[0])
    return parts


def strip_ansi(text: str) -> str:
    """Remove terminal colour codes, as promptfoo does before reading a script's output."""
    return _ANSI_ESCAPE.sub("", text)


def read_script_output(stdout: str) -> AgentResponse:
    """A provider response when stdout is one, otherwise stdout itself as the output.

    Its `logProbs` are left out: promptfoo's exec provider answers stdout as text, so
    its perplexity assertions never see log-probabilities from a command.
    """
    if stdout.startswith("{"):
        try:
            parsed = load_json(stdout, "the command's output")
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and ("output" in parsed or "error" in parsed):
            return normalize_response({k: v for k, v in parsed.items() if k != "logProbs"})
    return AgentResponse(output=stdout)


# Command names that mean the interpreter running evals.
PYTHON_COMMANDS = ("python", "python3")


def command_argv(provider_id: str) -> list[str]:
    """The words of an `exec:` command, `python`/`python3` replaced by `sys.executable`."""
    argv = parse_command(provider_id)
    if argv and argv[0] in PYTHON_COMMANDS:
        argv[0] = sys.executable
    return argv


def python_script(argv: list[str], cwd: Path) -> Path | None:
    """The script file a `python [options] script.py ...` command runs, when it has one."""
    if not argv or argv[0] != sys.executable:
        return None
    for word in argv[1:]:
        if word == "-m" or word == "-c":
            return None
        if not word.startswith("-"):
            script = cwd / word
            return script if script.suffix == ".py" and script.is_file() else None
    return None


def check_exec_provider(spec: ProviderSpec, root: Path) -> None:
    """Refuse, before any run, an `exec:` command without a command, and a Python script
    that imports a module this interpreter lacks (naming the extra that provides it)."""
    from evals.agents.script_imports import install_hint, missing_imports
    from evals.model.errors import SuiteError

    argv = command_argv(spec.id)
    if not argv:
        raise SuiteError(
            f"provider {spec.id!r} has no command",
            line=spec.line,
            fix="write exec: python agent.py (the prompt, options and context are appended)",
        )
    cwd = Path(spec.config.get("basePath") or root)
    script = python_script(argv, cwd)
    if script is None:
        return
    missing = missing_imports(script)
    if missing:
        raise SuiteError(
            f"provider {spec.label!r} ({script.name}) imports {missing[0]}, which is not "
            f"installed for {sys.executable}",
            line=spec.line,
            fix=install_hint(missing[0]),
        )


class ExecAgent:
    """An agent behind a command line, one process per call."""

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        self.label = spec.label
        self.argv = command_argv(spec.id)
        if not self.argv:
            raise ValueError(f"provider {spec.id!r} has no command after 'exec:'")
        self.cwd = Path(spec.config.get("basePath") or root)
        self.options: dict[str, Any] = {
            "id": spec.id,
            "label": spec.label,
            "config": {**spec.config, "basePath": str(self.cwd)},
        }
        self.env = spec.config.get("env") or {}

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Run the command once. Its answer is what it printed until it exited: then, or
        when the call is cancelled (a timeout), the command and every process it started
        (daemons and new sessions too) are killed, so nothing it left holds its output
        open or outlives the run."""
        ctx = {**context.promptfoo_context(), "traceparent": context.traceparent}
        args = [
            *self.argv,
            prompt,
            json.dumps(self.options, ensure_ascii=False, default=str),
            json.dumps(ctx, ensure_ascii=False, default=str),
        ]
        group = new_group()
        proc = await start_agent_process(
            args,
            cwd=self.cwd,
            context=context,
            extra_env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            group=group,
        )
        assert proc.stdout is not None and proc.stderr is not None
        reading = asyncio.ensure_future(read_at_most(proc.stdout, MAX_REPLY_BYTES))
        errors = asyncio.ensure_future(read_tail(proc.stderr))
        exit_code = asyncio.ensure_future(exited(proc))
        try:
            await asyncio.wait((reading, exit_code), return_when=asyncio.FIRST_COMPLETED)
            if not (reading.done() and reading.result() is None):
                await exit_code
        except BaseException as stopped:
            for task in (reading, errors, exit_code):
                task.cancel()
            if isinstance(stopped, GeneratorExit):  # closed, not cancelled: no await left
                abandon_group(proc, group)
            else:
                await end_group(proc, group)
            raise
        # the command has exited (or printed too much): what it started ends with it,
        # which closes the pipes a child of it still held open
        await end_group(proc, group)
        out, err = await reading, await errors
        if out is None:
            raise MalformedResponse(
                f"command {self.argv[0]!r} printed more than {MAX_REPLY_BYTES >> 20} MiB"
            )
        stdout = strip_ansi(out.decode("utf-8", errors="replace")).strip()
        stderr = strip_ansi(err.decode("utf-8", errors="replace")).strip()
        if proc.returncode != 0:
            detail = f": {tail(stderr)}" if stderr else ""
            return AgentResponse(
                error=f"command {self.argv[0]!r} exited with code {proc.returncode}{detail}"
            )
        if stderr and not stdout:
            return AgentResponse(error=tail(stderr))
        return read_script_output(stdout)

    async def aclose(self) -> None:
        """Nothing stays running between calls."""
