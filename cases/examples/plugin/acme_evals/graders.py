"""`acme:ticket-cited`: the answer names the ticket the question is about."""

from __future__ import annotations

import re

from evals import Grade, GradeContext, register

_TICKET = re.compile(r"\bACME-\d+\b")


@register("acme:ticket-cited", layer="final")
def ticket_cited(ctx: GradeContext) -> Grade:
    """Pass when the output names the ticket of the assertion's value (by default, the
    first ticket of the prompt); `not-acme:ticket-cited` passes when it does not."""
    expected = ctx.value or next(iter(_TICKET.findall(ctx.prompt)), None)
    if not expected:
        reason = "no ticket to look for: give the assertion a value"
        return Grade(False, 0.0, reason, ctx.assertion.raw)
    cited = expected in str(ctx.output)
    passed = cited != ctx.inverse
    verb = "names" if cited else "does not name"
    return Grade(passed, 1.0 if passed else 0.0, f"the answer {verb} {expected}", ctx.assertion.raw)
