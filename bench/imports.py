"""The import workload of `bench/tables.py` in every shape (issue 38 item 2).

One generated data set — `n` judgment rows, n/2 items x 2 presentation orders, ~5 % of
verdicts outside the map — written in six shapes of `docs/importing.md`, each with its mapping:

- `csv`, `jsonl`  flat columns (section 0 of the docs);
- `nested`        JSONL with the question, responses and verdict inside records (section 1);
- `exploded`      JSONL, one line an item, both orders' judgments in a list (section 2);
- `joined`        an items JSONL plus one output JSONL per order, joined on an id (section 4);
- `parquet`       the flat columns as a parquet file in row groups.

`import_child(path, shape)` runs `judgelab.data.importers.mapping.import_file` on one shape
(in the child interpreter of `bench.tables.child`): rows/s and peak RSS.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.run import peak_rss_mb

SHAPES = ("csv", "jsonl", "nested", "exploded", "joined", "parquet")
TARGETS = {"rows_per_s": 100_000.0, "peak_rss_mb": 1024.0}

_VERDICT_MAP = {"[[A]]": "A", "[[B]]": "B", "[[C]]": "tie"}
#: The mapping of the flat shapes: two slots, a swap flag, a verdict map.
FLAT_MAPPING = {
    "benchmark": "scale",
    "task": "pairwise",
    "split": {"column": "split"},
    "item_id": "id",
    "question": "instruction",
    "response_1": "out1",
    "response_2": "out2",
    "gold": {"column": "label", "map": {"1": "1", "2": "2", "tie": "tie"}},
    "swapped": "swap",
    "verdict": {"column": "winner", "map": _VERDICT_MAP},
    "judge": {"column": "judge"},
}
_NESTED = {
    **FLAT_MAPPING,
    "question": "input.question",
    "response_1": "answers.first",
    "response_2": "answers.second",
    "verdict": {"column": "eval.winner", "map": _VERDICT_MAP},
    "judge": {"column": "eval.judge"},
}
_EXPLODED = {
    **FLAT_MAPPING,
    "explode": "judgments",
    "swapped": {"column": "_index", "map": {0: False, 1: True}},
    "verdict": {"column": "judgments.winner", "map": _VERDICT_MAP},
    "judge": {"column": "judgments.judge"},
}
_JOINED = {
    **FLAT_MAPPING,
    "join": {
        "files": {"o12": "out_12.jsonl", "o21": "out_21.jsonl"},
        "on": {"left": "id", "right": "qid"},
    },
    "swapped": {"column": "_join", "map": {"o12": False, "o21": True}},
    "verdict": {"column": "joined.winner", "map": _VERDICT_MAP},
    "judge": {"column": "joined.judge"},
}
MAPPINGS: dict[str, dict[str, Any]] = {
    "csv": FLAT_MAPPING,
    "jsonl": FLAT_MAPPING,
    "nested": _NESTED,
    "exploded": _EXPLODED,
    "joined": _JOINED,
    "parquet": FLAT_MAPPING,
}


def _flat_chunk(start: int, stop: int, rng: Any) -> Any:
    """The flat rows `start`..`stop` (row r: item r // 2, order r % 2) as a pandas frame."""
    import numpy as np
    import pandas as pd

    winners = np.array(["[[A]]", "[[B]]", "[[C]]", "no idea"], dtype=object)
    row = np.arange(start, stop)
    item = row // 2
    ids = pd.Series(item).map("q{}".format)
    return pd.DataFrame(
        {
            "id": ids,
            "split": np.where(item % 3 == 0, "dev", "test"),
            "instruction": "Which answer is better for question " + ids + "?",
            "out1": "First answer to " + ids,
            "out2": "Second answer to " + ids,
            "label": np.where(item % 2 == 0, "1", "2"),
            "swap": np.where(row % 2 == 0, "false", "true"),
            "winner": winners[rng.choice(4, size=len(row), p=[0.45, 0.4, 0.1, 0.05])],
            "judge": "gpt-4o",
        }
    )


def write_import_files(
    folder: Path, n_rows: int, *, chunk: int = 100_000, shapes: tuple[str, ...] = ("csv", "jsonl")
) -> dict[str, Path]:
    """Write `n_rows` judgment rows (n/2 items x 2 orders) in each of `shapes`, in chunks.

    Returns the data file of each shape (`joined` also writes its two output files beside).
    `n_rows` is rounded down to an even number for the shapes that hold both orders together.
    """
    import numpy as np
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    names = {
        "csv": "judgments.csv",
        "jsonl": "judgments.jsonl",
        "nested": "nested.jsonl",
        "exploded": "exploded.jsonl",
        "joined": "items.jsonl",
        "parquet": "judgments.parquet",
    }
    paths = {s: folder / names[s] for s in shapes}
    handles = {s: open(paths[s], "wb") for s in shapes if s != "parquet"}
    if "joined" in shapes:
        handles["o12"] = open(folder / "out_12.jsonl", "wb")
        handles["o21"] = open(folder / "out_21.jsonl", "wb")
    writer = None
    chunk -= chunk % 2
    try:
        for start in range(0, n_rows - n_rows % 2, chunk):
            flat = _flat_chunk(start, min(n_rows - n_rows % 2, start + chunk), rng)
            df = pl.from_pandas(flat)
            if "csv" in shapes:
                handles["csv"].write(flat.to_csv(header=start == 0, index=False).encode())
            if "jsonl" in shapes:
                handles["jsonl"].write(df.write_ndjson().encode())
            if "nested" in shapes:
                handles["nested"].write(_nested(df).write_ndjson().encode())
            if "exploded" in shapes or "joined" in shapes:
                _per_item(df, handles)
            if "parquet" in shapes:
                table = pa.Table.from_pandas(flat, preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(paths["parquet"], table.schema)
                writer.write_table(table)
    finally:
        for h in handles.values():
            h.close()
        if writer is not None:
            writer.close()
    return paths


def _nested(df: Any) -> Any:
    import polars as pl

    return df.select(
        "id",
        "split",
        pl.struct(question="instruction").alias("input"),
        pl.struct(first="out1", second="out2").alias("answers"),
        "label",
        "swap",
        pl.struct("winner", "judge").alias("eval"),
    )


def _per_item(df: Any, handles: dict[str, Any]) -> None:
    """Write the chunk's items with both judgments in a list, and/or as items + two outputs."""
    import polars as pl

    first, second = df[0::2], df[1::2]
    base = first.select("id", "split", "instruction", "out1", "out2", "label")
    if "exploded" in handles:
        judgments = pl.concat_list(
            pl.struct(first.select("winner", "judge")),
            pl.struct(second.select("winner", "judge")),
        ).alias("judgments")
        handles["exploded"].write(base.with_columns(judgments).write_ndjson().encode())
    if "joined" in handles:
        handles["joined"].write(base.write_ndjson().encode())
        for name, part in (("o12", first), ("o21", second[::-1])):  # o21 in reverse order
            out = part.select(pl.col("id").alias("qid"), "winner", "judge")
            handles[name].write(out.write_ndjson().encode())


def import_child(path: str, shape: str | None = None, stream: bool = True) -> dict[str, Any]:
    """In the child: import `path` with `shape`'s mapping and write both tables as parquet.

    Without `shape` the flat mapping is used. `stream` (default): `import_file_to`, which
    writes the tables as it imports (part by part on the column-wise path: what 10^7 rows
    need); `import_s` is that whole call and `write_s` 0. Else `import_file` alone
    (`import_s`: read, map, build the validated tables in memory) and then the two
    `tables.write_*` calls (`write_s`).
    """
    import pyarrow.parquet as pq

    from judgelab.core import tables
    from judgelab.data.importers.mapping import import_file, import_file_to

    raw = MAPPINGS[shape] if shape else FLAT_MAPPING
    out = Path(path).parent / "out"
    items_path, judgments_path = out / "items.parquet", out / "judgments.parquet"
    t0 = time.perf_counter()
    if stream:
        n_items, rows = import_file_to(path, raw, items_path, judgments_path)
        t1 = time.perf_counter()
        rss_import = peak_rss_mb()
    else:
        imported = import_file(path, raw)
        t1 = time.perf_counter()
        rss_import = peak_rss_mb()
        tables.write_items(imported.items, items_path)
        tables.write_judgments(imported.judgments, judgments_path)
        n_items, rows = len(imported.items), len(imported.judgments)
        del imported
    t2 = time.perf_counter()
    valid = pq.read_table(judgments_path, columns=["valid"]).column("valid")
    return {
        "import_s": t1 - t0,
        "write_s": t2 - t1,
        "rows": rows,
        "items": n_items,
        "rows_per_s": rows / (t1 - t0),
        "rows_per_s_with_write": rows / (t2 - t0),
        "peak_rss_mb_import": rss_import,
        "peak_rss_mb": peak_rss_mb(),
        "valid": int(valid.to_numpy().sum()),
        "streamed": stream,
    }
