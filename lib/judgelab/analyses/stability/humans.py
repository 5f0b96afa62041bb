"""Judges beside human annotators: is judge–human disagreement larger than human–human?

Both speak in the *slots* of the source (which of its two responses won: e.g. `response1`,
`response2`, or `tie`), the frame the annotators labelled in: `chosen` (pos/neg/tie) is
relative to the humans' own majority, so a κ in it would be bent by the majority that
defines it. `with_humans` returns one table of raters — the judges (`rater_kind` judge), each
annotator (`annotator`) and, with two or more, their strict majority (`majority`) — whose
`slot` column `shift.verdict_shift` / `shift_matrix` compare with `label="slot"`.
`human_gap` asks the question directly: per judge, its mean agreement with one annotator
minus the annotators' mean agreement with each other on the same units (a ratio of sums:
`core.estimates.ratio`, the restricted wild cluster bootstrap, inverted).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from judgelab.analyses.stability import units as _units
from judgelab.core import estimates, wild
from judgelab.core.schema import meta_field, require_columns

#: The `rater_kind` of each row of `with_humans`.
KINDS: tuple[str, ...] = ("judge", "annotator", "majority")
#: Columns of `with_humans`.
RATER_COLUMNS: tuple[str, ...] = (
    *_units.UNIT_KEYS, "judge", "rater_kind", "sample", "valid", "slot", "cluster",
)  # fmt: skip
#: Name of the annotators' majority rater.
MAJORITY = "human majority"
_KEYS = ["benchmark", "split", "item_id"]


def _field(items: pd.DataFrame, name: str) -> pd.Series:
    """Return an items column, or `meta.<key>` of the items."""
    if name.startswith("meta."):
        return meta_field(items["meta"], name.removeprefix("meta."))
    require_columns(items, [name], "stability.humans")
    return items[name].astype(object)


def slot_labels(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    slots: Sequence[str],
    pos_slot: str = "meta.pos_slot",
) -> pd.DataFrame:
    """Return the judges' rows with `slot`: the source slot of the response each one chose.

    Args:
        judgments: A pairwise judgments table (`chosen`: pos/neg/tie, un-swapped).
        items: Its items table; `pos_slot` names the slot (one of `slots`) of response_pos.
        slots: The source's two response slots (e.g. `["response1", "response2"]`).
        pos_slot: Items column or `meta.<key>` holding each item's positive slot.

    Returns:
        The judgments with `rater_kind` "judge" and `slot` (a slot, `tie`, or missing
        where the verdict is missing).
    """
    require_columns(judgments, [*_units.UNIT_KEYS, "judge", "chosen"], "slot_labels")
    if len(slots) != 2:
        raise ValueError(f"slot_labels: slots must name two responses, got {list(slots)}")
    pos = items[_KEYS].assign(_pos=_field(items, pos_slot).to_numpy())
    bad = pos[pos["_pos"].notna() & ~pos["_pos"].isin(list(slots))]
    if not bad.empty:
        raise ValueError(
            f"slot_labels: item {bad['item_id'].iloc[0]!r} has {pos_slot}="
            f"{bad['_pos'].iloc[0]!r}, not one of {list(slots)}"
        )
    out = judgments.merge(pos, on=_KEYS, how="left")
    other = out["_pos"].map({slots[0]: slots[1], slots[1]: slots[0]})
    chosen = out["chosen"].astype(object)
    out["slot"] = np.select(
        [chosen == "pos", chosen == "neg", chosen == "tie"],
        [out["_pos"].astype(object), other.astype(object), "tie"],
        default=None,
    )
    out["slot"] = out["slot"].where(out["slot"].notna() & out["_pos"].notna(), None)
    return out.drop(columns="_pos").assign(rater_kind="judge")


def _annotator_labels(
    items: pd.DataFrame, labels: str, codes: Mapping[str, str], name: str
) -> pd.DataFrame:
    """Return one row per (item, annotator): `judge` (annotator name) and `slot`."""
    raw = _field(items, labels)
    rows = []
    for key, value in zip(items[_KEYS].itertuples(index=False), raw, strict=True):
        if value is None or (np.isscalar(value) and pd.isna(value)):
            continue
        many = isinstance(value, list | tuple | np.ndarray)
        for k, v in enumerate(value if many else [value], start=1):
            code = str(v).strip()
            if code not in codes:
                raise ValueError(
                    f"with_humans: item {key.item_id!r}: {labels} value {v!r} is not one of "
                    f"{sorted(codes)} (codes)"
                )
            rater = f"annotator{k}" if many else name
            rows.append((*key, rater, "annotator", codes[code]))
    return pd.DataFrame(rows, columns=[*_KEYS, "judge", "rater_kind", "slot"])


def _majorities(humans: pd.DataFrame) -> pd.DataFrame:
    """Return the annotators' strict-majority slot per item (no majority: left out)."""
    rows = []
    for key, block in humans.groupby(_KEYS, sort=False):
        if len(block) < 2:
            continue
        top, n = Counter(block["slot"]).most_common(1)[0]
        if 2 * n > len(block):
            rows.append((*key, MAJORITY, "majority", top))
    return pd.DataFrame(rows, columns=humans.columns)


