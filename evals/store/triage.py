"""The triage log: acknowledgements, quarantines and accepted judge disagreements.

Append-only: `record` is the one write, and withdrawing an action records a `remove`
naming it, so the log is its own audit trail (who, when, why, until when). Reads answer
the gates (the active quarantines of a suite in an environment), `evals triage list` and
the dashboard's audit page.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, Row, insert, select

from evals.model.triage import TriageAction
from evals.store.schema import triage_actions

_FIELDS = tuple(TriageAction.__dataclass_fields__)


def _action(row: Row[Any]) -> TriageAction:
    data = row._mapping
    return TriageAction(**{name: data[name] for name in _FIELDS})


class TriageLog:
    """The triage actions of a store; `Store.triage` holds one."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, action: TriageAction) -> TriageAction:
        """Append one action (its `id` is ignored) and return it with the id it got.

        A `remove` must name an action of the same suite that is not already removed.
        """
        values = {name: getattr(action, name) for name in _FIELDS if name != "id"}
        with self.engine.begin() as connection:
            if action.kind == "remove":
                self._check_removable(connection, action)
            new_id = connection.execute(
                insert(triage_actions).values(**values).returning(triage_actions.c.id)
            ).scalar_one()
        return TriageAction(**{**values, "id": new_id})

    def _check_removable(self, connection: Any, action: TriageAction) -> None:
        target = connection.execute(
            select(triage_actions).where(triage_actions.c.id == action.target_id)
        ).first()
        if target is None or target.kind == "remove":
            raise ValueError(f"no triage action {action.target_id} to remove")
        if target.suite_id != action.suite_id:
            raise ValueError(
                f"triage action {action.target_id} belongs to suite {target.suite_id}, "
                f"not {action.suite_id}"
            )
        removed = connection.execute(
            select(triage_actions.c.id).where(
                triage_actions.c.kind == "remove",
                triage_actions.c.target_id == action.target_id,
            )
        ).first()
        if removed is not None:
            raise ValueError(f"triage action {action.target_id} was already removed")

    def get(self, action_id: int) -> TriageAction | None:
        """One action by id, or None."""
        query = select(triage_actions).where(triage_actions.c.id == action_id)
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
        return _action(row) if row is not None else None

    def history(
        self,
        suite_id: str | None = None,
        *,
        kind: str | None = None,
        actor: str | None = None,
        case_id: str | None = None,
        since: float | None = None,
        limit: int | None = None,
    ) -> list[TriageAction]:
        """Every action matching the filters, removals included, newest first."""
        query = select(triage_actions)
        for column, value in (
            (triage_actions.c.suite_id, suite_id),
            (triage_actions.c.kind, kind),
            (triage_actions.c.actor, actor),
            (triage_actions.c.case_id, case_id),
        ):
            if value is not None:
                query = query.where(column == value)
        if since is not None:
            query = query.where(triage_actions.c.created_at >= since)
        query = query.order_by(triage_actions.c.created_at.desc(), triage_actions.c.id.desc())
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as connection:
            return [_action(row) for row in connection.execute(query)]

    def current(
        self, suite_id: str | None = None, *, now: float, include_expired: bool = False
    ) -> list[TriageAction]:
        """The actions not removed (and, unless `include_expired`, not expired), newest first."""
        removed = select(triage_actions.c.target_id).where(triage_actions.c.kind == "remove")
        query = select(triage_actions).where(
            triage_actions.c.kind != "remove", triage_actions.c.id.not_in(removed)
        )
        if suite_id is not None:
            query = query.where(triage_actions.c.suite_id == suite_id)
        if not include_expired:
            query = query.where((triage_actions.c.until.is_(None)) | (triage_actions.c.until > now))
        query = query.order_by(triage_actions.c.created_at.desc(), triage_actions.c.id.desc())
        with self.engine.connect() as connection:
            return [_action(row) for row in connection.execute(query)]

    def quarantines(self, suite_id: str, *, now: float) -> list[TriageAction]:
        """The suite's quarantines not removed nor expired at `now` (any environment)."""
        return [a for a in self.current(suite_id, now=now) if a.kind == "quarantine"]
