"""A judge resolved once: its spec, its template or offline baseline, and its conditions.

`Resolved.of(spec, conditions, existing=...)` is the one place a run's conditions are
chosen: the given ones, else the spec's, else the template's (or baseline's) defaults, each
checked against the template, then the conditions already in the judge's table that the
template still takes (so a rebuilt table keeps them). The planner, the table builder, the
offline engine and the runner all take the `Resolved` they are handed; none resolves again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass

from judgelab.judges import templates
from judgelab.judges.baselines import BASELINES, Baseline
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.templates.base import Template


@dataclass(frozen=True)
class Resolved:
    """A judge ready to plan and build.

    Attributes:
        spec: The judge spec.
        conditions: The conditions to run, in order, without repeats.
        template: The prompt template (remote judges; None for offline baselines).
        baseline: The offline baseline (offline judges; None for remote ones).
    """

    spec: JudgeSpec
    conditions: tuple[str, ...]
    template: Template | None = None
    baseline: Baseline | None = None

    @classmethod
    def of(
        cls,
        spec: JudgeSpec,
        conditions: Iterable[str] | None = None,
        *,
        existing: Iterable[str] = (),
    ) -> Resolved:
        """Resolve `spec` with the requested `conditions` and those `existing` in its table.

        Args:
            spec: The judge spec.
            conditions: Conditions asked for (default: the spec's, else the template's).
            existing: Conditions already in the judge's table; those the template takes are
                appended (remote judges only; offline baselines ignore them).

        Raises:
            ValueError: a requested condition key or value the template does not take.
        """
        if spec.is_offline:
            baseline = BASELINES[spec.model]
            chosen = tuple(conditions or spec.conditions or baseline.conditions)
            return cls(spec, chosen, baseline=baseline)
        template = templates.get(str(spec.template))
        requested = list(conditions) if conditions else list(spec.conditions or ())
        requested = requested or list(template.default_conditions)
        for c in requested:
            template.check_condition(c)
        chosen = list(dict.fromkeys(requested))
        for c in existing:
            with contextlib.suppress(ValueError):
                template.check_condition(c)
                if c not in chosen:
                    chosen.append(c)
        return cls(spec, tuple(chosen), template=template)


__all__ = ["Resolved"]
