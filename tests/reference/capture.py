"""Record the built-in suites' runs and what the analysis and every report made of them.

`python tests/reference/capture.py` runs each suite of `SUITES` once into a SQLite store
of its own (kept gzipped: `tests/reference/<name>/results.db.gz`), then writes
`expected.json`: the summary, the gate report, and the SHA-256 of every report format
rendered from those runs (the Markdown and terminal summaries also as text, so a change
shows as a diff). The test
`tests/reference/test_reference_outputs.py` reads the stored runs back and checks that
today's analysis and report writers give the same verdicts, intervals and reports.
Latencies, costs and timestamps are the recorded ones, so nothing depends on the
machine that runs the test; the expected outputs are those of the runs read back from
the store, in plan order.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

# (name, suite file, environment)
SUITES = [
    ("trading-research", "cases/trading-research/promptfooconfig.yaml", None),
    ("trading-research-nightly", "cases/trading-research/promptfooconfig.yaml", "nightly"),
    ("trading-conversations", "cases/trading-research/conversations.yaml", None),
    ("tool-security", "cases/tool-security/promptfooconfig.yaml", None),
    ("reference-check", "cases/reference-check/promptfooconfig.yaml", None),
    ("support-desk", "cases/support-desk/promptfooconfig.yaml", None),
]

SHOWN = ("out.md", "terminal")


def digest(text: str) -> str:
    """The SHA-256 of a report's text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


FORMATS = ("out.json", "out.jsonl", "out.csv", "out.yaml", "out.xml", "out.md", "out.html")


def normalized(text: str) -> str:
    """A report's text with the checkout's folder (in the suite's path) as `<root>`."""
    return text.replace(str(ROOT), "<root>")


def rendered(result: Any) -> dict[str, str]:
    """Every report format of `result`, and the terminal summary, as text (`normalized`)."""
    from rich.console import Console

    from evals.reports.terminal import render_body
    from evals.reports.writers import write_report

    texts: dict[str, str] = {}
    for name in FORMATS:
        target = HERE / "_render" / name
        write_report(target, result)
        texts[name] = normalized(target.read_text(encoding="utf-8"))
    shutil.rmtree(HERE / "_render")
    console = Console(file=io.StringIO(), width=200, color_system=None)
    render_body(result, console)
    texts["terminal"] = normalized(console.file.getvalue())  # type: ignore[attr-defined]
    return texts


def parsed(name: str, text: str) -> Any:
    """The JSON or YAML report's document."""
    import yaml

    return json.loads(text) if name == "out.json" else yaml.safe_load(text)


def documents(
    texts: dict[str, str], names: tuple[str, ...] = ("out.json", "out.yaml")
) -> dict[str, Any]:
    """The JSON and YAML reports as their `evals` key (the statistics, compared number by
    number) and the SHA-256 of the rest of the document."""
    found = {}
    for name in names:
        document = parsed(name, texts[name])
        evals = document.pop("evals")
        rest = json.dumps(document, sort_keys=True, ensure_ascii=False)
        found[name] = {"evals": evals, "rest": digest(rest)}
    return found


def capture(name: str, suite_file: str, environment: str | None, again: bool) -> None:
    """Run one suite into its own store (or, `again`, take its recorded store) and write
    what came out of it."""
    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import run_evaluation, stored_result
    from evals.suite.loader import load_suite

    folder = HERE / name
    database = folder / "results.db"
    suite = load_suite(ROOT / suite_file)
    options = RunOptions(
        store_url=f"sqlite:///{database}",
        progress=False,
        environment=environment,
        evaluation_id=name,
        keep_records=True,
    )
    if again:
        with gzip.open(f"{database}.gz", "rb") as packed, database.open("wb") as raw:
            shutil.copyfileobj(packed, raw)
        decided = json.loads((folder / "expected.json").read_text("utf-8"))["gates"]["decided_at"]
    else:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        decided = run_evaluation(suite, options).gates.decided_at
    # analysed again from the store, the runs in plan order: sums over them do not depend
    # on the order in which the runs completed
    result = stored_result(suite, options.store_url or "", name, environment, now=decided)
    texts = rendered(result)
    expected = {
        "suite": suite_file,
        "environment": environment,
        "summary": result.summary.to_dict(),
        "gates": result.gates.to_dict(),
        "reports": {name: digest(text) for name, text in texts.items()},
        "texts": {name: texts[name] for name in SHOWN},
        "documents": documents(texts),
    }
    (folder / "expected.json").write_text(
        json.dumps(expected, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    database = folder / "results.db"
    with database.open("rb") as raw, gzip.open(f"{database}.gz", "wb") as packed:
        shutil.copyfileobj(raw, packed)
    database.unlink()
    print(f"{name}: {result.summary.agents[0].runs} runs, verdict {result.gates.verdict}")


def main() -> None:
    """Capture every suite of SUITES (or those named on the command line); with --again,
    from the recorded stores instead of new runs."""
    again = "--again" in sys.argv
    wanted = set(sys.argv[1:]) - {"--again"}
    for name, suite_file, environment in SUITES:
        if not wanted or name in wanted:
            capture(name, suite_file, environment, again)


if __name__ == "__main__":
    main()
