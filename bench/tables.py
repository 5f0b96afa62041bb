"""Tables at scale (issue 24): pairwise rates from 10^7–10^8 judgment rows, streaming imports.

Run from the repository root::

    python -m bench.tables                    # 10^7 rows (10^6 items x 5 judges x 2 orders)
    python -m bench.tables --huge             # also 10^8 rows (needs ~2 GB of disk)
    python -m bench.tables --only import      # the generic importer, 10^6 rows in every shape
    python -m bench.tables --only import --shapes parquet --import-rows 10000000 --repeat 1
    python -m bench.tables --smoke            # tiny sizes (tests/contract/test_bench_tables.py)

Workloads, each measured in a child process (its own peak RSS; polars limited to `--threads`):

- `scan`    judgments parquet generated on disk in row-group chunks (never the whole table
            in memory: `<tmp>/synthetic/judge-XX.parquet`, as `data/judgments/<benchmark>/`
            holds them) → `pairwise.scan.scan_rates` (every rate, per split, pooled and mean
            of splits, bootstrap CIs with B = `--n-boot`, the position test);
- `import`  10^6 judgment rows (`--import-rows`) in every shape of `bench.imports` (flat
            CSV and JSONL, nested JSON, an exploded list, joined files, parquet; `--shapes`)
            through the generic importer, both tables written: `mapping.import_file_to`
            (part by part on the column-wise path; its figures include the write) or, with
            `--in-memory`, `import_file` then `tables.write_*` (as `data import-file` builds
            the tables before merging them): rows/s and peak RSS per shape.

Generated files live in a temporary folder removed afterwards. Results: a dict with median,
min and max over `--repeat` runs (`bench_tables`), printed and written as JSON (`--out`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.imports import SHAPES, import_child, write_import_files  # noqa: E402
from bench.imports import TARGETS as IMPORT_TARGETS  # noqa: E402
from bench.run import peak_rss_mb, summarize  # noqa: E402

#: Sizes: `full` is issue 24's 10^7 rows, `huge` its 10^8, `smoke` only proves the code runs.
SIZES: dict[str, dict[str, int]] = {
    "full": {"items": 1_000_000, "judges": 5, "splits": 5, "n_boot": 1000, "import_rows": 10**6},
    "huge": {"items": 10_000_000, "judges": 5, "splits": 5, "n_boot": 1000, "import_rows": 0},
    "smoke": {"items": 2_000, "judges": 2, "splits": 2, "n_boot": 20, "import_rows": 2_000},
}
TARGETS = {"scan_wall_s": 20.0, "scan_peak_rss_mb": 2048.0, "huge_peak_rss_mb": 4096.0}
CHUNK_ITEMS = 200_000


def write_judgments(
    folder: Path,
    n_items: int,
    n_judges: int,
    n_splits: int,
    *,
    chunk: int = CHUNK_ITEMS,
    complete: bool = False,
) -> int:
    """Write items x judges x 2 orders judgment rows as one parquet file per judge, in chunks.

    Each chunk of `chunk` items is one row group of every judge's file, so memory stays
    bounded by the chunk. Judges differ in accuracy and position bias; ~2 % ties, ~3 % invalid
    outputs (null `chosen`, `valid` False), ~0.5 % of items lack their second order, 10 %
    have no gold label (null `correct`). With `complete`, the files hold every column of the
    judgments schema (`model`, `prompt`, tokens, latency, ...) so `catalog.load_source` reads
    them as a runner's tables. Returns the rows written.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(24)
    schema = pa.schema(
        [
            ("benchmark", pa.string()),
            ("split", pa.string()),
            ("item_id", pa.string()),
            ("judge", pa.string()),
            ("condition", pa.string()),
            ("order", pa.int8()),
            ("sample", pa.int32()),
            ("output", pa.string()),
            ("valid", pa.bool_()),
            ("chosen", pa.string()),
            ("correct", pa.bool_()),
        ]
    )
    base = schema
    if complete:
        for name, kind in FULL_COLUMNS.items():
            typ = pa.timestamp("us", tz="UTC") if kind == "timestamp" else getattr(pa, kind)()
            schema = schema.append(pa.field(name, typ))
    writers = [
        pq.ParquetWriter(folder / f"judge-{j:02d}.parquet", schema, compression="zstd")
        for j in range(n_judges)
    ]
    total = 0
    try:
        for start in range(0, n_items, chunk):
            ids = np.arange(start, min(n_items, start + chunk))
            for j, writer in enumerate(writers):
                table = _chunk(ids, j, n_judges, n_splits, rng, base, np, pa, pc)
                if complete:
                    table = _complete(table, j, schema, pa)
                writer.write_table(table)
                total += table.num_rows
    finally:
        for writer in writers:
            writer.close()
    return total


