"""The items table's `cluster` column from a source's declared rule(s) (DESIGN §8).

A registry source declares its resampling unit (`cluster:` in its YAML, see
`judgelab.data.sources`): one rule of `judgelab.core.clusters` or a list of rules tried in
order per item. `derive_all` applies such a declaration; `with_clusters` writes the column
onto an items table, keeping any value an importer already set. `RULES_KEY` is the manifest
entry recording the declaration an import used, so a changed (or, for tables imported before
clusters existed, absent) declaration is re-derived (`judgelab.data.ingest.ensure_imported`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgelab.core import clusters
from judgelab.core.cluster_rules import parse_cluster as parse_cluster
from judgelab.core.cluster_rules import rule_text as rule_text

#: The manifest key recording the cluster rules an import applied.
RULES_KEY = "cluster_rules_v2"  # v2: rule-derived values prefixed by benchmark only


def derive_all(items: pd.DataFrame, rules: Sequence[str]) -> pd.Series:
    """Return each item's cluster: the first rule of `rules` that yields a value for it.

    Items for which no rule yields a value are their own unit (`clusters.derive` "item").

    >>> it = pd.DataFrame({"benchmark": "b", "split": "s", "item_id": ["1", "2"],
    ...                    "question": ["q", "q"], "meta": ['{"k": 7}', None]})
    >>> derive_all(it, ["meta.k", "question"]).tolist()
    ['b|meta|7', 'b|question|q']
    """
    own = clusters.derive(items, "item")
    out = own.copy()
    unset = pd.Series(True, index=items.index)
    for rule in rules:
        if rule == "item" or not unset.any():
            break
        got = clusters.derive(items, rule)
        take = unset & (got != own)
        out[take] = got[take]
        unset &= ~take
    return out.rename(clusters.COLUMN)


def with_clusters(items: pd.DataFrame, rules: Sequence[str], *, keep: bool = True) -> pd.DataFrame:
    """Return `items` with its `cluster` column derived from `rules`.

    Args:
        items: An items table (with or without `cluster`).
        rules: The declaration (see `derive_all`).
        keep: Keep the non-empty clusters already in `items` (an importer's own); False
            re-derives every row.
    """
    derived = derive_all(items, rules) if len(items) else pd.Series([], dtype=object)
    out = items.copy()
    if keep and clusters.COLUMN in items.columns:
        given = items[clusters.COLUMN].astype("string")
        has = given.notna() & (given != "")
        derived = given.where(has, derived.astype("string"))
    out[clusters.COLUMN] = pd.Series(derived, index=items.index, dtype="string")
    return out


def n_clusters(items: pd.DataFrame) -> int:
    """Return the number of resampling units of an items table (unset rows: one each)."""
    if items.empty:
        return 0
    own = clusters.derive(items, "item")
    if clusters.COLUMN in items.columns:
        given = items[clusters.COLUMN].astype("string")
        own = given.where(given.notna() & (given != ""), own)
    return int(own.nunique())
