"""The `_conversation` var: which prompts read it, what a turn holds, which runs share a
thread, and the order and concurrency of a suite that uses it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evals.model.options import RunOptions
from evals.model.plan import PlannedRun
from evals.pipeline.evaluation import run_evaluation
from evals.plan.runs import build_plan
from evals.run.conversation import (
    CONVERSATION_VAR,
    Conversations,
    may_use_conversation,
    promptfoo_order,
    suite_uses_conversation,
    uses_conversation,
)
from evals.suite import load_suite

SUITE = """\
prompts:
  - '{% for c in _conversation %}{{ c.input }}={{ c.output }};{% endfor %}{{ q }}'
  - 'plain {{ q }}'
providers: [echo]
evaluateOptions: {maxConcurrency: 8}
tests:
  - vars: {q: a}
  - vars: {q: b}
    options: {repeat: 2}
  - vars: {q: c}
    metadata: {conversationId: other}
  - vars: {q: d}
    options: {disableConversationVar: true}
  - vars: {q: e}
"""


def test_tags_decide_whether_a_prompt_reads_the_var():
    assert uses_conversation("{% for c in _conversation %}{{ c.output }}{% endfor %}")
    assert uses_conversation("{{ _conversation | length }}")
    assert uses_conversation("{{ x if _conversation else y }}")
    assert not uses_conversation("text about _conversation, outside any tag")
    assert not uses_conversation("{{ '_conversation' }} {{ q }}")
    assert not uses_conversation("{{ vars._conversation }}")
    assert not uses_conversation("{{ _conversations }}")


@given(st.text(alphabet=st.characters(blacklist_characters="{}%_")))
def test_text_without_tags_never_reads_the_var(text):
    assert not uses_conversation(text + "_conversation" + text)


def _runs(source: str) -> list[PlannedRun]:
    return list(build_plan(load_suite(source), 1))


def test_a_turn_holds_the_prompt_its_last_message_and_the_output(write_suite):
    run = _runs(write_suite(SUITE))[0]
    threads = Conversations()
    threads.record(run, "just text", "answer", None)
    chat = '[{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]'
    threads.record(run, chat, 0, {"k": 1})
    threads.record(run, "[1, 2]", None, None)
    turns = threads.vars_for(run, "{{ _conversation }}")[CONVERSATION_VAR]
    assert turns[0] == {"prompt": "just text", "input": "just text", "output": "answer"}
    assert turns[1]["input"] == "hi" and turns[1]["output"] == ""
    assert turns[1]["prompt"][1] == {"role": "user", "content": "hi"}
    assert turns[1]["metadata"] == {"k": 1}
    assert turns[2]["input"] == 2 and turns[2]["prompt"] == [1, 2]


def test_threads_split_by_provider_prompt_and_conversation_id(write_suite):
    runs = _runs(write_suite(SUITE))
    threads = Conversations()
    first = runs[0]
    other_prompt = next(r for r in runs if r.case is first.case and r.prompt_index == 1)
    other_id = next(r for r in runs if r.case.metadata.get("conversationId") == "other")
    threads.record(first, "p", "o", None)
    template = "{{ _conversation }}"
    assert len(threads.vars_for(first, template)[CONVERSATION_VAR]) == 1
    assert threads.vars_for(other_prompt, template)[CONVERSATION_VAR] == []
    same_prompt = next(r for r in runs if r.case is other_id.case and r.prompt_index == 0)
    assert threads.vars_for(same_prompt, template)[CONVERSATION_VAR] == []


def test_a_run_sees_the_thread_itself_and_can_turn_it_off(write_suite, monkeypatch):
    runs = _runs(write_suite(SUITE))
    threads = Conversations()
    run = runs[0]
    empty = threads.vars_for(run, "{{ _conversation }}")[CONVERSATION_VAR]
    threads.record(run, "p", "o", None)
    assert empty == []  # the first run's list is its own
    seen = threads.vars_for(run, "{{ _conversation }}")[CONVERSATION_VAR]
    threads.record(run, "p2", "o2", None)
    assert len(seen) == 2  # later runs share the thread, as promptfoo's reference does
    assert threads.vars_for(run, "{{ q }}") is run.case.vars
    disabled = next(r for r in runs if r.case.options.get("disableConversationVar"))
    assert threads.vars_for(disabled, "{{ _conversation }}") is disabled.case.vars
    monkeypatch.setenv("PROMPTFOO_DISABLE_CONVERSATION_VAR", "true")
    assert threads.vars_for(run, "{{ _conversation }}") is run.case.vars


def test_order_is_test_by_test_with_repeats_together(write_suite):
    suite = load_suite(write_suite(SUITE))
    ordered = promptfoo_order(list(build_plan(suite, 1)))
    cases = [(r.case.vars["q"], r.key.repeat) for r in ordered if r.prompt_index == 0]
    assert cases == [("a", 0), ("b", 0), ("b", 1), ("c", 0), ("d", 0), ("e", 0)]


def test_which_suites_keep_threads(write_suite):
    assert suite_uses_conversation(load_suite(write_suite(SUITE)))
    plain = "prompts: ['{{ q }}']\nproviders: [echo]\ntests: [{vars: {q: a}}]\n"
    assert not may_use_conversation(load_suite(write_suite(plain)))
    prefixed = plain.replace(
        "{vars: {q: a}}", "{vars: {q: a}, options: {prefix: '{{ _conversation }}'}}"
    )
    suite = load_suite(write_suite(prefixed))
    assert may_use_conversation(suite) and not suite_uses_conversation(suite)


def test_an_evaluation_renders_each_thread_in_order(write_suite, capsys):
    suite = load_suite(write_suite(SUITE))
    result = run_evaluation(suite, RunOptions(use_store=False, progress=True))
    first = [r for r in result.records if r.prompt_index == 0]
    outputs = [r.response.output for r in first]
    expected, thread = [], []  # the main thread: every run but c's (d's reads nothing)
    for q in ["a", "b", "b", "c", "d", "e"]:
        seen = "" if q in "cd" else "".join(f"{i}={o};" for i, o in thread)
        expected.append(seen + q)
        if q != "c":
            thread.append((seen + q, seen + q))
    assert outputs == expected
    assert all(CONVERSATION_VAR not in r.vars for r in result.records)
    assert "concurrency to 1 because the _conversation variable is used" in capsys.readouterr().err