def _chunk(ids, j, n_judges, n_splits, rng, schema, np, pa, pc) -> Any:  # noqa: ANN001
    """Return one judge's rows (both orders) for the item ids `ids` as an arrow table."""
    n = len(ids)
    item = np.repeat(ids, 2)
    order = np.tile(np.array([0, 1], dtype=np.int8), n)
    keep = ~((order == 1) & (rng.random(2 * n) < 0.005))
    item, order = item[keep], order[keep]
    m = len(item)
    acc = 0.55 + 0.35 * j / max(1, n_judges - 1)
    bias = np.where(order == 0, 0.05, -0.05) * (j % 3)
    u = rng.random(m)
    code = np.where(u < acc + bias, 0, 1)  # 0 pos, 1 neg
    code[u > 0.98] = 2  # tie
    invalid = rng.random(m) < 0.03
    code[invalid] = 3
    chosen = pa.DictionaryArray.from_arrays(
        pa.array(code, pa.int8()), pa.array(["pos", "neg", "tie", None])
    ).cast(pa.string())
    outputs = pa.array(["[[A]]", "[[B]]", "[[C]]", "I cannot decide."])
    a_shown = (code == 0) == (order == 0)
    out_idx = np.where(code >= 2, code, np.where(a_shown, 0, 1))
    no_gold = item % 10 == 3
    correct = pa.array(np.where(invalid, False, code == 0), mask=no_gold)
    item_ids = pc.binary_join_element_wise("item-", pc.cast(pa.array(item), pa.string()), "")
    split_names = pa.array([f"split-{s}" for s in range(n_splits)])
    cols = {
        "benchmark": pa.array(np.full(m, "synthetic", dtype=object), pa.string()),
        "split": pc.take(split_names, pa.array(item % n_splits)),
        "item_id": item_ids,
        "judge": pa.array(np.full(m, f"judge-{j:02d}", dtype=object), pa.string()),
        "condition": pa.array(np.full(m, "", dtype=object), pa.string()),
        "order": pa.array(order, pa.int8()),
        "sample": pa.array(np.zeros(m, dtype=np.int32)),
        "output": pc.take(outputs, pa.array(out_idx)),
        "valid": pa.array(~invalid),
        "chosen": chosen,
        "correct": correct,
    }
    return pa.table(cols, schema=schema)


#: The judgments columns `write_judgments(complete=True)` adds (arrow type names).
FULL_COLUMNS = {
    "model": "string",
    "prompt": "string",
    "verdict": "string",
    "prompt_tokens": "int64",
    "completion_tokens": "int64",
    "latency_s": "float64",
    "cost_usd": "float64",
    "request_key": "string",
    "created_at": "timestamp",
}


def _complete(table: Any, j: int, schema: Any, pa: Any) -> Any:
    """Return `table` with the `FULL_COLUMNS` (a model name, token counts; the rest null)."""
    m = table.num_rows
    for name in FULL_COLUMNS:
        field = schema.field(name)
        if name == "model":
            col = pa.array([f"model-{j:02d}"] * m, pa.string())
        elif name in ("prompt_tokens", "completion_tokens"):
            col = pa.array([400 if name == "prompt_tokens" else 8] * m, pa.int64())
        else:
            col = pa.nulls(m, field.type)
        table = table.append_column(field, col)
    return table


def scan_child(path: str, n_boot: int) -> dict[str, Any]:
    """In the child: pairwise rates with bootstrap CIs from a lazy scan of `path`."""
    t0 = time.perf_counter()
    from judgelab.analyses.pairwise import scan

    t_import = time.perf_counter()
    rates = scan.scan_rates(path, n_boot=n_boot, seed=0)
    wall = time.perf_counter() - t0
    pooled = rates[(rates["aggregation"] == "pooled") & (rates["metric"] == "ca")]
    return {
        "wall_s": wall,
        "import_s": t_import - t0,
        "peak_rss_mb": peak_rss_mb(),
        "rates_rows": len(rates),
        "items_judged": int(
            rates.loc[
                (rates["aggregation"] == "split") & (rates["metric"] == "ca"), "n_items"
            ].sum()
        ),
        "ca_pooled": [round(float(v), 6) for v in pooled["value"]],
        "ci_width_pooled_ca": float((pooled["ci_high"] - pooled["ci_low"]).median()),
    }


CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {"scan": scan_child}


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Dispatch `--child` (in the child interpreter)."""
    kind = spec.pop("kind")
    return CHILDREN[kind](**spec)


def child(kind: str, threads: int, **kw: Any) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter (polars on `threads` threads)."""
    cmd = [sys.executable, "-m", "bench.tables", "--child", json.dumps({"kind": kind, **kw})]
    env = {**os.environ, "POLARS_MAX_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"bench child {kind} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_scan(cfg: dict[str, int], repeat: int, threads: int, tmp: Path) -> dict[str, Any]:
    """Generate the judgments on disk, then time `scan_rates` `repeat` times (children)."""
    folder = tmp / "synthetic"
    t0 = time.perf_counter()
    rows = write_judgments(folder, cfg["items"], cfg["judges"], cfg["splits"])
    gen_s = time.perf_counter() - t0
    disk = sum(f.stat().st_size for f in folder.glob("*.parquet"))
    runs = [child("scan", threads, path=str(folder), n_boot=cfg["n_boot"]) for _ in range(repeat)]
    shutil.rmtree(folder)
    return {
        "rows": rows,
        "items": cfg["items"],
        "judges": cfg["judges"],
        "splits": cfg["splits"],
        "n_boot": cfg["n_boot"],
        "threads": threads,
        "generate_s": gen_s,
        "parquet_mb": disk / 2**20,
        "wall_s": summarize([r["wall_s"] for r in runs]),
        "peak_rss_mb": summarize([r["peak_rss_mb"] for r in runs]),
        "rates_rows": runs[0]["rates_rows"],
        "items_judged": runs[0]["items_judged"],
        "ca_pooled": runs[0]["ca_pooled"],
    }


CHILDREN["import"] = import_child


def bench_import(
    cfg: dict[str, int],
    repeat: int,
    threads: int,
    tmp: Path,
    shapes: tuple[str, ...] = SHAPES,
    *,
    stream: bool = True,
) -> dict[str, Any]:
    """Write every shape's files once, then time the generic importer on each (children).

    `stream`: `import_file_to` (tables written as imported); else in memory, then written.
    """
    n = cfg["import_rows"]
    paths = write_import_files(tmp / "import", n, shapes=shapes)
    out: dict[str, Any] = {"rows": n, "shapes": list(shapes), "streamed": stream}
    for fmt, path in paths.items():
        runs = [
            child("import", threads, path=str(path), shape=fmt, stream=stream)
            for _ in range(repeat)
        ]
        out[fmt] = {
            "import_s": summarize([r["import_s"] for r in runs]),
            "write_s": summarize([r["write_s"] for r in runs]),
            "rows_per_s": summarize([r["rows_per_s"] for r in runs]),
            "rows_per_s_with_write": summarize([r["rows_per_s_with_write"] for r in runs]),
            "peak_rss_mb_import": summarize([r["peak_rss_mb_import"] for r in runs]),
            "peak_rss_mb": summarize([r["peak_rss_mb"] for r in runs]),
            "file_mb": sum(p.stat().st_size for p in _files_of(path, fmt)) / 2**20,
            "rows": runs[0]["rows"],
            "items": runs[0]["items"],
            "valid": runs[0]["valid"],
        }
    shutil.rmtree(tmp / "import")
    return out


def _files_of(path: Path, shape: str) -> list[Path]:
    """The files one shape's import reads (a joined import: the items and both outputs)."""
    if shape != "joined":
        return [path]
    return [path, path.parent / "out_12.jsonl", path.parent / "out_21.jsonl"]


WORKLOADS = ("scan", "import")


def bench_tables(
    size: str = "full",
    *,
    only: tuple[str, ...] = WORKLOADS,
    repeat: int = 3,
    threads: int = 2,
    huge: bool = False,
    tmp_root: str | None = None,
    shapes: tuple[str, ...] = SHAPES,
    import_rows: int | None = None,
    stream: bool = True,
) -> dict[str, Any]:
    """Run the workloads; return their results (median/min/max over `repeat` runs).

    `huge` adds the 10^8-row scan (one run). Generated files go to a temporary folder under
    `tmp_root` (default: the system's), removed afterwards. `import_rows` replaces the
    size's import rows (10^7: issue 38's 4 GB target); `stream`: see `bench_import`.
    """
    cfg = dict(SIZES[size])
    if import_rows is not None:
        cfg["import_rows"] = import_rows
    results: dict[str, Any] = {"size": size, "threads": threads, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="jl-bench-tables-", dir=tmp_root) as tmp:
        if "scan" in only:
            results["scan"] = bench_scan(cfg, repeat, threads, Path(tmp))
            results["scan"]["targets"] = {
                "wall_s": TARGETS["scan_wall_s"],
                "peak_rss_mb": TARGETS["scan_peak_rss_mb"],
            }
        if huge:
            results["scan_huge"] = bench_scan(SIZES["huge"], 1, threads, Path(tmp))
            results["scan_huge"]["targets"] = {"peak_rss_mb": TARGETS["huge_peak_rss_mb"]}
        if "import" in only and cfg["import_rows"]:
            results["import"] = bench_import(
                cfg, repeat, threads, Path(tmp), shapes, stream=stream
            )
            results["import"]["targets"] = dict(IMPORT_TARGETS)
    return results


def table_rows(results: dict[str, Any]) -> list[list[str]]:
    """Return printable rows: workload, median, min, max, unit, target."""
    rows = []

    def add(name: str, s: dict[str, Any], unit: str, target: str = "") -> None:
        rows.append([name, *(f"{s[k]:.2f}" for k in ("median", "min", "max")), unit, target])

    for label in ("scan", "scan_huge"):
        r = results.get(label)
        if r:
            what = f"{label} {r['rows']:,} rows"
            add(f"{what} wall", r["wall_s"], "s", "<= 20" if label == "scan" else "")
            add(
                f"{what} peak RSS",
                r["peak_rss_mb"],
                "MiB",
                "<= 2048" if label == "scan" else "<= 4096",
            )
    big = results.get("import", {}).get("rows", 0) > 10**6  # issue 38: 10^7 within 4 GB
    for fmt in SHAPES:
        r = results.get("import", {}).get(fmt)
        if r:
            add(f"import {fmt} rows/s", r["rows_per_s"], "rows/s", "" if big else ">= 100000")
            add(
                f"import {fmt} peak RSS",
                r["peak_rss_mb_import"],
                "MiB",
                "<= 4096" if big else "<= 1024",
            )
            add(f"import+write {fmt} rows/s", r["rows_per_s_with_write"], "rows/s")
            add(f"import+write {fmt} peak RSS", r["peak_rss_mb"], "MiB")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the selected workloads, print the table and write the JSON results."""
    p = argparse.ArgumentParser(description="judgelab tables at scale (issue 24)")
    p.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=2, help="polars threads in the children")
    p.add_argument("--huge", action="store_true", help="also 10^8 rows (needs ~2 GB of disk)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes (tests)")
    p.add_argument("--tmp", default=None, help="folder for the generated files")
    p.add_argument("--out", type=Path, default=None, help="JSON results file")
    p.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated import shapes")
    p.add_argument("--import-rows", type=int, default=None, help="rows of the import files")
    p.add_argument(
        "--in-memory", action="store_true", help="import in memory, then write (not streamed)"
    )
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(run_child(json.loads(args.child))))
        return 0
    only = tuple(w.strip() for w in args.only.split(",") if w.strip())
    shapes = tuple(w.strip() for w in args.shapes.split(",") if w.strip())
    unknown = [w for w in only if w not in WORKLOADS] + [s for s in shapes if s not in SHAPES]
    if unknown or args.repeat < 1:
        p.error(
            f"unknown workload(s) or shape(s) {unknown} (known: {list(WORKLOADS)}, "
            f"{list(SHAPES)}), or --repeat < 1"
        )
    results = bench_tables(
        "smoke" if args.smoke else "full",
        only=only,
        repeat=args.repeat,
        threads=args.threads,
        huge=args.huge,
        tmp_root=args.tmp,
        shapes=shapes,
        import_rows=args.import_rows,
        stream=not args.in_memory,
    )
    results["table"] = table_rows(results)
    for row in results["table"]:
        print(f"{row[0]:<40} {row[1]:>10} {row[2]:>10} {row[3]:>10} {row[4]:<7} {row[5]}")
    if args.out is not None:
        from judgelab.core import tables

        tables.write_text(args.out, json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
