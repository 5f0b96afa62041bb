"""A registry of report-card measures: small functions registered with `@measure`.

Like inspect_ai's `@metric`, a measure is a small function registered under a name with what it
needs from the data and how its headline reads. Each analysis family registers the card
measures its data support in its own `measures.py`, calling the family's public functions
(nothing is re-implemented there); the report card (`judgelab.reporting.card`) imports those
modules, builds one `CardContext` per judge and runs every registered measure.

A measure function takes the `CardContext` and returns card rows: a list of dicts (made with
`row`, `rows` or `na`) or a DataFrame with those columns. The runner fills in `source`,
`judge` and `measure`; a measure whose declared `needs` the data do not meet gets one n/a row
with the need's reason (or the measure's own wording of it) without being called.

    @measure("p_longer", family="length", label="P(picks longer)",
             doc="balanced over gold when known (0.5 = no length bias)",
             needs=("pairwise",), direction="deviation")
    def p_longer(ctx: CardContext) -> list[dict]:
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import lengths
from judgelab.core.schema import require_columns
from judgelab.errors import check_choice

#: The columns of every card row, in order.
COLUMNS = (
    "source",
    "judge",
    "measure",
    "scope",
    "headline",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "n_eff_clusters",
    "p_value",
    "status",
    "note",
)

#: How a headline is read (and graded by a traffic light): `higher` / `lower` is better,
#: `deviation` from 0.5, `abs` distance from 0, `drop` below 0 (max(−value, 0)).
DIRECTIONS = ("higher", "lower", "deviation", "abs", "drop")

NO_PAIR = "pointwise judgments: no pair of responses"


@dataclass(frozen=True)
class CardOptions:
    """The settings every measure of a card shares (the notebook's parameters).

    Attributes:
        judge_family: Judge id → model family (self-preference).
        candidate_family: Candidate model or glob → model family.
        judge_candidate: Judge id → the candidate model that is the same model
            (answerability).
        label_map: Gold / verdict label → Correct/Incorrect for correctness measures
            (e.g. {"Consistent": "Correct", "Hallucinated": "Incorrect"}).
        reference_strategies: Prompt → reference name; kappa by reference applies when the
            judge's prompt is one of them and its model ran another.
        peer_column: Judges sharing this column's value with the judge are its peers.
        unit: Length unit (`lengths.add_lengths`).
        invalid_policy: Pairwise invalid policy (`item_outcomes`).
        n_boot: Bootstrap resamples B.
        seed: Seed of every bootstrap.
        level: Confidence level of every interval.
        families: Families whose measures run (empty: every family).
    """

    judge_family: Mapping[str, str] = field(default_factory=dict)
    candidate_family: Mapping[str, str] = field(default_factory=dict)
    judge_candidate: Mapping[str, str] = field(default_factory=dict)
    label_map: Mapping[str, str] = field(default_factory=dict)
    reference_strategies: Mapping[str, str] = field(default_factory=dict)
    peer_column: str = "prompt"
    unit: str = "words"
    invalid_policy: str = "repo"
    n_boot: int = 1000
    seed: int = 0
    level: float = 0.95
    families: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in (
            "judge_family",
            "candidate_family",
            "judge_candidate",
            "label_map",
            "reference_strategies",
        ):
            object.__setattr__(self, name, dict(getattr(self, name) or {}))
        object.__setattr__(self, "families", tuple(self.families or ()))

    @property
    def boot(self) -> dict[str, Any]:
        """Return the bootstrap keywords every interval uses: `n_boot`, `seed`, `level`."""
        return {"n_boot": self.n_boot, "seed": self.seed, "level": self.level}


@dataclass(frozen=True)
class CardContext:
    """One judge of one source, as every measure sees it.

    Attributes:
        source: The source label written into every row.
        judge: The judge id carded.
        items: The source's items table, as given.
        lens: The items with lengths in `options.unit`.
        judgments: The greedy judgments (`sample` 0) of every judge of the source: the
            judge's peers and its model under other prompts.
        own: The judge's greedy judgments.
        options: The card's settings.
        pairwise: Some of the judge's items are pairwise.
        both_orders: Pairwise, with both presentation orders.
        has_gold: Some of the judge's verdicts carry a gold-based `correct`.
        memo: Results shared by the judges of one card (e.g. the alpha of a peer pool).
        cache: This judge's intermediate results, shared by its measures.
        trials: The judge's judgments of every sample (repeated trials), when it has more
            than one sample; else empty.
    """

    source: str
    judge: str
    items: pd.DataFrame
    lens: pd.DataFrame
    judgments: pd.DataFrame
    own: pd.DataFrame
    options: CardOptions
    pairwise: bool
    both_orders: bool
    has_gold: bool
    memo: dict = field(default_factory=dict, repr=False)
    cache: dict = field(default_factory=dict, repr=False)
    trials: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @classmethod
    def build(
        cls,
        items: pd.DataFrame,
        judgments: pd.DataFrame,
        *,
        judge: str,
        source: str = "",
        options: CardOptions | None = None,
        memo: dict | None = None,
    ) -> CardContext:
        """Return the context of `judge` in one source's tables (greedy judgments only).

        Raises:
            KeyError: the judgments lack a key column.
            ValueError: the judge has no judgments.
        """
        options = options or CardOptions()
        require_columns(judgments, ["judge", "benchmark", "split", "item_id", "sample"], "card")
        greedy = judgments[judgments["sample"] == 0]
        own = greedy[greedy["judge"] == judge].reset_index(drop=True)
        if own.empty:
            known = sorted(judgments["judge"].unique())
            raise ValueError(f"judge {judge!r} has no judgments in {source!r}; known: {known}")
        unit = options.unit
        has_lengths = "len_unit" in items and (items["len_unit"].astype(str) == unit).all()
        lens = items if has_lengths else lengths.add_lengths(items, unit=unit)
        keys = ["benchmark", "split", "item_id"]
        tasks = pd.Series(
            items["task"].to_numpy(), index=pd.MultiIndex.from_frame(items[keys].astype(str))
        )
        task_of = tasks.reindex(pd.MultiIndex.from_frame(own[keys].astype(str)))
        pairwise = bool((task_of == "pairwise").any())
        return cls(
            source=source,
            judge=judge,
            items=items,
            lens=lens,
            judgments=greedy,
            own=own,
            options=options,
            pairwise=pairwise,
            both_orders=pairwise and own["order"].nunique() == 2,
            has_gold=bool(own["correct"].notna().any()),
            memo={} if memo is None else memo,
            trials=_trials(judgments, judge),
        )

    @property
    def boot(self) -> dict[str, Any]:
        """Return the bootstrap keywords (`n_boot`, `seed`, `level`) of the card."""
        return self.options.boot

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        """Return this judge's result `key`, building it on first use (shared by measures)."""
        if key not in self.cache:
            self.cache[key] = build()
        return self.cache[key]


def _trials(judgments: pd.DataFrame, judge: str) -> pd.DataFrame:
    """Return every sample of `judge` when it was sampled more than once, else an empty frame."""
    mine = judgments[judgments["judge"] == judge]
    if mine["sample"].nunique() < 2:
        return mine.iloc[0:0].reset_index(drop=True)
    return mine.reset_index(drop=True)


#: Need → (whether a context meets it, the reason written when it does not).
NEEDS: dict[str, tuple[Callable[[CardContext], bool], str]] = {
    "pairwise": (lambda ctx: ctx.pairwise, NO_PAIR),
    "pointwise": (
        lambda ctx: not ctx.pairwise,
        "pairwise judgments: no Correct/Incorrect grading",
    ),
    "both_orders": (
        lambda ctx: ctx.both_orders,
        "no two-order data (each pair shown in one order)",
    ),
    "gold": (lambda ctx: ctx.has_gold, "no gold labels in this source"),
}


def unmet(ctx: CardContext, *needs: str, reasons: Mapping[str, str] | None = None) -> str | None:
    """Return the reason of the first of `needs` the context does not meet, else None.

    `reasons` rewords a need's reason for one measure.

    Raises:
        ChoiceError: a need is unknown.
    """
    for need in needs:
        met, why = NEEDS[check_choice("need", need, tuple(NEEDS))]
        if not met(ctx):
            return (reasons or {}).get(need, why)
    return None


@dataclass(frozen=True)
class Measure:
    """A registered card measure.

    Attributes:
        name: The measure's key in card rows (`measure` column).
        family: The analysis family that computes it.
        label: Its name on the page.
        doc: What it measures, in one line.
        needs: Keys of `NEEDS` the data must meet, checked in order.
        unmet: Need → reason written instead of the need's own when it is not met.
        direction: How its headline reads (one of `DIRECTIONS`; None: not graded).
        fn: The function `(CardContext) -> rows`.
    """

    name: str
    family: str
    label: str
    doc: str
    needs: tuple[str, ...]
    unmet: Mapping[str, str]
    direction: str | None
    fn: Callable[[CardContext], Any] = field(repr=False, compare=False)

    def unmet_reason(self, ctx: CardContext) -> str | None:
        """Return why the data cannot give this measure, or None when its needs are met."""
        return unmet(ctx, *self.needs, reasons=self.unmet)

    def __call__(self, ctx: CardContext) -> list[dict]:
        """Return the measure's complete card rows for one judge (n/a when a need is unmet)."""
        why = self.unmet_reason(ctx)
        out = na(why) if why is not None else self.fn(ctx)
        records = out.to_dict("records") if isinstance(out, pd.DataFrame) else list(out)
        complete = []
        for rec in records:
            r = dict.fromkeys(COLUMNS, np.nan)
            r.update(source=ctx.source, judge=ctx.judge, measure=self.name)
            r.update(scope="", headline=False, status="ok", note="")
            r.update(rec)
            complete.append(r)
        return complete


_REGISTRY: dict[str, Measure] = {}


def measure(
    name: str,
    *,
    family: str,
    label: str,
    doc: str,
    needs: Sequence[str] = (),
    unmet: Mapping[str, str] | None = None,
    direction: str | None = None,
) -> Callable[[Callable[[CardContext], Any]], Callable[[CardContext], Any]]:
    """Register the decorated function as the card measure `name` (the function is unchanged).

    Raises:
        ChoiceError: a need or the direction is unknown.
        ValueError: another function already registered `name`.
    """
    for need in needs:
        check_choice("need", need, tuple(NEEDS))
    if direction is not None:
        check_choice("direction", direction, DIRECTIONS)

    def register(fn: Callable[[CardContext], Any]) -> Callable[[CardContext], Any]:
        old = _REGISTRY.get(name)
        if old is not None and (old.fn.__module__, old.fn.__qualname__) != (
            fn.__module__,
            fn.__qualname__,
        ):
            raise ValueError(
                f"measure {name!r} is registered twice: {old.fn.__module__}.{old.fn.__qualname__}"
                f" and {fn.__module__}.{fn.__qualname__}"
            )
        _REGISTRY[name] = Measure(
            name, family, label, doc, tuple(needs), dict(unmet or {}), direction, fn
        )
        return fn

    return register


def registered(families: Sequence[str] = ()) -> list[Measure]:
    """Return the registered measures in registration order (only `families` when given)."""
    return [m for m in _REGISTRY.values() if not families or m.family in families]


def get(name: str) -> Measure:
    """Return the measure registered as `name`.

    Raises:
        ChoiceError: no measure has that name.
    """
    check_choice("measure", name, tuple(_REGISTRY))
    return _REGISTRY[name]


def row(scope: str = "", **values: Any) -> dict:
    """Return one card row: `scope` and the given columns (the runner fills in the rest)."""
    return {"scope": scope, **values}


def na(why: str) -> list[dict]:
    """Return the single n/a row of a measure the data cannot give, saying why."""
    return [row(headline=True, status="n/a", note=why, n=0)]


def rows(frame: pd.DataFrame, *, headline: str) -> list[dict]:
    """Turn rows with scope/value/ci_low/ci_high/n(/n_eff_clusters/p_value/note) into card rows.

    The row whose scope is `headline` is the measure's headline; a NaN value is n/a.
    """
    out = []
    for r in frame.itertuples(index=False):
        value = float(r.value)
        undefined = bool(np.isnan(value))
        note = str(getattr(r, "note", "") or "")
        out.append(
            row(
                str(r.scope),
                headline=str(r.scope) == headline,
                value=value,
                ci_low=float(r.ci_low),
                ci_high=float(r.ci_high),
                n=int(r.n),
                n_eff_clusters=float(getattr(r, "n_eff_clusters", np.nan)),
                p_value=float(getattr(r, "p_value", np.nan)),
                status="n/a" if undefined else "ok",
                note=note or ("undefined here (no units or no gold)" if undefined else ""),
            )
        )
    return out
