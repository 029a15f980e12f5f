"""A user's project for the CI loop: the agent `calcbot` as a package, a 20-case suite
(tags arith, units, greeting), a virtual environment of the user's own, and the CI steps
(the nightly's shards and merge, a pull request built as GitHub builds it) run as
commands in that environment.

The agent answers from the run's seed, so equal seeds answer alike on both sides. Every
call appends one line to $CALLS_FILE: the file `calcbot` was imported from and the
package's `MARK`, which each branch sets, so a test tells which side made a call and
which code answered it.

Layouts (how the agent's code is found):

- `suite-folder`: the `calcbot` package sits beside the suite's `agent.py`;
- `pythonpath`: `src/calcbot`, found through `PYTHONPATH=<checkout>/src`;
- `editable`: `src/calcbot` installed with `pip install -e .`;
- `installed`: `src/calcbot` installed with `pip install .` (a copy in site-packages);
- `exec`: installed editable, the provider is `exec: python -m calcbot.cli`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYOUTS = ("suite-folder", "pythonpath", "editable", "installed", "exec")
PACKAGED = ("editable", "installed", "exec")

CALCBOT = '''\
"""calcbot: arithmetic, unit conversions and greetings."""

import os
import random

MARK = "main"
FACTORS = {"km": 1000, "m": 1, "cm": 0.01}


def _log():
    path = os.environ.get("CALLS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{__file__}\\t{MARK}\\n")


def convert(amount, unit, target):
    return amount * FACTORS[unit] / FACTORS[target]


def answer(topic, question, seed):
    """The reply to one question; a few draws in a hundred answer wrongly."""
    _log()
    draw = random.Random(seed).random()
    wrong = draw < 0.03
    if topic == "arith":
        left, right = (int(x) for x in question.split("+"))
        return str(left + right + (1 if wrong else 0))
    if topic == "units":
        amount, unit, _, target = question.split()
        value = convert(float(amount), unit, target)
        return f"{value + (1 if wrong else 0):g} {target}"
    return "Hi." if wrong else f"Hello, {question}!"
'''

# Breaks 60 % of the `units` answers: a regression on one tag.
REGRESSION = CALCBOT.replace(
    "        value = convert(float(amount), unit, target)\n",
    "        value = convert(float(amount), unit, target)\n"
    "        if draw > 0.4:\n"
    "            value = value / 10\n",
)

# Same answers, other words: a harmless refactor.
REFACTOR = CALCBOT.replace(
    "def convert(amount, unit, target):\n    return amount * FACTORS[unit] / FACTORS[target]",
    "def convert(amount, unit, target):\n    in_metres = amount * FACTORS[unit]\n"
    "    return in_metres / FACTORS[target]",
)

# Every run errors.
BROKEN = CALCBOT.replace(
    "    _log()\n    draw", '    _log()\n    raise RuntimeError("calcbot is down")\n    draw'
)

# Importing the package fails.
CRASH = "import calcbot_helpers_that_do_not_exist\n" + CALCBOT

CLI = '''\
"""`python -m calcbot.cli PROMPT OPTIONS CONTEXT`: promptfoo's exec contract."""

import json
import sys

from calcbot import answer

