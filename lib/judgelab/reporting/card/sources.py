"""Card keys and the sources they name: parse keys, load and restrict sources, banners.

The card's unit is a **judge key** `<source>:<judge id>` (e.g. `llmbar:GPT-4.Vanilla`). The
same model appears under different ids in different sources, so a key never merges sources:
each (source, judge id) gets its own card and its own row. Loading goes through
`judgelab.data.catalog`; a source that cannot be had falls back to a sample set (with a banner).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import pandas as pd

from judgelab.analyses import pairwise
from judgelab.data import catalog
from judgelab.reporting import notebook


class CardKey(NamedTuple):
    """One card: a judge id within one source (never merged across sources)."""

    source: str
    judge: str

    def __str__(self) -> str:
        return f"{self.source}:{self.judge}"


class CardSource(NamedTuple):
    """A loaded source and the judges of it that get a card."""

    requested: str
    loaded: catalog.Loaded
    judges: list[str]
    note: str


def parse_key(key: str) -> CardKey:
    """Split `<source>:<judge>`; a `sample:<set>` source keeps its prefix.

    >>> parse_key("llmbar:GPT-4.Vanilla")
    CardKey(source='llmbar', judge='GPT-4.Vanilla')
    >>> parse_key("sample:nfl_correctness:GPT-4.umass")
    CardKey(source='sample:nfl_correctness', judge='GPT-4.umass')
    """
    parts = key.split(":")
    cut = 2 if key.startswith(catalog.SAMPLE_PREFIX) else 1
    if len(parts) <= cut or not all(parts[:cut]) or not ":".join(parts[cut:]):
        raise ValueError(
            f"judge key {key!r}: expected '<source>:<judge id>' "
            "(e.g. 'llmbar:GPT-4.Vanilla'; a sample source is 'sample:<set>:<judge id>')"
        )
    return CardKey(":".join(parts[:cut]), ":".join(parts[cut:]))


def title(keys: Sequence[str]) -> str:
    """Return the card's title: the judge's key for one card, the count for a comparison.

    >>> title(["llmbar:GPT-4.Vanilla"])
    'Judge report card: llmbar:GPT-4.Vanilla'
    """
    parsed = [parse_key(k) for k in keys]
    if len(parsed) == 1:
        return f"Judge report card: {parsed[0]}"
    return f"Judge report card: {len(parsed)} judges"


def load_sources(
    keys: Sequence[str],
    *,
    fallbacks: Mapping[str, str] | None = None,
    splits: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, CardSource]:
    """Load every source named by the judge keys, restricted to its judges and splits.

    A source that cannot be had falls back to `fallbacks[source]` (a sample set, shown with
    a banner). The requested judge ids do not exist there, so a fallback card covers the
    sample's judges instead (the first one when a single key asked for that source), and
    `note` says so.

    Raises:
        ValueError: a key is malformed, or names a judge the (real) source does not have.
    """
    fallbacks = dict(fallbacks or {})
    splits = dict(splits or {})
    wanted: dict[str, list[str]] = {}
    for key in keys:
        k = parse_key(key)
        wanted.setdefault(k.source, [])
        if k.judge not in wanted[k.source]:
            wanted[k.source].append(k.judge)
    out: dict[str, CardSource] = {}
    for source, judges in wanted.items():
        loaded = catalog.load_source(source, fallback=fallbacks.get(source))
        if loaded.judgments is None or loaded.judgments.empty:
            raise ValueError(f"source {source!r} has no judgments to card")
        table = catalog.select(loaded, splits=list(splits.get(source, [])))
        loaded = loaded._replace(judgments=table)
        note = ""
        if loaded.source != source:
            present = sorted(table["judge"].unique())
            chosen = present[:1] if len(keys) == 1 else present
            note = f"{source} unavailable: showing sample judges {chosen} instead of {judges}"
            judges = chosen
        else:
            pairwise.select_judges(table, judges)  # raises with the known ids
        label = loaded.source
        if label in out:  # two sources fell back to the same sample set
            merged = list(dict.fromkeys([*out[label].judges, *judges]))
            out[label] = out[label]._replace(judges=merged)
            continue
        out[label] = CardSource(source, loaded, list(judges), note)
    return out


def card_keys(sources: Mapping[str, CardSource]) -> list[CardKey]:
    """Return the keys that get a card, in the order requested."""
    return [CardKey(label, j) for label, cs in sources.items() for j in cs.judges]


def show_banners(sources: Mapping[str, CardSource]) -> None:
    """Display the data-source banner of every source (a red warning for sample data)."""
    from IPython.display import HTML, display

    for cs in sources.values():  # the run's provenance records what each card read
        notebook.record_loaded(cs.loaded)
    parts = [
        notebook.banner_html(cs.loaded.source, cs.loaded.items, reason=cs.loaded.reason)
        for cs in sources.values()
    ]
    display(HTML("".join(parts)))


def judges_overview(sources: Mapping[str, CardSource]) -> pd.DataFrame:
    """Return one row per carded judge: key, model, prompt, task, orders, gold, n.

    Returns:
        `key`, `source`, `judge`, `model`, `prompt`, `task`, `n_judgments`, `n_items`,
        `orders`, `samples`, `has_gold`, `note`.
    """
    rows = []
    for label, cs in sources.items():
        table = cs.loaded.judgments
        tasks = cs.loaded.items.set_index(["benchmark", "split", "item_id"])["task"]
        for judge in cs.judges:
            j = table[table["judge"] == judge]
            keys = pd.MultiIndex.from_frame(j[["benchmark", "split", "item_id"]].astype(str))
            task = tasks.reindex(keys).dropna().astype(str).unique()
            rows.append(
                {
                    "key": str(CardKey(label, judge)),
                    "source": label,
                    "judge": judge,
                    "model": ", ".join(map(str, j["model"].dropna().unique())),
                    "prompt": ", ".join(map(str, j["prompt"].dropna().unique())),
                    "task": ", ".join(sorted(task)),
                    "n_judgments": len(j),
                    "n_items": j[["benchmark", "split", "item_id"]].drop_duplicates().shape[0],
                    "orders": int(j["order"].nunique()),
                    "samples": int(j["sample"].nunique()),
                    "has_gold": bool(j["correct"].notna().any()),
                    "note": cs.note,
                }
            )
    return pd.DataFrame(rows)
