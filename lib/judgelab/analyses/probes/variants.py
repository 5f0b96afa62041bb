"""Probe variants of a pairwise benchmark: a new items table the runner judges like any other.

`generate(items, probes, seed=...)` returns, for every pairwise item with both responses,
its unperturbed **control** (probe `none`) and, per probe, two **arms**: the probe applied to
the better response (`probe_target` = `pos`) and to the worse one (`neg`), so a probe's
pull is separable from accuracy. Every row lands in benchmark `<original>+probes` (the
original split and gold kept) with its provenance in `meta` (`PROVENANCE`): the probe, the
target slot, the seed, whether the probe was a no-op, the original benchmark and item id.

Item ids: the control keeps the original id; a variant is `<id>~<probe>~<target>`. All
rows made from one original item share its resampling unit (`cluster`: the original's
cluster, else the original item itself), so every interval resamples original items.
Randomness is drawn per (seed, probe, benchmark, split, item, target): a variant does not
depend on which other probes or items were generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from judgelab.analyses.probes.catalogue import DEFAULT_MODEL, PAD_RATIO, PROBES, apply
from judgelab.core import schema
from judgelab.core.stats import rng_for
from judgelab.errors import check_choice

#: Probe of the unperturbed control rows.
CONTROL = "none"
#: The arms: the probe targets the better (`pos`) or the worse (`neg`) response.
TARGETS = ("pos", "neg")
SUFFIX = "+probes"
#: Provenance keys every generated row carries in `meta`.
PROVENANCE = (
    "probe",
    "probe_target",
    "probe_seed",
    "probe_noop",
    "orig_benchmark",
    "orig_item_id",
)
_SEP = "~"


def variant_id(item_id: str, probe: str, target: str) -> str:
    """Return the item id of a variant (the control keeps `item_id`).

    >>> variant_id("12", "authority", "neg"), variant_id("12", "none", "")
    ('12~authority~neg', '12')
    """
    return str(item_id) if probe == CONTROL else _SEP.join((str(item_id), probe, target))


def _check(items: pd.DataFrame, probes: Sequence[str]) -> pd.DataFrame:
    schema.require_columns(
        items,
        ["benchmark", "split", "item_id", "task", "response_pos", "response_neg", "meta"],
        "probes.generate",
    )
    if not probes:
        raise ValueError(f"no probe given; known: {list(PROBES)}")
    for p in probes:
        check_choice("probe", p, tuple(PROBES))
    dupes = sorted({p for p in probes if list(probes).count(p) > 1})
    if dupes:
        raise ValueError(f"probe(s) {dupes} given twice")
    ok = (
        (items["task"] == "pairwise")
        & items["response_pos"].notna()
        & items["response_neg"].notna()
    )
    if not ok.any():
        raise ValueError(
            "probes.generate: no pairwise item with both responses "
            f"(benchmarks {sorted(map(str, items['benchmark'].unique()))})"
        )
    return items[ok.to_numpy()]


def _cluster(row: dict[str, Any]) -> str:
    given = row.get("cluster")
    if isinstance(given, str) and given:
        return given
    return f"{row['benchmark']}|{row['split']}|item|{row['item_id']}"


def _row(
    row: dict[str, Any], meta: dict, probe: str, target: str, seed: int, suffix: str
) -> dict[str, Any]:
    out = {k: row.get(k) for k in schema.ITEMS.names if not k.startswith("len_")}
    out.update(
        benchmark=f"{row['benchmark']}{suffix}",
        item_id=variant_id(row["item_id"], probe, target),
        cluster=_cluster(row),
    )
    prov = {
        "probe": probe,
        "probe_target": target,
        "probe_seed": int(seed),
        "probe_noop": False,
        "orig_benchmark": str(row["benchmark"]),
        "orig_item_id": str(row["item_id"]),
    }
    out["meta"] = {**meta, **prov}
    return out


def _variant(
    base: dict[str, Any], row: dict[str, Any], probe: str, target: str, opts: dict[str, Any]
) -> dict[str, Any]:
    """Apply `probe` to the `target` response (or to the context, aimed at it)."""
    key = (row["benchmark"], row["split"], row["item_id"], target)
    rng = rng_for(opts["seed"], "probe", probe, *key)
    slot = PROBES[probe].slot
    aimed = row[f"response_{target}"]
    column = f"response_{target}" if slot == "response" else "context"
    done = apply(
        probe,
        row.get(column),
        rng,
        target=aimed,
        model=opts["model"],
        pad_ratio=opts["pad_ratio"],
    )
    base[column] = row.get(column) if done.noop else done.text
    base["meta"]["probe_noop"] = bool(done.noop)
    return base


def generate(
    items: pd.DataFrame,
    probes: Sequence[str] = tuple(PROBES),
    *,
    seed: int = 0,
    model: str = DEFAULT_MODEL,
    pad_ratio: float = PAD_RATIO,
    suffix: str = SUFFIX,
) -> pd.DataFrame:
    """Return the probe benchmark of `items`: controls and both arms of every probe.

    Args:
        items: An items table; only pairwise items with both responses are used.
        probes: Probe names (`PROBES`), in the order their rows are written.
        seed: Seed of every drawn choice (which citation, filler, sentence, ...).
        model: The model a `self_identification` probe names (the judge's own model).
        pad_ratio: `verbosity` adds at least this share of a response's words.
        suffix: Appended to each benchmark name.

    Returns:
        A validated items table (benchmark `<orig><suffix>`), one control plus 2 ×
        len(probes) variants per item, provenance in `meta` (`PROVENANCE`), lengths dropped
        (recompute them), `cluster` = the original item's unit.

    Raises:
        ValueError: no probe, an unknown or repeated probe, or no pairwise item.
    """
    used = _check(items, list(probes))
    if not 0 <= pad_ratio <= 10:
        raise ValueError(f"pad_ratio must be in [0, 10], got {pad_ratio}")
    opts = {"seed": seed, "model": model, "pad_ratio": pad_ratio}
    rows: list[dict[str, Any]] = []
    for row in used.to_dict("records"):
        meta = schema.read_meta(row.get("meta"))
        rows.append(_row(row, meta, CONTROL, "", seed, suffix))
        for probe in probes:
            for target in TARGETS:
                base = _row(row, meta, probe, target, seed, suffix)
                rows.append(_variant(base, row, probe, target, opts))
    return schema.new_items(rows)


def select_items(
    items: pd.DataFrame, splits: Sequence[str] = (), limit: int | None = None
) -> pd.DataFrame:
    """Return the items of `splits` (all when empty), the first `limit` of each split.

    Raises:
        ValueError: a split is not in the items (the message lists the known ones), or
            `limit` < 1.
    """
    schema.require_columns(items, ["split"], "probes.select_items")
    if splits:
        known = set(items["split"].astype(str))
        unknown = [s for s in splits if s not in known]
        if unknown:
            raise ValueError(f"unknown split(s) {unknown}; known: {sorted(known)}")
        items = items[items["split"].astype(str).isin(list(splits))]
    if limit is not None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        items = items.groupby("split", sort=False, group_keys=False).head(limit)
    return items.reset_index(drop=True)


def provenance(items: pd.DataFrame) -> pd.DataFrame:
    """Return the provenance of a probe benchmark's items, one row per item.

    Returns:
        `benchmark`, `split`, `item_id` and the `PROVENANCE` columns (`probe` null for rows
        that are no probe item).
    """
    schema.require_columns(items, ["benchmark", "split", "item_id", "meta"], "probes.provenance")
    out = items[["benchmark", "split", "item_id"]].astype(str).reset_index(drop=True)
    for key in PROVENANCE:
        out[key] = schema.meta_field(items["meta"].reset_index(drop=True), key).to_numpy()
    return out


def variant_counts(items: pd.DataFrame) -> pd.DataFrame:
    """Return how many items each (probe, target) arm has, and how many left the text as is.

    `items`: a probe benchmark (`generate`) or its `provenance`. Returns one row per arm in
    the order the arms first appear: `probe`, `probe_target`, `items`, `noop` (variants the
    probe could not change: they stay in, counted, and weigh in the effects like any other).
    """
    prov = items if "probe_noop" in items.columns else provenance(items)
    noop = prov["probe_noop"].map(lambda v: v is True or v == 1).astype(int)
    return (
        prov.assign(probe_noop=noop)
        .groupby(["probe", "probe_target"], sort=False)
        .agg(items=("item_id", "size"), noop=("probe_noop", "sum"))
        .reset_index()
    )


def is_probe_benchmark(items: pd.DataFrame) -> bool:
    """Return True when some item carries probe provenance (a control and a variant)."""
    if "meta" not in items.columns or items.empty:
        return False
    probe = schema.meta_field(items["meta"], "probe")
    return bool((probe == CONTROL).any() and probe.isin(list(PROBES)).any())


__all__ = [
    "CONTROL",
    "PROVENANCE",
    "SUFFIX",
    "TARGETS",
    "generate",
    "is_probe_benchmark",
    "provenance",
    "select_items",
    "variant_counts",
    "variant_id",
]
