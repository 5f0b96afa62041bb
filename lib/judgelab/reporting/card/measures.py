"""Run the registered card measures over one judge, or over every carded judge of the sources.

Importing this module imports every family's `measures` module (and the card's `composite`
measures), so each measure registers with `judgelab.analyses.registry`. `collect_measures`
builds the judge's `CardContext` and runs every registered measure in page order (`ORDER`);
a measure the data cannot give is one row with `status = "n/a"` and the reason in `note`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgelab.analyses import registry
from judgelab.analyses.correctness import measures as _correctness  # noqa: F401  (registers)
from judgelab.analyses.grounding import measures as _grounding  # noqa: F401  (registers)
from judgelab.analyses.juries import measures as _juries  # noqa: F401  (registers)
from judgelab.analyses.length import measures as _length  # noqa: F401  (registers)
from judgelab.analyses.pairwise import measures as _pairwise  # noqa: F401  (registers)
from judgelab.analyses.probes import measures as _probes  # noqa: F401  (registers)
from judgelab.analyses.registry import COLUMNS as COLUMNS
from judgelab.analyses.registry import CardContext as CardContext
from judgelab.analyses.registry import CardOptions as CardOptions
from judgelab.analyses.stability import measures as _stability  # noqa: F401  (registers)
from judgelab.core import lengths
from judgelab.reporting.card import composite as _composite  # noqa: F401  (registers)
from judgelab.reporting.card import stored
from judgelab.reporting.card.sources import CardSource

#: Order of the measures on the page and of each judge's rows (a measure registered but not
#: listed comes after these, in registration order).
ORDER = (
    "ca",
    "kappa_human",
    "agreement_human",
    "fpr",
    "fnr",
    "pass_rate_grounded",
    "transport_error",
    "consistency",
    "pos_a_rate",
    "p_longer",
    "length_coef",
    "context_trend",
    "probe_pull",
    "self_gap",
    "kappa_answered",
    "answered_gap",
    "kappa_reference",
    "alpha_peers",
    "stability",
    "invalid_rate",
    "cost_per_1k",
    "latency_per_1k",
)


def card_measures(families: tuple[str, ...] = ()) -> list[registry.Measure]:
    """Return the registered measures in page order (only `families` when given)."""
    found = {m.name: m for m in registry.registered(families)}
    placed = [found.pop(name) for name in ORDER if name in found]
    return placed + list(found.values())


#: measure → (label shown on the page, what it measures), in page order.
MEASURES: dict[str, tuple[str, str]] = {m.name: (m.label, m.doc) for m in card_measures()}


def run(ctx: CardContext) -> pd.DataFrame:
    """Return the rows of every registered measure (of `ctx.options.families`) for one judge."""
    rows = [r for m in card_measures(ctx.options.families) for r in m(ctx)]
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    out["n"] = out["n"].fillna(0).astype(int)
    out["headline"] = out["headline"].astype(bool)
    return out


def collect_measures(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judge: str,
    source: str = "",
    memo: dict | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Collect every trust measure that applies to one judge of one source's tables.

    Only greedy judgments (`sample` 0) are used. Measures that do not apply get one row
    with `status = "n/a"` and the reason in `note`.

    Args:
        items: The source's items table; needs `benchmark`, `split`, `item_id`, `task`,
            `gold`, `question`, `meta` and the texts lengths are counted from.
        judgments: The source's judgments table (every judge: peers, the judge's model
            under other prompts); needs the judgments schema columns.
        judge: The judge id carded.
        source: The source label written into every row.
        memo: Results shared by the judges of one card (pass one dict to every call).
        **options: `CardOptions` fields (`label_map`, `n_boot`, `seed`, `level`, ...).

    Returns:
        One row per measure × scope: `source`, `judge`, `measure` (a key of `MEASURES`),
        `scope` (split, condition, subset, … ; the headline row of each measure is marked
        `headline`), `value`, `ci_low`, `ci_high`, `n`, `p_value`, `status` (ok / n/a),
        `note`.

    Raises:
        KeyError: the judgments lack a key column.
        ValueError: the judge has no judgments.
    """
    ctx = CardContext.build(
        items, judgments, judge=judge, source=source, options=CardOptions(**options), memo=memo
    )
    return run(ctx)


def collect(sources: Mapping[str, CardSource], **options: Any) -> pd.DataFrame:
    """Collect the measures of every carded judge (`CardOptions` fields apply to all).

    A judge's rows computed before from the same tables, options, code and lock are read
    back from the cache (`stored`) instead of computed again.

    Returns:
        The `collect_measures` rows of every judge, plus `key` (`<source>:<judge>`) first.
    """
    opts = CardOptions(**options)
    memo: dict = {}
    parts = []
    for label, cs in sources.items():
        digests = {
            "items": stored.table_digest(cs.loaded.items),
            "judgments": stored.table_digest(cs.loaded.judgments),
        }
        items = None
        for judge in cs.judges:
            digest = stored.key(source=label, judge=judge, options=opts, **digests)
            rows = stored.read(digest)
            if rows is None:
                if items is None:  # once per source
                    items = lengths.add_lengths(cs.loaded.items, unit=opts.unit)
                ctx = CardContext.build(
                    items, cs.loaded.judgments, judge=judge, source=label, options=opts, memo=memo
                )
                rows = run(ctx)
                stored.write(digest, rows)
            parts.append(rows)
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "key", out["source"] + ":" + out["judge"])
    return out


def headlines(measures: pd.DataFrame) -> pd.DataFrame:
    """Return the headline row of every judge × measure (n/a rows included)."""
    out = measures[measures["headline"].astype(bool)]
    return out.drop_duplicates(["source", "judge", "measure"]).reset_index(drop=True)


def measures_view(measures: pd.DataFrame, *, digits: int = 3) -> pd.DataFrame:
    """Return the measures as display rows: label, scope, "value [low, high]", n, p, note."""

    def fmt(r: pd.Series) -> str:
        if r["status"] != "ok":
            return "n/a"
        v = f"{r['value']:.{digits}f}"
        if not (pd.isna(r["ci_low"]) or pd.isna(r["ci_high"])):
            v += f" [{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]"
        return v

    out = pd.DataFrame(
        {
            "judge": measures["source"] + ":" + measures["judge"],
            "measure": measures["measure"].map(lambda m: MEASURES[m][0]),
            "scope": measures["scope"],
            "value [95% CI]": measures.apply(fmt, axis=1),
            "n": measures["n"],
            "eff. clusters": measures.get("n_eff_clusters", pd.Series(dtype=float)).map(
                lambda g: "" if pd.isna(g) else f"{g:.1f}"
            ),
            "p": measures["p_value"].map(lambda p: "" if pd.isna(p) else f"{p:.3g}"),
            "note": measures["note"],
        }
    )
    return out.reset_index(drop=True)
