"""The comparison workload as an inspect_ai task; run with the Python that has inspect_ai.

    python inspect_workload.py CASES REPEAT CONCURRENCY (echo|python) LOG_DIR

Both modes answer with inspect's built-in `mockllm/model`. `echo` gives it one fixed
output (the four scorers run and fail); `python` gives it a Python function that echoes
the prompt, the counterpart of a Python file provider, so the scorers pass. Outputs
carry token usage, since mockllm would otherwise download a tokenizer to count tokens. Each sample
is scored by four scorers equivalent to the suite's equals, contains, starts-with and
regex assertions, over `REPEAT` epochs with `CONCURRENCY` samples in flight.
"""

from __future__ import annotations

import re
import sys

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
from inspect_ai.solver import generate

PATTERN = re.compile(r"^item \d+$")
CHECKS = {
    "equals": lambda text, index: text == f"item {index}",
    "contains": lambda text, index: str(index) in text,
    "starts_with": lambda text, index: text.startswith("item"),
    "regex": lambda text, index: PATTERN.search(text) is not None,
}


def check_scorer(name: str):
    """A scorer that applies one of the four deterministic checks to the completion."""
    test = CHECKS[name]

    @scorer(metrics=[accuracy()], name=name)
    def make():
        async def score(state, target):
            passed = test(state.output.completion, state.metadata["index"])
            return Score(value=CORRECT if passed else INCORRECT)

        return score

    return make()


USAGE = ModelUsage(input_tokens=2, output_tokens=2, total_tokens=4)


def answer(content: str) -> ModelOutput:
    """A mockllm output with `content` and token usage."""
    output = ModelOutput.from_content(model="mockllm", content=content)
    output.usage = USAGE
    return output


FIXED = answer("Default output from mockllm/model")


def echo(messages, tools, tool_choice, config):
    """The model's answer: the text of the last message."""
    return answer(messages[-1].text)


def fixed(messages, tools, tool_choice, config):
    """mockllm's default answer, whatever the prompt."""
    return FIXED


def main() -> None:
    """Run the task once and fail unless inspect reports success."""
    cases, repeat, concurrency = (int(value) for value in sys.argv[1:4])
    mode, log_dir = sys.argv[4], sys.argv[5]
    dataset = MemoryDataset(
        [
            Sample(input=f"item {index}", target=f"item {index}", metadata={"index": index})
            for index in range(cases)
        ]
    )
    task = Task(dataset=dataset, solver=generate(), scorer=[check_scorer(n) for n in CHECKS])
    model = get_model("mockllm/model", custom_outputs=echo if mode == "python" else fixed)
    logs = inspect_eval(
        task,
        model=model,
        epochs=repeat,
        max_connections=concurrency,
        max_samples=concurrency,
        log_dir=log_dir,
        display="none",
    )
    if logs[0].status != "success":
        raise SystemExit(f"inspect_ai evaluation status: {logs[0].status}")


if __name__ == "__main__":
    main()