def with_humans(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    labels: str,
    codes: Mapping[str, str],
    slots: Sequence[str],
    pos_slot: str = "meta.pos_slot",
    name: str = "humans",
) -> pd.DataFrame:
    """Return the judges and the human annotators as one table of raters, in source slots.

    Args:
        judgments: A pairwise judgments table (see `slot_labels`).
        items: Its items table, holding the human labels in `labels`.
        labels: Items column or `meta.<key>` of the human label(s): a list per item (one
            annotator per position: `annotator1`, `annotator2`, …) or one value (rater `name`).
        codes: Each raw label (as text) → the slot it names (or `tie`), e.g.
            `{"0": "tie", "1": "response1", "2": "response2"}`; any other label is an error.
        slots: The source's two response slots (see `slot_labels`).
        pos_slot: Items column or `meta.<key>` holding each item's positive slot.
        name: The rater name of a single human label per item.

    Returns:
        `RATER_COLUMNS`: one row per unit and rater. A human label is repeated on every unit
        (presentation order) of its item that a judge rated; with two or more annotators,
        `human majority` holds the label more than half of them gave.
    """
    judges = slot_labels(judgments, items, slots=slots, pos_slot=pos_slot)
    humans = _annotator_labels(items, labels, codes, name)
    humans = pd.concat([humans, _majorities(humans)], ignore_index=True)
    unit_cols = [*_units.UNIT_KEYS, *(["cluster"] if "cluster" in judges else [])]
    judged = judges[unit_cols].drop_duplicates(_units.UNIT_KEYS)
    humans = judged.merge(humans, on=_KEYS, how="inner").assign(sample=0, valid=True)
    out = pd.concat([judges, humans], ignore_index=True)
    if "cluster" not in out.columns:
        out["cluster"] = None
    if "sample" not in judgments.columns:
        out["sample"] = 0
    if "valid" not in judgments.columns:
        out["valid"] = True
    return out[list(RATER_COLUMNS)].reset_index(drop=True)


def humans_reason(
    items: pd.DataFrame, *, labels: str, pos_slot: str = "meta.pos_slot"
) -> str | None:
    """Return why judges cannot be set beside human annotators, None when the items allow it."""
    have = {
        f: "meta" in items.columns and _field(items, f).notna().any()
        if f.startswith("meta.")
        else f in items.columns and items[f].notna().any()
        for f in (labels, pos_slot)
    }
    missing = [f for f, ok in have.items() if not ok]
    if not missing:
        return None
    return (
        f"the items carry no {' and no '.join(missing)}: no human label in the source's "
        "slots to set beside the judges' verdicts"
    )


def human_gap(
    raters: pd.DataFrame,
    *,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
) -> pd.DataFrame:
    """Return, per judge, its agreement with one annotator against the annotators' own.

    On the units the judge and every annotator labelled: `judge-human` is the mean over
    annotators of the share of units where the judge gives the annotator's label;
    `human-human` the mean over annotator pairs of their shared-label share; `gap` the first
    minus the second (negative: the judge agrees with a human less than humans agree with
    each other). The shares are ratios of sums, the gap their paired difference
    (`estimates.difference`, its p-value testing gap = 0), each with its interval.

    Args:
        raters: `with_humans` (two or more annotators).
        seed: Seed of the bootstraps (each row seeded by its key).
        level: Confidence level.
        n_boot: Wild bootstrap replicates.

    Returns:
        `judge`, `measure` (`judge-human`, `human-human`, `gap`), `n_annotators`,
        `estimates.FIELDS`.
    """
    require_columns(raters, ["rater_kind"], "human_gap")
    kinds = raters.drop_duplicates("judge").set_index("judge")["rater_kind"]
    annot = sorted(kinds.index[kinds == "annotator"])
    judges = sorted(kinds.index[kinds == "judge"])
    cols = ["judge", "measure", "n_annotators", *estimates.FIELDS]
    if len(annot) < 2:
        return pd.DataFrame(columns=cols)
    w = _units.wide(raters[raters["judge"].isin([*annot, *judges])], by="judge", label="slot")
    hh_pairs = list(combinations(annot, 2))
    rows = []
    for judge in judges:
        both = w[w[[judge, *annot]].notna().all(axis=1)]
        if both.empty:
            continue
        jh = np.mean([(both[judge] == both[a]).to_numpy(float) for a in annot], axis=0)
        hh = np.mean([(both[a] == both[b]).to_numpy(float) for a, b in hh_pairs], axis=0)
        codes = _units.unit_codes(both)
        ones, head = np.ones(len(jh)), {"judge": judge, "n_annotators": len(annot)}
        for measure, num in (("judge-human", jh), ("human-human", hh)):
            est = estimates.ratio(
                num, ones, codes, level=level, n_boot=n_boot,
                rng=estimates.seeded(seed, "human_gap", judge, measure),
            )  # fmt: skip
            rows.append(head | {"measure": measure} | est.fields())
        gap = estimates.difference(  # paired: both shares on the same units and clusters
            np.concatenate([hh, jh]), np.concatenate([ones, ones]),
            np.repeat([0, 1], len(jh)), np.concatenate([codes, codes]), level=level,
            n_boot=n_boot, rng=estimates.seeded(seed, "human_gap", judge, "gap"),
        )  # fmt: skip
        rows.append(head | {"measure": "gap"} | gap.fields() | {"n": float(len(jh))})
    return pd.DataFrame(rows, columns=cols)


def pair_kinds(shift: pd.DataFrame, raters: pd.DataFrame) -> pd.DataFrame:
    """Return the verdict-shift table with `kind`: judge–judge, judge–human or human–human.

    >>> r = pd.DataFrame({"judge": ["j", "annotator1"], "rater_kind": ["judge", "annotator"]})
    >>> pair_kinds(pd.DataFrame({"a": ["annotator1"], "b": ["j"]}), r)["kind"].tolist()
    ['judge-human']
    """
    require_columns(shift, ["a", "b"], "pair_kinds")
    human = raters.drop_duplicates("judge").set_index("judge")["rater_kind"] != "judge"
    n = shift["a"].map(human).fillna(False).astype(int) + shift["b"].map(human).fillna(
        False
    ).astype(int)
    kind = n.map({0: "judge-judge", 1: "judge-human", 2: "human-human"})
    return shift.assign(kind=kind.to_numpy())
