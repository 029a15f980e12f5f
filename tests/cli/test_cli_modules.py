"""The command line's shape: one module per command, listed once; the options several
commands share defined once, in `evals.cli.options`; no command module starts or replaces
a process (that happens below the command line, in `evals.pipeline` and `evals.team`)."""

from __future__ import annotations

import argparse
import ast
import pkgutil
from pathlib import Path

import pytest

import evals.cli
from evals.cli import COMMANDS, build_parser

CLI = Path(evals.cli.__file__).parent
HELPERS = {"options", "values"}
"""The modules of the package that are not commands."""

SHARED = {
    "--env": {"compat_check"},  # there: NAME=VALUE variables for both tools, not a gate environment
    "--quiet": set(),
    "--concurrency": set(),
    "--timeout": set(),
    "--store": set(),
    "--repeat": {"triage"},  # there: which repeat of a stored run is annotated
    "--seed": set(),
    "--evaluation-id": set(),
    "--agent": {"triage"},  # there: the agent of the one stored run annotated
    "--by": set(),
    "--output": {"triage"},  # there: the labels file to write, not a report
    "--executor": set(),
    "--adaptive": set(),
    "--until-decided": set(),
}
"""Each shared option, with the command modules where the same flag means something else."""


def _sources() -> dict[str, ast.Module]:
    return {
        path.stem: ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(CLI.glob("*.py"))
    }


def _flags_defined(tree: ast.Module) -> set[str]:
    """The option strings of every `add_argument` call in a module."""
    return {
        arg.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_argument"
        for arg in node.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }


def test_every_command_module_is_listed_once_in_help_order() -> None:
    modules = {m.name for m in pkgutil.iter_modules([str(CLI)])} - HELPERS
    listed = [command.__name__.rpartition(".")[2] for command in COMMANDS]

    assert sorted(listed) == sorted(modules)
    assert len(set(listed)) == len(listed)


def test_each_command_module_adds_the_command_it_is_named_after() -> None:
    for command in COMMANDS:
        parser = argparse.ArgumentParser(prog="evals")
        commands = parser.add_subparsers(dest="command")
        command.add_command(commands)
        name = command.__name__.rpartition(".")[2].replace("_", "-")
        assert list(commands.choices) == [name]


def test_every_leaf_command_has_a_handler() -> None:
    def leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not groups:
            return [parser]
        return [leaf for sub in groups[0].choices.values() for leaf in leaves(sub)]

    for leaf in leaves(build_parser()):
        assert callable(leaf.get_default("handler")), leaf.prog


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_a_shared_option_is_defined_once_in_the_options_module(flag: str) -> None:
    defining = {name for name, tree in _sources().items() if flag in _flags_defined(tree)}

    assert defining == {"options", *SHARED[flag]}


FORBIDDEN_CALLS = {"execve", "execv", "execvp", "fork", "spawnv", "Popen", "run", "system"}
FORBIDDEN_MODULES = {
    "subprocess",
    "multiprocessing",
    "evals.store.process",
    "evals.reports.json_stream",
}


def test_no_command_module_starts_or_replaces_a_process() -> None:
    found = []
    for name, tree in _sources().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [
                    f"{name}: import {a.name}" for a in node.names if a.name in FORBIDDEN_MODULES
                ]
            elif isinstance(node, ast.ImportFrom) and node.module in FORBIDDEN_MODULES:
                found.append(f"{name}: from {node.module} import ...")
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in {"os", "subprocess"}
                and node.attr in FORBIDDEN_CALLS
            ):
                found.append(f"{name}: {node.value.id}.{node.attr}")

    assert found == []


def test_a_new_command_is_one_module_and_one_line_of_the_list(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command written the way the package's own are, added with one line of `COMMANDS`:
    parsed, listed in the help, handled, its shared options and exit code as the others'."""
    import types

    from evals.cli import options

    command = types.ModuleType("evals.cli.greet")

    def add_command(commands: options.Commands) -> None:
        greet = commands.add_parser("greet", help="say hello to a stored suite")
        options.suite_id(greet, required=True)
        options.quiet(greet)
        greet.set_defaults(handler=handle)

    def handle(args: argparse.Namespace) -> int:
        if not args.quiet:
            print(f"hello {args.suite}")
        return 0

    command.add_command = add_command  # type: ignore[attr-defined]
    monkeypatch.setattr(evals.cli, "COMMANDS", (*COMMANDS, command))

    assert evals.cli.main(["greet", "--suite", "demo"]) == 0
    assert capsys.readouterr().out == "hello demo\n"
    with pytest.raises(SystemExit):
        evals.cli.main(["--help"])
    assert "greet" in capsys.readouterr().out