context = json.loads(sys.argv[3])
print(answer(context["vars"]["topic"], context["vars"]["question"], context["seed"]))
'''

AGENT = """\
from calcbot import answer


def call_api(prompt, options, context):
    variables = context["vars"]
    return {"output": answer(variables["topic"], variables["question"], context["seed"])}
"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "calcbot"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []

[tool.setuptools.packages.find]
where = ["src"]
"""

CASES = [
    *(
        ("arith", f"{a}+{b}", str(a + b))
        for a, b in ((2, 3), (10, 7), (41, 1), (6, 6), (9, 13), (30, 12), (5, 8))
    ),
    *(
        ("units", q, expected)
        for q, expected in (
            ("3 km in m", "3000 m"),
            ("250 cm in m", "2.5 m"),
            ("2 m in cm", "200 cm"),
            ("7 km in cm", "700000 cm"),
            ("1500 m in km", "1.5 km"),
            ("12 m in cm", "1200 cm"),
            ("5 km in m", "5000 m"),
        )
    ),
    *(
        ("greeting", name, f"Hello, {name}!")
        for name in ("Ada", "Alan", "Grace", "Linus", "Barbara", "Ken")
    ),
]

SUITE = """\
description: calcbot
prompts: ["{{{{question}}}}"]
providers:
  - {{id: "{provider}", label: calcbot}}
evaluateOptions: {{maxConcurrency: 4}}
gates:
  min_pass_rate: 0.8
  max_regression: 0.1
  per_tag:
    units: {{max_regression: 0.1}}
  environments:
    pr: {{repeat: 3}}
    nightly: {{repeat: {nightly_repeats}}}
tests:
"""


def case_text(topic: str, question: str, expected: str) -> str:
    """One case of the suite."""
    return (
        f"  - description: {topic} {question}\n"
        f"    vars: {{topic: {topic}, question: '{question}'}}\n"
        f"    assert: [{{type: contains, value: '{expected}'}}]\n"
        f"    metadata: {{tags: [{topic}]}}\n"
    )


def suite_text(provider: str, nightly_repeats: int) -> str:
    """The suite YAML with every case."""
    head = SUITE.format(provider=provider, nightly_repeats=nightly_repeats)
    return head + "".join(case_text(*case) for case in CASES)


def git(repo: Path, *args: str) -> str:
    """git in `repo` as a fixed author; stdout."""
    return subprocess.run(
        ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@dataclass
class Project:
    """The user's repository (a bare origin and a developer's clone), their virtual
    environment with the harness, and how the CI steps run there."""

    layout: str
    work: Path
    uv: str
    nightly_repeats: int = 3
    calls: Path = field(init=False)
    origin: Path = field(init=False)
    dev: Path = field(init=False)
    venv: Path = field(init=False)
    env_cache: Path = field(init=False)

    def __post_init__(self) -> None:
        self.calls = self.work / "calls.txt"
        self.origin = self.work / "origin.git"
        self.dev = self.work / "dev"
        self.venv = self.work / "venv"
        self.env_cache = self.work / "env-cache"

    # -- the code -----------------------------------------------------------------------

    @property
    def package(self) -> str:
        """Where calcbot's `__init__.py` lives in the repository."""
        if self.layout == "suite-folder":
            return "evals-suite/calcbot/__init__.py"
        return "src/calcbot/__init__.py"

    @property
    def suite(self) -> str:
        return "evals-suite/promptfooconfig.yaml"

    def create(self) -> None:
        """The repository on `main`, pushed to a bare origin; the user's environment."""
        self.dev.mkdir(parents=True)
        package = self.dev / self.package
        package.parent.mkdir(parents=True)
        package.write_text(CALCBOT, encoding="utf-8")
        suite_dir = self.dev / "evals-suite"
        suite_dir.mkdir(exist_ok=True)
        if self.layout == "exec":
            (package.parent / "cli.py").write_text(CLI, encoding="utf-8")
            provider = "exec: python -m calcbot.cli"
        else:
            (suite_dir / "agent.py").write_text(AGENT, encoding="utf-8")
            provider = "file://agent.py"
        (self.dev / self.suite).write_text(
            suite_text(provider, self.nightly_repeats), encoding="utf-8"
        )
        if self.layout in PACKAGED:
            (self.dev / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        (self.dev / ".gitignore").write_text(".evals/\n*.egg-info/\nbuild/\n", encoding="utf-8")
        git(self.dev, "init", "-q", "-b", "main")
        git(self.dev, "add", ".")
        git(self.dev, "commit", "-q", "-m", "calcbot and its suite")
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.origin)], check=True)
        git(self.dev, "remote", "add", "origin", str(self.origin))
        git(self.dev, "push", "-q", "origin", "main")
        self._run([self.uv, "venv", "-q", "--python", sys.executable, str(self.venv)])
        self._install("-e", str(ROOT))

    def branch(self, name: str, files: dict[str, str], start: str = "main") -> None:
        """A branch from `start` changing `files` (paths in the repository; the calcbot
        package by its `package` path), pushed to origin."""
        git(self.dev, "checkout", "-q", start)
        git(self.dev, "checkout", "-q", "-b", name)
        for rel, text in files.items():
            path = self.dev / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        git(self.dev, "add", ".")
        git(self.dev, "commit", "-q", "-m", f"{name}")
        git(self.dev, "push", "-q", "origin", name)
        git(self.dev, "checkout", "-q", "main")

    def merge_to_main(self, name: str) -> None:
        """Merge branch `name` into main (a merge commit) and push."""
        git(self.dev, "checkout", "-q", "main")
        git(self.dev, "merge", "-q", "--no-ff", "-m", f"Merge {name}", name)
        git(self.dev, "push", "-q", "origin", "main")

    # -- the environment ----------------------------------------------------------------

    def _run(self, command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]

    def _install(self, *args: str) -> None:
        self._run([self.uv, "pip", "install", "-q", "--python", str(self.python), *args])

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def checkout(self, name: str, ref: str | None = None) -> Path:
        """A CI checkout of origin: main, or the merge commit of branch `ref` into main
        (as GitHub builds `refs/pull/N/merge`), installed the layout's way."""
        folder = self.work / "ci" / name
        subprocess.run(["git", "clone", "-q", str(self.origin), str(folder)], check=True)
        if ref is not None:
            git(folder, "fetch", "-q", "origin", ref)
            git(folder, "checkout", "-q", "-b", f"pull/{name}", "origin/main")
            git(folder, "merge", "-q", "--no-ff", "-m", f"Merge {ref} into main", f"origin/{ref}")
        if self.layout in ("editable", "exec"):
            self._install("-e", str(folder))
        elif self.layout == "installed":
            self._install("--reinstall-package", "calcbot", str(folder))
        return folder

    def env(self, checkout: Path, event: str, ref: str, **extra: str) -> dict[str, str]:
        """The job's environment: the user's venv first on PATH, the GitHub context."""
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "EVALS_", "VIRTUAL_ENV", "PYTHON"))
        }
        env = {
            **keep,
            "PATH": os.pathsep.join(
                [str(self.venv / "bin"), str(Path(self.uv).parent), keep["PATH"]]
            ),
            "VIRTUAL_ENV": str(self.venv),
            "CALLS_FILE": str(self.calls),
            "EVALS_ENV_CACHE": str(self.env_cache),
            "GITHUB_EVENT_NAME": event,
            "GITHUB_REF": ref,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": "team/calcbot",
            "GITHUB_RUN_ID": "900",
            **extra,
        }
        if self.layout == "pythonpath":
            env["PYTHONPATH"] = str(checkout / "src")
        return env

    def evals(
        self, checkout: Path, env: dict[str, str], *args: str
    ) -> subprocess.CompletedProcess[str]:
        """`evals ARGS` in the CI checkout, as a step runs it."""
        return subprocess.run(
            [str(self.venv / "bin" / "evals"), *args],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    def sharded_nightly(
        self, evaluation_id: str, history: Path, shards: int = 4
    ) -> tuple[int, Path]:
        """The nightly as the workflow runs it: a checkout of main, `shards` shard runs into
        stores of their own, then `evals ci nightly --shards`; its exit code and checkout."""
        checkout = self.checkout(evaluation_id)
        env = self.env(checkout, "schedule", "refs/heads/main")
        folder = checkout / ".evals" / "shards"
        for index in range(1, shards + 1):
            ran = self.evals(
                checkout, env, "run", "evals-suite", "--env", "nightly",
                "--shard", f"{index}/{shards}", "--evaluation-id", evaluation_id,
                "--store", str(folder / f"shard-{index}.db"), "--no-progress", "--quiet",
            )  # fmt: skip
            assert ran.returncode in (0, 1), ran.stderr
        merged = self.evals(
            checkout, env, "ci", "nightly", "evals-suite", "--shards", str(folder),
            "--store", str(history), "--evaluation-id", evaluation_id,
            "--out", ".evals/nightly", "--quiet",
        )  # fmt: skip
        return merged.returncode, checkout

    def pull_request(self, number: int, branch: str, history: Path, *args: str) -> tuple[int, Path]:
        """`evals ci pr` in the merge commit of `branch` into main, as the workflow runs
        it; its exit code and checkout."""
        checkout = self.checkout(f"pr-{number}", branch)
        env = self.env(
            checkout,
            "pull_request",
            f"refs/pull/{number}/merge",
            GITHUB_BASE_REF="main",
            GITHUB_HEAD_REF=branch,
        )
        ran = self.evals(
            checkout, env, "ci", "pr", "evals-suite", "--store", str(history),
            "--out", ".evals/ci", "--quiet", *args,
        )  # fmt: skip
        return ran.returncode, checkout

    # -- what the agent saw -------------------------------------------------------------

    def take_calls(self, head: Path) -> dict[str, Counter[str]]:
        """The calls since the last look, by side: `head` when calcbot came from the
        checkout `head` or the user's venv, `base` otherwise; each a count per MARK."""
        lines = self.calls.read_text(encoding="utf-8").splitlines() if self.calls.exists() else []
        self.calls.unlink(missing_ok=True)
        sides: dict[str, Counter[str]] = {"head": Counter(), "base": Counter()}
        for line in lines:
            where, mark = line.split("\t")
            path = Path(where).resolve()
            side = "head" if path.is_relative_to(head) or path.is_relative_to(self.venv) else "base"
            sides[side][mark] += 1
        return sides
