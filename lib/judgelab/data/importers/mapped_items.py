"""Build the items of a mapped import, one per (benchmark, split, item id), checking agreement.

Every record of an item must give the same item-level values (question, context,
reference, `meta`, responses, gold, the cluster column): a difference is an error naming
both records, never a silent first-row-wins. Values that legitimately differ between an
item's judgments belong in `judgment_meta`.

Pairwise slots. With two slots (`response_1`/`response_2`) the gold slot becomes
`response_pos`; without gold the slots are put in a canonical order (alphabetical by
`model_1`/`model_2` when given, else the first record's slot order), recorded as
`model_pos`/`model_neg` in `meta`. Records of one item may list the slots in either order:
they are matched by text.
"""

from __future__ import annotations

import json
from typing import Any

from judgelab.data.importers.mapped_rows import Rows, Unmapped, isnull, text
from judgelab.data.importers.mapping_spec import normalise as _norm
from judgelab.data.importers.reshape import Loc, Record

ItemKey = tuple[str, str, str]


def _short(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return shown if len(shown) <= 80 else shown[:77] + "..."


class Items:
    """The items of one import, with the record each was first seen in."""

    def __init__(self) -> None:
        self.rows: dict[ItemKey, dict[str, Any]] = {}
        self.first: dict[ItemKey, tuple[Loc, dict[str, Any]]] = {}

    def agree(self, key: ItemKey, rec: Record, values: dict[str, Any], rows: Rows) -> None:
        """Raise when `values` differ from the first record of item `key` (naming both)."""
        if key not in self.first:
            self.first[key] = (rec.loc, values)
            return
        loc, have = self.first[key]
        for name, value in values.items():
            if have.get(name) != value:
                hint = (
                    "; values that differ between an item's judgments belong in judgment_meta"
                    if name.startswith("meta")
                    else ""
                )
                was = _short(have.get(name))
                raise rec.loc.error(
                    f"item {key[2]!r}: {name} {_short(value)} differs from {was} in {loc}{hint}",
                    rows.column(name) if not name.startswith("meta") else None,
                )

    def pointwise(
        self, rows: Rows, rec: Record, key: ItemKey, task: str, texts: dict[str, Any]
    ) -> dict[str, Any]:
        """Add the record's single-response item; return the record's own item values.

        The caller checks them against the item's first record (`agree`).
        """
        bench, split, item_id = key
        item = {
            "benchmark": bench,
            "split": split,
            "item_id": item_id,
            "task": task,
            **texts,
            "response": text(rows.get("response", rec)),
            "gold": _gold_label(rows, rec),
        }
        self.rows.setdefault(key, item)
        return item

    def pairwise(
        self, rows: Rows, rec: Record, key: ItemKey, texts: dict[str, Any], meta: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """Add the record's pairwise item; return it and this record's slot -> pos/neg map."""
        pos, neg, gold, slots, models = _slots(rows, rec)
        bench, split, item_id = key
        if key in self.rows:
            have = self.rows[key]
            loc = self.first[key][0]
            if (have["response_pos"], have["response_neg"]) == (neg, pos) and pos != neg:
                slots = {s: ("neg" if v == "pos" else "pos") for s, v in slots.items()}
                pos, neg = neg, pos
                if gold == "pos":
                    raise rec.loc.error(f"item {item_id!r}: gold disagrees with {loc}")
            elif (have["response_pos"], have["response_neg"]) != (pos, neg):
                raise rec.loc.error(f"item {item_id!r} has other responses than {loc}")
            if have["gold"] != gold:
                raise rec.loc.error(
                    f"item {item_id!r}: gold {gold!r} != {have['gold']!r} in {loc}",
                    rows.column("gold"),
                )
            return have, slots
        if models[0] or models[1]:
            meta = {**meta, "model_pos": models[0], "model_neg": models[1]}
        item = {
            "benchmark": bench,
            "split": split,
            "item_id": item_id,
            "task": "pairwise",
            **texts,
            "response_pos": pos,
            "response_neg": neg,
            "gold": gold,
            "meta": meta,
        }
        self.rows[key] = item
        return item, slots


def _gold_label(rows: Rows, rec: Record) -> str | None:
    gold = rows.get("gold", rec)
    if isinstance(gold, Unmapped):
        raise rec.loc.error(f"gold value {gold.raw!r} is not in the map", rows.column("gold"))
    return text(gold)


def _slots(
    rows: Rows, rec: Record
) -> tuple[str | None, str | None, str | None, dict[str, str], tuple[str | None, str | None]]:
    """Return (pos, neg, gold, slot -> pos/neg, (model_pos, model_neg)) of one record."""
    if "response_pos" in rows.fields:
        pos, neg = text(rows.get("response_pos", rec)), text(rows.get("response_neg", rec))
        return pos, neg, "pos", {"pos": "pos", "neg": "neg"}, (None, None)
    r1, r2 = text(rows.get("response_1", rec)), text(rows.get("response_2", rec))
    models = (text(rows.get("model_1", rec)), text(rows.get("model_2", rec)))
    g = rows.get("gold", rec)
    if isinstance(g, Unmapped):
        raise rec.loc.error(f"gold value {g.raw!r} is not in the map", rows.column("gold"))
    g = None if isnull(g) else _norm(g)
    if g not in (None, "1", "2", "tie"):
        raise rec.loc.error(f"gold must map to '1', '2' or 'tie', got {g!r}", rows.column("gold"))
    gold = {"1": "pos", "2": "pos", "tie": "tie", None: None}[g]
    if g == "2" or (g in (None, "tie") and models[0] and models[1] and models[1] < models[0]):
        return r2, r1, gold, {"2": "pos", "1": "neg"}, (models[1], models[0])
    return r1, r2, gold, {"1": "pos", "2": "neg"}, models


__all__ = ["ItemKey", "Items"]
