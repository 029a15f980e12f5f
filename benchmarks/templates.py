"""What Nunjucks templates cost: renders in process, the sandbox's start-up, a whole run.

Three measurements, each repeated and the median shown (a shared machine is noisy):

- renders: `evals.common.templating.render` of four prompt shapes that need Nunjucks (a
  loop with filters, a var that is itself a template rendered as test data first, a prompt
  reading `env.NAME`, a JSON chat prompt), microseconds per render over many renders on
  one thread, after a warm-up;
- start-up: building each of the sandbox's realms (what the first template, check or
  regex of a thread waits for), in milliseconds;
- a run: `evals run` of 1000 cases x 5 repeats whose prompt loops over a list with
  filters (every run renders in the sandbox), an echo agent and one assertion, as a fresh
  process timed end to end.

Run it against another checkout to compare (the script imports the `evals` it finds):

    python benchmarks/templates.py
    PYTHONPATH=/path/to/other/checkout python benchmarks/templates.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from workload import machine_description, measure_command

PROMPTS = {
    "loop+filters": (
        "Items: {% for item in items %}{{ item | upper }}{% if not loop.last %}, {% endif %}"
        "{% endfor %} ({{ items | length }}) for {{ name | trim | title }}",
        {"items": ["alpha", "beta", "gamma"], "name": "  ada lovelace "},
    ),
    "var template": (
        "Q: {{ question }}",
        {"question": "{{ topic | upper }} in {{ year }}?", "topic": "ai", "year": 2024},
    ),
    "env read": ("Model {{ env.BENCH_MODEL }} says: {{ text | lower }}", {"text": "HELLO"}),
    "json chat": (
        '[{"role": "system", "content": "{{ system | trim }}"}, '
        '{"role": "user", "content": "{{ text }}"}]',
        {"system": " be brief ", "text": "hi"},
    ),
}


def render_microseconds(renders: int, measurements: int) -> dict[str, float]:
    """Median microseconds per render of each prompt shape."""
    from evals.suite.vars import render_prompt_text

    env = {"BENCH_MODEL": "m1", "HOME": "/home/bench"}
    results: dict[str, float] = {}
    for name, (template, variables) in PROMPTS.items():
        render_prompt_text(template, variables, env)
        samples = []
        for _ in range(measurements):
            started = time.perf_counter()
            for _ in range(renders):
                render_prompt_text(template, variables, env)
            samples.append((time.perf_counter() - started) / renders * 1e6)
        results[name] = statistics.median(samples)
    return results


def realm_milliseconds(measurements: int) -> dict[str, float]:
    """Median milliseconds to build each realm (or the one engine of an older sandbox)."""
    from evals.common import jsengine

    realms = getattr(jsengine, "REALMS", None)
    builders = (
        {name: (lambda name=name: jsengine._Realm(name)) for name in realms}
        if realms is not None
        else {"engine+nunjucks": lambda: jsengine._Engine(True)}
    )
    results: dict[str, float] = {}
    for name, build in builders.items():
        build()
        samples = []
        for _ in range(measurements):
            started = time.perf_counter()
            build()
            samples.append((time.perf_counter() - started) * 1000)
        results[name] = statistics.median(samples)
    return results


def run_seconds(directory: Path, cases: int, repeat: int, measurements: int) -> list[float]:
    """Wall seconds of `evals run` on a suite whose every run renders a Nunjucks prompt."""
    config = {
        "description": "template workload",
        "prompts": [PROMPTS["loop+filters"][0]],
        "providers": ["echo"],
        "evaluateOptions": {"repeat": repeat, "maxConcurrency": 32},
        "tests": [
            {
                "vars": {"items": [f"a{i}", f"b{i}", "c"], "name": f" case {i} "},
                "assert": [{"type": "contains", "value": f"A{i}"}],
            }
            for i in range(cases)
        ],
    }
    suite = directory / "suite.yaml"
    suite.write_text(yaml.safe_dump(config, sort_keys=False))
    walls = []
    for index in range(measurements):
        store = directory / f"store-{index}.db"
        command = [sys.executable, "-m", "evals", "run", str(suite), "--no-progress"]
        measured = measure_command(
            [*command, "--store", str(store)], cwd=directory, sample_memory=False
        )
        if measured.returncode not in (0, 100):
            raise SystemExit(f"evals run exited {measured.returncode}:\n{measured.output}")
        walls.append(measured.wall_s)
    return walls


def main() -> None:
    """Print the three measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=2000)
    parser.add_argument("--measurements", type=int, default=5)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-run", action="store_true", help="renders and start-up only")
    args = parser.parse_args()
    import evals

    print(f"evals from {Path(evals.__file__).parent.parent}")
    for line in machine_description():
        print(line)
    print("renders (median microseconds per render):")
    for name, value in render_microseconds(args.renders, args.measurements).items():
        print(f"  {name:<14} {value:8.1f} us")
    print("start-up (median milliseconds per realm):")
    for name, value in realm_milliseconds(args.measurements).items():
        print(f"  {name:<14} {value:8.1f} ms")
    if args.skip_run:
        return
    with tempfile.TemporaryDirectory() as work:
        walls = run_seconds(Path(work), args.cases, args.repeat, args.measurements)
    runs = args.cases * args.repeat
    median = statistics.median(walls)
    print(
        f"evals run, {args.cases} cases x {args.repeat} repeats, Nunjucks prompt: "
        f"{median:.2f} s median of {len(walls)} ({runs / median:.0f} runs/s)"
    )


if __name__ == "__main__":
    main()
