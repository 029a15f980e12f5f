"""Three further sets of promptfoo configs, each graded by the real promptfoo 0.121 CLI.

`sets/second` (37 configs), `sets/third` (36) and `sets/fourth` were written after
`configs/`, aimed at what it left out (CSV `__expected` cells, JSON schemas, SQL and HTML
edges, script results and contexts, prompt files, `$ref`, perplexity, function calls,
defaultTest options, `_conversation`, comparisons across providers, model-graded assertions;
Windows line endings in CSV, prompt and value files, what checks return, Nunjucks built-ins).
Their goldens (`sets/goldens`, trimmed by `evals compat-check`, which wrote them) are compared
by the same comparison `evals compat-check` makes; every row agrees but the few
docs/promptfoo.md lists as differences, and the test fails if one of those starts to agree or
another differs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evals.compat.promptfoo_check import check
from tests.graders.judge_server import base_url, judge_server

pytestmark = pytest.mark.slow

SETS = Path(__file__).parent / "sets"
GOLDENS = SETS / "goldens"

# Rows that differ on purpose (docs/promptfoo.md, "Differences"), per config.
LISTED = {
    "c21_sql_grammar": 5,  # is-sql: sqlglot and node-sql-parser judge borderline statements
    "c22_sql_dialects": 4,  # apart; no DB2 in sqlglot
    "c32_html_refusal": 1,  # an SVG output promptfoo's --no-write run fails to store
    "d26_compare_errors": 1,  # select-best: evals leaves errored runs out of a comparison
}


@pytest.fixture(scope="module")
def local_judge():
    """Model-graded assertions reach the same local judge as when the goldens were made."""
    with judge_server() as judge:
        yield {"OPENAI_BASE_URL": base_url(judge), "OPENAI_API_KEY": "local-judge"}


@pytest.mark.skipif(shutil.which("ruby") is None, reason="a config checks with ruby")
@pytest.mark.parametrize(
    ("folder", "count", "prefix"), [("second", 37, "c"), ("third", 36, "d"), ("fourth", 38, "e")]
)
def test_every_row_agrees_but_the_listed_ones(folder, count, prefix, local_judge, capsys):
    configs = sorted((SETS / folder).glob("*/promptfooconfig.yaml"))
    assert len(configs) == count
    missing = Path("promptfoo-is-not-run: every golden is stored")
    data = check(configs, cli=missing, goldens=GOLDENS, env=local_judge)
    capsys.readouterr()  # the report printed
    differing = {}
    for outcome in data["configs"]:
        name = Path(outcome["config"]).parent.name
        assert not outcome["skipped"] and not outcome["refused"], name
        assert outcome["rows"] > 0, name
        assert not outcome["identity"], name  # prompt and provider named as promptfoo names them
        if outcome["rows"] != outcome["agreeing"]:
            differing[name] = outcome["rows"] - outcome["agreeing"]
    assert differing == {k: v for k, v in LISTED.items() if k.startswith(prefix)}
