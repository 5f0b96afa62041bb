"""The columns of the `items` and `judgments` tables: names, kinds, domains, keys (no pandas).

`judgelab.core.schema` validates and coerces frames against these specs; this module holds
only the specs, so code that writes tables without pandas (`judgelab.judges.light`) shares
them (issue 38, item 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TASKS = ("pairwise", "pointwise", "qa")
CHOSEN = ("pos", "neg", "tie")
ORDERS = (0, 1)


@dataclass(frozen=True)
class Column:
    """One column of a table: its kind, whether it may be null, and its value domain."""

    name: str
    kind: str  # str | int | float | bool | datetime | json
    nullable: bool = True
    domain: tuple[Any, ...] | None = None
    minimum: float | None = None
    required: bool = True


#: Canonical pandas dtypes of the schema's column kinds.
DTYPES = {
    "str": "string",
    "json": "string",
    "int": "Int64",
    "float": "float64",
    "bool": "boolean",
    "datetime": "datetime64[us, UTC]",
}


@dataclass(frozen=True)
class TableSpec:
    """A table: its columns and the columns that form its key."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    #: Columns a loader may add in memory (never written: `coerce` drops them).
    derived: tuple[str, ...] = ()

    def column(self, name: str) -> Column:
        """Return the column spec called `name`."""
        return next(c for c in self.columns if c.name == name)

    @property
    def names(self) -> list[str]:
        """Return the column names in canonical order."""
        return [c.name for c in self.columns]


ITEMS = TableSpec(
    name="items",
    key=("benchmark", "split", "item_id"),
    columns=(
        Column("benchmark", "str", nullable=False),
        Column("split", "str", nullable=False),
        Column("item_id", "str", nullable=False),
        Column("task", "str", nullable=False, domain=TASKS),
        Column("question", "str"),
        Column("context", "str"),
        Column("response_pos", "str"),
        Column("response_neg", "str"),
        Column("response", "str"),
        Column("reference", "str"),
        Column("gold", "str"),
        Column("meta", "json"),
        # The resampling unit (DESIGN §8): items sharing a value are dependent (one question,
        # one source document) and every bootstrap / cluster-robust SE resamples these values.
        # Optional: null or absent means the item is its own unit (`core.clusters`).
        Column("cluster", "str", required=False),
        # Lengths are optional: lib computes them (judgelab.core.lengths), always with their unit.
        Column("len_question", "float", minimum=0, required=False),
        Column("len_context", "float", minimum=0, required=False),
        Column("len_pos", "float", minimum=0, required=False),
        Column("len_neg", "float", minimum=0, required=False),
        Column("len_response", "float", minimum=0, required=False),
        Column("len_unit", "str", required=False),
    ),
)

JUDGMENTS = TableSpec(
    name="judgments",
    key=("benchmark", "split", "item_id", "judge", "condition", "order", "sample"),
    # The item's resampling unit, copied from the items table on load (`core.clusters`).
    derived=("cluster",),
    columns=(
        Column("benchmark", "str", nullable=False),
        Column("split", "str", nullable=False),
        Column("item_id", "str", nullable=False),
        Column("judge", "str", nullable=False),
        Column("model", "str"),
        Column("prompt", "str"),
        Column("condition", "str", nullable=False),
        Column("order", "int", nullable=False, domain=ORDERS),
        Column("sample", "int", nullable=False, minimum=0),
        Column("output", "str"),
        Column("verdict", "str"),
        Column("valid", "bool", nullable=False),
        Column("chosen", "str", domain=CHOSEN),
        Column("correct", "bool"),
        Column("prompt_tokens", "int", minimum=0),
        Column("completion_tokens", "int", minimum=0),
        Column("latency_s", "float", minimum=0),
        Column("cost_usd", "float", minimum=0),
        Column("request_key", "str"),
        Column("created_at", "datetime"),
        # Optional, from imports (docs/importing.md): per-judgment fields of the source (a run
        # label, a score) as a JSON object (not `meta`, so a merge with items keeps both), and
        # the source's own slot shown first ("1"/"2", or "pos"/"neg"), beside `order`.
        Column("judgment_meta", "json", required=False),
        Column("shown_first", "str", required=False),
    ),
)

SPECS = {"items": ITEMS, "judgments": JUDGMENTS}
