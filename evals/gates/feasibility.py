"""Gates that cannot pass where an undetermined verdict fails the build, found before any run.

A non-inferiority gate passes only when the data show the loss within its tolerance. With
a tolerance of 0 the regression gate passes only on a shown improvement, a P0 case needs
enough repeats for its exact interval to reach within `p0_margin` even when both agents
pass every run, and the error-rate gate needs enough runs for an error-free run to show
the rate within `max_error_rate`. In an environment with `on_undetermined: fail` such a gate fails
every build the candidate does not clearly win; `evals validate` says so.
"""

from __future__ import annotations

from evals.gates.catalog import selected_cases
from evals.model.gates import GateConfig
from evals.model.suite import Suite
from evals.stats import clopper_pearson_limit, exact_score_limit

_MOST_REPEATS = 200


def p0_repeats_needed(config: GateConfig, spend: float) -> int | None:
    """Fewest repeats with which a P0 case both agents pass every time can be shown within
    `p0_margin` (its exact lower limit at 1 - spend/2); None beyond 200."""
    for repeats in range(1, _MOST_REPEATS + 1):
        lower = exact_score_limit(repeats, repeats, repeats, repeats, 1 - spend / 2, "lower")
        if lower >= -config.p0_margin:
            return repeats
    return None


def unpassable_gates(suite: Suite) -> list[str]:
    """Warnings for gates that cannot pass in the top level or a declared environment
    whose `on_undetermined` is fail."""
    warnings = []
    for environment in (None, *suite.gates.environments):
        config = suite.gates.for_environment(environment)
        if config.on_undetermined != "fail":
            continue
        where = f"environment {environment}" if environment else "the top level of gates:"
        compared = config.baseline is not None and config.candidate is not None
        if compared and config.tolerance() == 0:
            warnings.append(
                f"{where} fails on an undetermined verdict, but the regression gate has a "
                "tolerance of 0: it passes only when the candidate is shown better; set "
                "max_regression (or margin) to the loss you accept"
            )
        selected = selected_cases(suite, config)
        repeats = config.repeat or suite.evaluate_options.repeat
        spend = 1 - config.confidence
        runs = len(selected) * max(len(suite.prompts), 1) * repeats
        if config.max_error_rate is not None and runs:
            best = clopper_pearson_limit(0, runs, 1 - spend / 2, "upper")
            if best > config.max_error_rate:
                warnings.append(
                    f"{where} fails on an undetermined verdict, but {runs} runs per agent "
                    "without an error cannot show an error rate within "
                    f"{config.max_error_rate:g}: run more, or raise max_error_rate"
                )
        if not (compared and config.block_p0_regressions):
            continue
        if not any(case.priority == "P0" for case in selected):
            continue
        needed = p0_repeats_needed(config, spend)
        if needed is None or repeats < needed:
            enough = f"at least {needed}" if needed else f"more than {_MOST_REPEATS}"
            warnings.append(
                f"{where} fails on an undetermined verdict, but with {repeats} repeats no P0 "
                f"case can be shown to lose less than p0_margin {config.p0_margin:g}: it "
                f"needs {enough} repeats (evals plan shows the chance of passing)"
            )
    return warnings
