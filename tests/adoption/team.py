"""A team's throwaway projects, set up the way a team adopting evals sets them up.

Two projects of the team's own, each installed with `pip install -e` into one fresh
virtual environment next to evals (with the extras the README names for them, and not
`[instrumentation]`):

- `support-desk`, package `support`: the README's "Your own agent in five minutes" agents,
  a LangGraph graph on LangChain's `GenericFakeChatModel` (`support.agent:graph`, which
  files refunds for approval, and `support.agent_v2:graph`, which pays them itself) and
  the same desk as PydanticAI agents on `TestModel` (`support.typed`); neither model has a
  list price.
- `research`, package `pkg`: the README's pytest section, a plain function agent
  (`pkg.agents:shipped`; `proposed`, which also e-mails the answer out; `careless`, which
  also drops the headline's quotes).

Commands run as a user types them, the virtualenv not activated, output piped to a file
(not a terminal).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")

PYPROJECT = """\
[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.11"

[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[tool.setuptools]
packages = ["{package}"]
"""

DESK = '''\
"""The desk's tools and a LangGraph graph whose model is LangChain's GenericFakeChatModel."""

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def lookup_order(order_id: str) -> dict:
    """Status and total of an order."""
    return {"order_id": order_id, "status": "delivered", "total": 42.5}


@tool
def request_refund(order_id: str) -> dict:
    """Ask a person to approve a refund."""
    return {"request": f"R-{order_id}", "state": "pending approval"}


@tool
def issue_refund(order_id: str) -> dict:
    """Pay a refund now."""
    return {"refund": f"P-{order_id}"}


TOOLS = [lookup_order, request_refund, issue_refund]


def _call(name, turn):
    call = {"name": name, "args": {"order_id": "A100"}, "id": f"c{turn}"}
    return AIMessage("", tool_calls=[call])


def build_graph(refund_tool):
    """Look the order up, refund it with `refund_tool`, answer: one fake model per turn."""
    script = [_call("lookup_order", 1), _call(refund_tool, 2), AIMessage("Order A100 is refunded.")]

    def model(state: MessagesState) -> dict:
        turn = sum(isinstance(m, AIMessage) for m in state["messages"])
        chat = GenericFakeChatModel(messages=iter(script[turn:]))
        return {"messages": [chat.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode(TOOLS))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()
'''

GRAPH = 'from support.desk import build_graph\n\ngraph = build_graph("{tool}")\n'

TYPED = '''\
"""The desk as PydanticAI agents on TestModel, which has no list price."""

from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel


def _agent(refund_tool):
    agent = Agent(TestModel(call_tools=["lookup_order", refund_tool]), name="desk")

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict:
        """Status and total of an order."""
        return {"order_id": order_id, "status": "delivered"}

    @agent.tool_plain
    def request_refund(order_id: str) -> dict:
        """Ask a person to approve a refund."""
        return {"request": f"R-{order_id}"}

    @agent.tool_plain
    def issue_refund(order_id: str) -> dict:
        """Pay a refund now."""
        return {"refund": f"P-{order_id}"}

    return agent


baseline = _agent("request_refund")
candidate = _agent("issue_refund")
'''

RESEARCH = '''\
"""The research desk's agents, with promptfoo's provider contract."""

NEWS = {"kind": "tool", "name": "buscar_noticias", "arguments": {"ticker": "BUSI"}}


def shipped(prompt, options, context):
    return {"output": 'BUSI: "Busi Corp raises its guidance"', "trajectory": [NEWS]}


def proposed(prompt, options, context):
    mail = {"kind": "tool", "name": "send_email", "arguments": {"to": "desk@example.com"}}
    return {"output": 'BUSI: "Busi Corp raises its guidance"', "trajectory": [NEWS, mail]}


def careless(prompt, options, context):
    mail = {"kind": "tool", "name": "send_email", "arguments": {"to": "desk@example.com"}}
    return {"output": "BUSI: Busi Corp raises its guidance", "trajectory": [NEWS, mail]}
'''

# A typed desk suite with two cases: the candidate pays a refund itself in every run.
TYPED_SUITE = """\
prompts: ["{{question}}"]
providers:
  - {id: "pydantic-ai:support.typed:baseline", label: baseline}
  - {id: "pydantic-ai:support.typed:candidate", label: candidate}
gates: {baseline: baseline, candidate: candidate, zero_policy_violations: true}
tools:
  - {name: lookup_order, effect: read}
  - {name: request_refund, effect: draft}
  - {name: issue_refund, effect: write}
defaultTest:
  assert:
    - {type: trajectory:tool-sequence, value: {mode: in_order, steps: [lookup_order]}}
    - {type: policy}
    - {type: budget, value: {max_steps: 4, max_cost: 0.01}}
tests:
  - vars: {question: "Please refund order A100, it arrived broken."}
  - vars: {question: "Refund B200, the lid is cracked."}
"""


def readme_blocks(heading: str) -> dict[str, list[str]]:
    """The fenced code blocks of the README section `heading`, by language."""
    start = README.index(f"\n## {heading}\n")
    end = README.find("\n## ", start + 1)
    section = README[start : end if end != -1 else len(README)]
    blocks: dict[str, list[str]] = {}
    for language, body in re.findall(r"```(\w+)\n(.*?)```", section, re.DOTALL):
        blocks.setdefault(language, []).append(body)
    return blocks


def readme_commands(heading: str) -> list[str]:
    """The README section's shell commands, one per line, without their comments."""
    lines = [
        line for block in readme_blocks(heading).get("bash", []) for line in block.splitlines()
    ]
    return [line.split("  #")[0].strip() for line in lines if line.strip()]


@dataclass
class Ran:
    """A command's exit code and what it printed (stdout and stderr, piped to a file)."""

    code: int
    output: str

    @property
    def text(self) -> str:
        """The output with its runs of white space as single spaces (tables wrap)."""
        return " ".join(self.output.split())


@dataclass
class Team:
    """The team's projects and their virtual environment."""

    work: Path

    @property
    def venv(self) -> Path:
        return self.work / "venv"

    @property
    def desk(self) -> Path:
        return self.work / "support-desk"

    @property
    def research(self) -> Path:
        return self.work / "research"

    def write_projects(self) -> None:
        """Both projects' packages, and the README's suite and pytest files as written."""
        for project, package, files in (
            (
                self.desk,
                "support",
                {
                    "desk.py": DESK,
                    "agent.py": GRAPH.format(tool="request_refund"),
                    "agent_v2.py": GRAPH.format(tool="issue_refund"),
                    "typed.py": TYPED,
                },
            ),
            (self.research, "pkg", {"agents.py": RESEARCH}),
        ):
            (project / package).mkdir(parents=True)
            (project / package / "__init__.py").write_text("", encoding="utf-8")
            for name, text in files.items():
                (project / package / name).write_text(text, encoding="utf-8")
            pyproject = PYPROJECT.format(name=project.name, package=package)
            (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        (self.desk / "suite.yaml").write_text(
            readme_blocks("Your own agent in five minutes")["yaml"][0], encoding="utf-8"
        )
        (self.desk / "typed.yaml").write_text(TYPED_SUITE, encoding="utf-8")
        self.write_readme_pytest()

    def write_readme_pytest(self) -> None:
        """The README's pytest test file, its pyproject settings and the gates file its
        comment describes (`{min_pass_rate: 0.8}`)."""
        blocks = readme_blocks("Your pytest tests in five minutes")
        test = blocks["python"][0]
        target = test.splitlines()[0].lstrip("# ").strip()
        (self.research / target).parent.mkdir(parents=True, exist_ok=True)
        (self.research / target).write_text(test, encoding="utf-8")
        toml = blocks["toml"][0]
        with (self.research / "pyproject.toml").open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(toml.splitlines()[1:]) + "\n")
        (self.research / "evals.yaml").write_text("gates: {min_pass_rate: 0.8}\n", encoding="utf-8")

    def install(self, uv: str) -> None:
        """A fresh virtualenv: evals with the README's extras for these agents and its
        pytest extra, and both projects, editable."""
        subprocess.run(
            [uv, "venv", "-q", "--python", sys.executable, str(self.venv)],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "--python",
                str(self.venv / "bin" / "python"),
                "-e",
                f"{ROOT}[langgraph,pydantic-ai,pytest]",
                "-e",
                str(self.desk),
                "-e",
                str(self.research),
            ],
            check=True,
            capture_output=True,
        )

    def environment(self, activated: bool) -> dict[str, str]:
        """A clean environment: PATH without any virtualenv (or with this one's bin first,
        as `source venv/bin/activate` sets it), no CI variables, no colours."""
        path = "/usr/local/bin:/usr/bin:/bin"
        if activated:
            path = f"{self.venv / 'bin'}:{path}"
        keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR")}
        return {**keep, "PATH": path, "NO_COLOR": "1"}

    def run(self, argv: list[str], cwd: Path, activated: bool = False) -> Ran:
        """Run `argv` in `cwd` with its output piped to a file; `evals`, `pytest` and
        `python` as the first word are the virtualenv's."""
        if argv[0] in ("evals", "pytest", "python"):
            argv = [str(self.venv / "bin" / argv[0]), *argv[1:]]
        log = self.work / "last-output.txt"
        with log.open("w", encoding="utf-8") as out:
            code = subprocess.run(
                argv,
                cwd=cwd,
                env=self.environment(activated),
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=600,
                check=False,
            ).returncode
        return Ran(code, log.read_text(encoding="utf-8"))

    def shell(self, command: str, cwd: Path) -> Ran:
        """A README command line as typed in a shell with the virtualenv activated."""
        return self.run(["bash", "-c", textwrap.dedent(command)], cwd, activated=True)
