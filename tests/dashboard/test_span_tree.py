"""The span tree of a run, from the trace `evals run` stored with it: a user's in-process
agent traced with OpenTelemetry (a model call with its input messages, a tool call with
its arguments under it), shown nested on the Case page with those messages and arguments
as text."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evals.cli import main
from evals.dashboard import spans

pytest.importorskip("opentelemetry.trace", reason="tracing needs the [instrumentation] extra")

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
AGENT = """
import json
from opentelemetry import trace

tracer = trace.get_tracer("support-bot")


def answer(prompt, options, context, broken=False):
    messages = [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
    with tracer.start_as_current_span("chat sim-model") as chat:
        chat.set_attribute("gen_ai.operation.name", "chat")
        chat.set_attribute("gen_ai.request.model", "sim-model")
        chat.set_attribute("gen_ai.input.messages", json.dumps(messages))
        with tracer.start_as_current_span("execute_tool lookup_order") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "lookup_order")
            order = {"order": 4100 + context["vars"]["n"]}
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps(order))
            tool.set_attribute("gen_ai.tool.call.result", json.dumps({"total": "<b>42</b>"}))
    return {"output": "total 41" if broken else "total 42"}


def base(prompt, options, context):
    return answer(prompt, options, context)


def cand(prompt, options, context):
    return answer(prompt, options, context, broken=context["vars"]["n"] == 0)
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("spans")
    (folder / "bot.py").write_text(AGENT, encoding="utf-8")
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n    assert: [{{type: contains, value: '42'}}]" for n in range(4)
    )
    (folder / "suite.yaml").write_text(
        "description: traced\nprompts: ['Order {{n}}?']\n"
        "providers:\n  - {id: file://bot.py:base, label: base}\n"
        "  - {id: file://bot.py:cand, label: cand}\n"
        "trace: {enabled: true}\nevaluateOptions: {repeat: 2}\n"
        f"tests:\n{tests}\n",
        encoding="utf-8",
    )
    url = f"sqlite:///{folder / 'store.db'}"
    main(["run", str(folder / "suite.yaml"), "--store", url, "--no-progress"])
    return url


@pytest.mark.slow
def test_the_case_page_shows_each_runs_span_tree(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_STORE_URL", store)
    monkeypatch.setenv("EVALS_DASHBOARD_AUTH", "local")
    app = AppTest.from_file(APP, default_timeout=90)
    app.query_params["case"] = "case-1"
    app.switch_page("views/case.py").run()
    assert not app.exception, [e.value for e in app.exception]
    app.toggle(key="spans").set_value(True).run()
    shown = " ".join(h.proto.body for h in app.html)
    tree = shown[shown.index("data-span='evals.run'") :]
    chat = tree.index("data-span='chat sim-model'")
    tool = tree.index("data-span='execute_tool lookup_order'")
    assert chat < tool < tree.index("</details></details>")  # the tool call under the model call
    assert "input messages" in tree and "Order 0?" in tree
    assert "tool arguments" in tree and "&quot;order&quot;: 4100" in tree
    assert "&lt;b&gt;42&lt;/b&gt;" in tree and "<b>42</b>" not in tree


def test_spans_whose_parent_is_missing_are_roots() -> None:
    found = spans.children(
        [
            {"span_id": "a", "parent_span_id": None, "start_ns": 1, "name": "root"},
            {"span_id": "b", "parent_span_id": "a", "start_ns": 2, "name": "child"},
            {"span_id": "c", "parent_span_id": "gone", "start_ns": 3, "name": "orphan"},
        ]
    )
    assert [s["name"] for s in found[None]] == ["root", "orphan"]
    assert [s["name"] for s in found["a"]] == ["child"]
    assert "No trace stored" in spans.tree_html([])
