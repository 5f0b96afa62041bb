"""What judgments in one presentation order support, and what they cannot.

Every rate of `pairwise_rates` pairs the two orders of an item (consistent accuracy, the
flip rate, the position preference), so items judged in one order only have none of them:
their rows carry a reason. One order still supports a few honest numbers, per order:

- `accuracy`: correct verdicts over the items with a gold label judged in that order (an
  invalid verdict is wrong). In order 0 the better response is shown first, in order 1
  second, so this accuracy *includes* the judge's position preference — it cannot be
  separated from it without the other order;
- `invalid`: invalid outputs over the items judged in that order;
- `ties`: tie verdicts over the items judged in that order.

Position bias, consistency and consistent accuracy are not identified from one order: in
`item_outcomes`' convention the better response sits at A in every order-0 item, so the
share of A verdicts *is* the accuracy. `NOT_IDENTIFIED` says so for the notebooks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import scan_compare, units
from judgelab.analyses.pairwise.lazy import is_lazy, require_columns
from judgelab.analyses.pairwise.outcomes import CLUSTER, GROUPS
from judgelab.core import estimates
from judgelab.core.schema import require_columns as _require

METRICS = ("accuracy", "invalid", "ties")
#: Why the paired measures have no value on single-order items.
NOT_IDENTIFIED = (
    "consistent accuracy, consistency, the flip rate and the position preference pair the two "
    "presentation orders of an item; with one order the better response always sits at the "
    "same position, so the share of A verdicts is the accuracy and position bias cannot be "
    "told apart from skill"
)


def _cell_rows(
    part: pd.DataFrame, labels: np.ndarray, *, key: tuple, order: int, boot: dict
) -> list[dict]:
    """Return the rows of one (group, sample, order) cell of single-order judgments."""
    valid = part["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    chosen = part["chosen"].astype(object).to_numpy()
    invalid = ~valid | pd.isna(chosen)
    correct = part["correct"].astype("boolean")
    judged = np.ones(len(part))
    counts = {
        "accuracy": (
            correct.fillna(False).to_numpy(dtype=float),
            correct.notna().to_numpy(dtype=float),
        ),
        "invalid": (invalid.astype(float), judged),
        "ties": ((~invalid & (chosen == "tie")).astype(float), judged),
    }
    codes = np.unique(labels, return_inverse=True)[1]
    rows = []
    for metric, (num, den) in counts.items():
        row: dict = {"order": order, "metric": metric}
        keep = den > 0
        if not keep.any():
            why = f"no item with a gold label judged in order {order}"
            rows.append({**row, "value": np.nan, "n": 0.0, "reason": why})
            continue
        rng = estimates.seeded(boot["seed"], *key, order, metric)
        est = estimates.ratio(
            num[keep], den[keep], codes[keep], level=boot["level"], n_boot=boot["n_boot"], rng=rng
        )
        rows.append({**row, **est.fields(), "reason": ""})
    return rows


def single_order_rates(
    judgments: pd.DataFrame,
    *,
    groups: Sequence[str] = GROUPS,
    cluster: str | None = CLUSTER,
    n_boot: int = 999,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the measures one presentation order supports, over the single-order items.

    Args:
        judgments: A judgments table (the columns `item_outcomes` needs); only its items
            judged in one order are used (the complete ones are `pairwise_rates`' business).
            A polars LazyFrame (a large source) has only those rows read.
        groups: The group columns (judge, benchmark, split) of a row.
        cluster: The resampling-unit column (an item without one is its own unit).
        n_boot: Wild cluster bootstrap replicates of every interval.
        seed: Seed of those bootstraps (each row draws its own stream from it).
        level: Confidence level of the intervals.

    Returns:
        One row per group × sample × order × metric (`METRICS`): `value` with `ci_low`,
        `ci_high`, `n`, `n_clusters`, `n_eff_clusters`, `few_clusters`, `method`, and
        `reason` where a metric has no denominator. Empty when every item has both orders.
        An invalid verdict is wrong where its row has a gold label (`correct` not null).
    """
    groups = list(groups)
    needed = [*groups, "item_id", "sample", "order", "valid", "chosen", "correct"]
    if is_lazy(judgments):  # a large source: only its single-order rows are read
        names = require_columns(judgments, needed, "single_order_rates")
        wanted = [*needed, *([cluster] if cluster in names and cluster not in needed else [])]
        judgments = scan_compare.single_rows(judgments, groups, wanted)
    _require(judgments, needed, "single_order_rates")
    orders = judgments.groupby([*groups, "item_id", "sample"], dropna=False, observed=True)[
        "order"
    ].transform("nunique")
    single = judgments[(orders == 1).to_numpy()]
    keys = [*groups, "sample", "order"]
    boot = {"seed": seed, "level": level, "n_boot": n_boot}
    rows = []
    for key, part in single.groupby(keys, sort=False, observed=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        labels = units.unit_labels(part, cluster, [g for g in groups if g != "judge"])
        for row in _cell_rows(part, labels, key=key[:-1], order=int(key[-1]), boot=boot):
            rows.append({**dict(zip(keys, key, strict=True)), **row})
    cols = [*keys, "metric", *estimates.FIELDS, "reason"]
    return pd.DataFrame(rows, columns=cols).drop(columns="p_value")


def single_order_reason(single: pd.DataFrame) -> str | None:
    """Return why a single-order section has nothing to show (None when it has rows)."""
    if len(single):
        return None
    return "every item was judged in both presentation orders, so every rate above uses both"


__all__ = ["METRICS", "NOT_IDENTIFIED", "single_order_rates", "single_order_reason"]
