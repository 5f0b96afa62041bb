"""The offline baselines by name: what each judges, its options and their checks (no rules).

A judge spec names an offline baseline (`endpoint: offline`, `model: <name>`); `spec` checks
the name and the options here, and `offline` holds each baseline's rule. Both import this
small table, so a spec never needs the judging engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judgelab.core import lengths
from judgelab.core.text import SIMILARITY
from judgelab.errors import check_choice


@dataclass(frozen=True)
class Baseline:
    """An offline judge: which items it takes, its options, and what its rows mean.

    Attributes:
        name: The name a spec gives as `model`.
        description: One line: what it picks and why it is a baseline.
        pairwise, pointwise: Whether it judges pairwise / single-response (pointwise, qa) items.
        defaults: Its options with their default values (the only options it takes).
        needs: An item column the benchmark must have somewhere (None: none).
        gold_comparable: Whether a pointwise verdict is comparable to gold (a score is not).
        conditions: The conditions it runs when the spec names none.
    """

    name: str
    description: str
    pairwise: bool
    pointwise: bool
    defaults: Mapping[str, Any]
    needs: str | None = None
    gold_comparable: bool = True
    conditions: tuple[str, ...] = ("",)

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Return the options merged with defaults; raise ValueError on unknown/bad ones."""
        unknown = sorted(set(options) - set(self.defaults))
        if unknown:
            raise ValueError(
                f"unknown option(s) {unknown} for offline baseline {self.name!r}; "
                f"known: {sorted(self.defaults)}"
            )
        out = {**self.defaults, **options}
        if "threshold" in out and not (
            isinstance(out["threshold"], int | float) and 0 <= out["threshold"] <= 1
        ):
            raise ValueError(f"threshold {out['threshold']!r} must be a number in [0, 1]")
        if "refusal_score" in out and not (
            isinstance(out["refusal_score"], int | float) and 0 <= out["refusal_score"] <= 1
        ):
            raise ValueError(f"refusal_score {out['refusal_score']!r} must be in [0, 1]")
        if "metric" in out:
            check_choice("metric", out["metric"], tuple(sorted(SIMILARITY)))
        if "unit" in out:
            try:
                lengths.count("probe", out["unit"])
            except lengths.LengthUnitError as exc:
                raise ValueError(str(exc)) from None
        return out


BASELINES: dict[str, Baseline] = {
    b.name: b
    for b in (
        Baseline(
            "prefer_longer",
            "picks the longer response (length bias baseline)",
            pairwise=True,
            pointwise=False,
            defaults={"unit": lengths.DEFAULT_UNIT},
        ),
        Baseline(
            "always_a",
            "always picks position A (positional-bias control)",
            pairwise=True,
            pointwise=False,
            defaults={},
        ),
        Baseline(
            "lexical_grounding",
            "lexical grounding in the context with refusal detection (faithfulness proxy)",
            pairwise=True,
            pointwise=True,
            defaults={"refusal_score": 0.5},
            needs="context",
            gold_comparable=False,
        ),
        Baseline(
            "reference_similarity",
            "token-F1 / ROUGE-L against the reference (spec 001 §4.6 classifiers)",
            pairwise=True,
            pointwise=True,
            defaults={"metric": "token_f1", "threshold": 0.5},
            needs="reference",
            conditions=("reference=human",),
        ),
    )
}


__all__ = ["BASELINES", "Baseline"]
