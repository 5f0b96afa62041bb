"""`make bench`: the five performance workloads of issue 12, measured side by side.

Run from the repository root::

    python -m bench.run                       # everything, defaults below
    python -m bench.run --only runner,metrics --repeat 5
    python -m bench.run --smoke               # tiny sizes (what tests/test_bench_smoke.py runs)

Workloads (each repeated `--repeat` times; the table shows median, min and max):

1. `runner`   judgelab's async runner against the loopback OpenAI-compatible test server
              (its own process, fixed latency): items x 2 orders at `concurrency`, with each
              HTTP client (aiohttp, the default, and the openai SDK); the request phase is
              compared with the ideal ceil(requests / concurrency) x latency, the whole run
              (plan + requests + table) is reported beside it; a raw-socket client gives the
              floor this server and machine allow; and the ContextualJudgeBench-
              style reference runner (`bench/reference_runner.py`) at its 10 threads and at
              equal concurrency. CPU per request of client and server is recorded, because
              wall times on shared 2-core machines are noisy and CPU explains them.
2. `cached`   the same requests again, all cache hits, including writing the table.
3. `metrics`  pairwise metrics (every `pairwise.METRICS` column of the leaderboard) + bootstrap
              CIs on a synthetic 1M-row judgments table; each path runs in a child process so
              its peak RSS is its own; a pandas-only path is the comparison.
4. `import`   the full LLMBar import from the mirror (`JUDGELAB_MIRROR`, else ../shared/data).
5. `figures`  `judgelab reproduce --runs default` in a temporary home (or, with
              `--figures records`, the run records `make figures` left under reports/),
              seconds per notebook; then (`bench/rerun.py`) the same again with nothing
              changed (every run skipped, <= 15 s) and with one params file changed
              (exactly one run executes).
6. `listing`  the commands people wait on at the prompt (`--help`, `data list`, `probe
              --list`, `plan`), each in a fresh interpreter, `--repeat` times, with the
              machine's load average beside the seconds (`bench/listing.py`).

Everything is loopback/offline; every loop is bounded. Results go to
`paths.reports()/bench.json` (override with `--out`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
API_KEY_ENV = "JUDGELAB_BENCH_KEY"

#: Workload sizes: `full` is issue 12's; `smoke` only proves the code runs.
SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "items": 2000,
        "concurrency": 64,
        "latency_ms": 50.0,
        "reference_items": 250,
        "metric_items": 50_000,
        "judges": 10,
        "splits": 5,
        "n_boot": 1000,
        "pandas_boot": 20,
    },
    "smoke": {
        "items": 6,
        "concurrency": 4,
        "latency_ms": 2.0,
        "reference_items": 3,
        "metric_items": 40,
        "judges": 3,
        "splits": 2,
        "n_boot": 20,
        "pandas_boot": 2,
    },
}
WORKLOADS = ("runner", "cached", "metrics", "import", "figures", "listing")
TARGETS = {
    "runner_efficiency": 0.90,  # ideal / wall
    "speedup_vs_reference": 5.0,
    "cached_wall_s": 2.0,
    "metrics_wall_s": 10.0,
    "metrics_peak_rss_mb": 2048.0,
    "figures_wall_s": 300.0,
}


# --------------------------------------------------------------------------- helpers


def summarize(values: list[float]) -> dict[str, float | int]:
    """Return n, median, min and max of repeated measurements.

    >>> summarize([3.0, 1.0, 2.0])
    {'n': 3, 'median': 2.0, 'min': 1.0, 'max': 3.0}
    """
    return {
        "n": len(values),
        "median": float(statistics.median(values)),
        "min": float(min(values)),
        "max": float(max(values)),
    }


@contextlib.contextmanager
def scoped_env(**values: str | None) -> Iterator[None]:
    """Set (or, with None, remove) environment variables, restoring them afterwards."""
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def proc_cpu_s(pid: int) -> float | None:
    """Return user + system CPU seconds of process `pid` (Linux /proc), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def self_cpu_s() -> float:
    """Return this process's user + system CPU seconds (all threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_mb() -> float:
    """Return this process's peak resident set size in MiB.

    Linux: `VmHWM` of /proc/self/status, which starts afresh at exec (`ru_maxrss` does not:
    a child started by a large parent would report the parent's peak). Elsewhere ru_maxrss.
    """
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def mirror_dir() -> Path | None:
    """Return the real-data mirror: JUDGELAB_MIRROR, else ../shared/data, if it exists."""
    value = os.environ.get("JUDGELAB_MIRROR")
    path = Path(value) if value else ROOT.parent / "shared" / "data"
    return path.resolve() if path.is_dir() else None


class Server:
    """The loopback test server (`judgelab.testing.openai_server`) in its own process."""

    def __init__(self, latency_ms: float, *, start_timeout_s: float = 30.0):
        self.latency_ms = latency_ms
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> Server:
        cmd = [sys.executable, "-m", "judgelab.testing.openai_server", "--port", "0"]
        cmd += ["--latency-ms", f"{self.latency_ms:g}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + self.start_timeout_s
        line = ""
        while time.monotonic() < deadline and not line:
            line = self.proc.stdout.readline()  # "serving http://127.0.0.1:PORT/v1"
            if not line and self.proc.poll() is not None:
                break
        m = re.search(r"(http://\S+)", line)
        if not m:
            self.__exit__()
            raise RuntimeError(f"test server did not start: {line!r}")
        self.url = m.group(1)
        return self

    @property
    def port(self) -> int:
        """Return the bound port."""
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def cpu_s(self) -> float | None:
        """Return the server process's CPU seconds so far."""
        return proc_cpu_s(self.proc.pid) if self.proc else None

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None


# --------------------------------------------------------------------------- 1 + 2: runner


def synthetic_items(n: int) -> Any:
    """Return n pairwise items (a few hundred characters of context each)."""
    from judgelab.core import schema

    rows = [
        {
            "benchmark": "bench",
            "split": f"s{i % 4}",
            "item_id": str(i),
            "task": "pairwise",
            "question": f"Question {i}: which answer is supported by the context?",
            "context": " ".join(f"fact{i}-{k}" for k in range(60)),
            "response_pos": f"The supported answer for item {i}.",
            "response_neg": f"An unsupported answer for item {i}.",
        }
        for i in range(n)
    ]
    return schema.new_items(rows)


def bench_spec(url: str, concurrency: int, client: str = "aiohttp") -> Any:
    """Return the remote judge spec the runner benchmark uses (`client`: HTTP client)."""
    from judgelab.judges import spec as spec_mod

    return spec_mod.from_dict(
        {
            "endpoint": "openai-compatible",
            "model": "test-model",
            "base_url": url,
            "api_key_env": API_KEY_ENV,
            "template": "cjb.workflow",
            "concurrency": concurrency,
            "timeout_s": 60,
            "max_retries": 2,
            "client": client,
        }
    )


async def _raw_client(port: int, bodies: list[bytes], concurrency: int, timeout_s: float) -> int:
    """Send every body over `concurrency` keep-alive connections with bare asyncio streams."""
    queue = list(reversed(bodies))
    done = 0

    async def worker() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while queue:
                body = queue.pop()
                head = (
                    "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                ).encode("latin-1")
                writer.write(head + body)
                head = await reader.readuntil(b"\r\n\r\n")
                m = re.search(rb"content-length:\s*(\d+)", head, re.IGNORECASE)
                json.loads(await reader.readexactly(int(m.group(1)) if m else 0))
                done += 1
        finally:
            writer.close()

    workers = [worker() for _ in range(min(concurrency, len(bodies)))]
    await asyncio.wait_for(asyncio.gather(*workers), timeout=timeout_s)
    return done


def _fresh_run(runner: Any, items: Any, spec: Any, srv: Server, tmp: str, n: int) -> Any:
    """Judge `items` into an empty cache; return (result, cache, wall, client/server CPU)."""
    from judgelab.judges.cache import RequestCache

    cache = RequestCache(Path(tmp) / f"{spec.client}.sqlite")
    c0, s0, t0 = self_cpu_s(), srv.cpu_s(), time.perf_counter()
    res = runner.run(items, spec, cache=cache, progress=False, write_tables=False)
    wall = time.perf_counter() - t0
    c1, s1 = self_cpu_s(), srv.cpu_s()
    if res.summary.answered != n or res.summary.failed:
        cache.close()
        raise RuntimeError(f"runner ({spec.client}) answered {res.summary.answered} of {n}")
    server_ms = 1000 * (s1 - s0) / n if s0 is not None and s1 is not None else None
    return res, cache, wall, 1000 * (c1 - c0) / n, server_ms


def bench_runner(cfg: dict[str, Any], repeat: int, reference_repeat: int) -> dict[str, Any]:
    """Workloads 1 and 2: fresh requests (both HTTP clients), then all cached."""
    from bench.reference_runner import DEFAULT_THREADS, run_reference
    from judgelab.judges import runner
    from judgelab.judges import table as table_mod
    from judgelab.judges.cache import RequestCache

    items = synthetic_items(cfg["items"])
    conc, latency_s = cfg["concurrency"], cfg["latency_ms"] / 1000
    out: dict[str, Any] = {"items": cfg["items"], "concurrency": conc, "latency_s": latency_s}
    keys = ("request_s", "wall_s", "client_cpu_ms", "server_cpu_ms")
    fresh: dict[str, dict[str, list[float]]] = {
        c: {k: [] for k in keys} for c in ("aiohttp", "openai")
    }
    cached: dict[str, list[float]] = {"wall_s": [], "per_request_us": []}
    floor: list[float] = []
    with scoped_env(**{API_KEY_ENV: "sk-bench-loopback"}), Server(cfg["latency_ms"]) as srv:
        spec = bench_spec(srv.url, conc)
        plan = table_mod.plan(items, spec)
        n = len(plan.requests)
        ideal = math.ceil(n / conc) * latency_s
        out.update(requests=n, ideal_s=ideal)
        bodies = [json.dumps(p.payload()).encode("utf-8") for p in plan.requests]
        # Warm-up, not measured: first imports (openai, pyarrow) and first connections.
        with tempfile.TemporaryDirectory(prefix="jl-bench-") as tmp:
            with RequestCache(Path(tmp) / "warm.sqlite") as cache:
                for client in fresh:
                    for write in (False, True):
                        runner.run(
                            items.head(2),
                            bench_spec(srv.url, conc, client),
                            cache=cache,
                            progress=False,
                            write_tables=write,
                        )
        for _ in range(repeat):
            t0 = time.perf_counter()
            asyncio.run(_raw_client(srv.port, bodies, conc, timeout_s=120))
            floor.append(time.perf_counter() - t0)
            for client, got in fresh.items():
                with tempfile.TemporaryDirectory(prefix="jl-bench-") as tmp:
                    res, cache, wall, cpu_ms, server_ms = _fresh_run(
                        runner, items, bench_spec(srv.url, conc, client), srv, tmp, n
                    )
                    with cache:
                        got["request_s"].append(res.summary.request_s)
                        got["wall_s"].append(wall)
                        got["client_cpu_ms"].append(cpu_ms)
                        if server_ms is not None:
                            got["server_cpu_ms"].append(server_ms)
                        if client != "aiohttp":
                            continue
                        t0 = time.perf_counter()
                        res = runner.run(
                            items, spec, cache=cache, progress=False, write_tables=True
                        )
                        wall = time.perf_counter() - t0
                        if res.summary.cache_hits != n or res.summary.requested or not res.paths:
                            raise RuntimeError("cached rerun made requests or wrote no table")
                        cached["wall_s"].append(wall)
                        cached["per_request_us"].append(1e6 * wall / n)
        # The reference on the first `reference_items` items (its rate is steady: every
        # request builds a new client, so its wall grows linearly with the requests).
        k = min(cfg["reference_items"], cfg["items"])
        ids = set(items["item_id"].head(k))
        subset = [p for p in plan.requests if p.item_id in ids]
        by_order = [[p.payload() for p in subset if p.order == o] for o in spec.orders]
        ref: dict[str, dict[str, list[float]]] = {}
        for label, threads in (("defaults", DEFAULT_THREADS), ("equal_concurrency", conc)):
            ref[label] = {"wall_s": [], "wall_full_s": [], "cpu_ms": []}
            for _ in range(reference_repeat):
                rr = run_reference(
                    by_order, base_url=srv.url, api_key="sk-bench-loopback", threads=threads
                )
                if rr.failed:
                    raise RuntimeError(f"reference runner: {rr.failed} requests failed")
                ref[label]["wall_s"].append(rr.wall_s)
                ref[label]["wall_full_s"].append(rr.wall_s * n / len(subset))
                ref[label]["cpu_ms"].append(1000 * rr.cpu_s / len(subset))
            ref[label] = {k2: summarize(v) for k2, v in ref[label].items()} | {
                "threads": threads,
                "requests_measured": len(subset),
            }
    out["fresh"] = {k2: summarize(v) for k2, v in fresh["aiohttp"].items() if v}
    out["fresh_openai_sdk"] = {k2: summarize(v) for k2, v in fresh["openai"].items() if v}
    out["floor_raw_socket_wall_s"] = summarize(floor)
    out["cached"] = {k2: summarize(v) for k2, v in cached.items()}
    out["reference"] = ref
    # Efficiency of the request phase (what the ideal describes) and of the whole run
    # (planning the prompts + requests + building the table from the cache).
    req = out["fresh"]["request_s"]["median"]
    med = out["fresh"]["wall_s"]["median"]
    out["efficiency"] = ideal / req
    out["efficiency_end_to_end"] = ideal / med
    out["efficiency_openai_sdk"] = ideal / out["fresh_openai_sdk"]["request_s"]["median"]
    out["floor_efficiency"] = ideal / out["floor_raw_socket_wall_s"]["median"]
    out["requests_per_s"] = n / req
    for label in ref:
        # Against our whole run, not only its request phase: the conservative ratio.
        out[f"speedup_{label}"] = ref[label]["wall_full_s"]["median"] / med
    return out


# --------------------------------------------------------------------------- 3: metrics

METRIC_COLUMNS = [
    "benchmark",
    "split",
    "item_id",
    "judge",
    "condition",
    "order",
    "sample",
    "valid",
    "chosen",
    "correct",
]


def write_metric_table(path: Path, n_items: int, n_judges: int, n_splits: int) -> int:
    """Write a synthetic judgments table (every schema column) of items x judges x 2 orders.

    Judges differ in accuracy and position bias; about 3 % of outputs are invalid. `output`
    holds a short raw verdict string per row (as real judgments do); the long texts of an
    item (question, context, responses) are not in the judgments table at all.
    """
    import numpy as np
    import pandas as pd

    from judgelab.core import tables

    rng = np.random.default_rng(12)
    item = np.repeat(np.arange(n_items), n_judges * 2)
    judge = np.tile(np.repeat(np.arange(n_judges), 2), n_items)
    order = np.tile(np.array([0, 1]), n_items * n_judges)
    acc = 0.55 + 0.35 * judge / max(1, n_judges - 1)
    bias = np.where(order == 0, 0.05, -0.05) * (judge % 3)
    u = rng.random(len(item))
    chosen = np.where(u < acc + bias, "pos", "neg").astype(object)
    chosen[u > 0.985] = "tie"
    invalid = rng.random(len(item)) < 0.03
    chosen[invalid] = None
    position = np.where((chosen == "pos") == (order == 0), "A", "B").astype(object)
    position[chosen == "tie"] = "tie"
    position[invalid] = None
    item_ids = np.array([f"item-{i:06d}" for i in range(n_items)], dtype=object)
    splits = np.array([f"split-{i % n_splits}" for i in range(n_items)], dtype=object)
    judges = np.array([f"judge-{j:02d}" for j in range(n_judges)], dtype=object)
    outputs = np.array(["[[A]]", "[[B]]", "[[tie]]", "I cannot decide."], dtype=object)
    out_idx = np.select([position == "A", position == "B", position == "tie"], [0, 1, 2], 3)
    df = pd.DataFrame(
        {
            "benchmark": "synthetic",
            "split": splits[item],
            "item_id": item_ids[item],
            "judge": judges[judge],
            "model": judges[judge],
            "prompt": "vanilla",
            "condition": "",
            "order": order,
            "sample": 0,
            "output": outputs[out_idx],
            "verdict": position,
            "valid": ~invalid,
            "chosen": chosen,
            "correct": pd.array(np.where(invalid, False, chosen == "pos"), dtype="boolean"),
            "prompt_tokens": pd.array(np.full(len(item), 900), dtype="Int64"),
            "completion_tokens": pd.array(np.full(len(item), 3), dtype="Int64"),
            "latency_s": 0.5,
            "cost_usd": 0.0,
            "request_key": None,
            "created_at": pd.Timestamp("2025-01-01", tz="UTC"),
        }
    )
    tables.write_judgments(df, path)
    return len(df)


def metrics_chosen(path: str, n_boot: int) -> dict[str, Any]:
    """The library path: key columns only, then item_outcomes → pairwise_rates → boards."""
    from judgelab.analyses import pairwise
    from judgelab.core import tables

    t0 = time.perf_counter()
    df = tables.read(path, "judgments", columns=METRIC_COLUMNS)
    t_read = time.perf_counter()
    outcomes = pairwise.item_outcomes(df)
    rates = pairwise.pairwise_rates(outcomes, n_boot=n_boot)
    boards = {m: pairwise.leaderboard(rates, metric=m) for m in pairwise.METRICS}
    wall = time.perf_counter() - t0
    text_cols = [c for c in ("output", "question", "context", "response_pos") if c in df]
    return {
        "wall_s": wall,
        "read_s": t_read - t0,
        "peak_rss_mb": peak_rss_mb(),
        "rows": len(df),
        "frame_mb": float(df.memory_usage(deep=True).sum() / 2**20),
        "text_columns_loaded": text_cols,
        "rates_rows": len(rates),
        "boards": len(boards),
    }


def metrics_full_read(path: str) -> dict[str, Any]:
    """Reading the whole table as notebooks do today (validated, raw outputs included)."""
    from judgelab.core import tables

    t0 = time.perf_counter()
    df = tables.read_judgments(path)
    return {
        "wall_s": time.perf_counter() - t0,
        "peak_rss_mb": peak_rss_mb(),
        "rows": len(df),
        "frame_mb": float(df.memory_usage(deep=True).sum() / 2**20),
    }


def metrics_pandas(path: str, n_boot: int) -> dict[str, Any]:
    """A pandas-only path: read everything, pivot orders, groupby means, resample per replicate.

    It computes the main leaderboard rates (a1, a2, ca, oa, cons, pos_a_rate, the category
    shares) per judge x split plus the pooled row, and a percentile bootstrap that draws
    items within each (judge, split) with `groupby().sample(replace=True)`, once per replicate.
    """
    import numpy as np
    import pandas as pd

    t0 = time.perf_counter()
    df = pd.read_parquet(path)
    t_read = time.perf_counter()
    key = ["judge", "benchmark", "split", "item_id", "sample"]
    verdict = df["chosen"].where(df["valid"].astype(bool), "invalid").fillna("invalid")
    v = df.assign(verdict=verdict, right=df["correct"].fillna(False).astype(bool))
    wide = v.set_index([*key, "order"])[["verdict", "right"]].unstack("order")
    per = pd.DataFrame(index=wide.index)
    c0, c1 = wide[("verdict", 0)], wide[("verdict", 1)]
    r0, r1 = wide[("right", 0)].astype(bool), wide[("right", 1)].astype(bool)
    per["a1"], per["a2"] = r0.astype(float), r1.astype(float)
    per["ca"], per["oa"] = (r0 & r1).astype(float), (r0 | r1).astype(float)
    per["cons"] = (c0 == c1).astype(float)
    per["picks_a"] = (c0 == "pos").astype(float) + (c1 == "neg").astype(float)
    per["decisive"] = c0.isin(["pos", "neg"]).astype(float) + c1.isin(["pos", "neg"])
    inv = (c0 == "invalid") | (c1 == "invalid")
    per["share_invalid"] = inv.astype(float)
    per["share_consistent"] = (~inv & (c0 == c1)).astype(float)
    per["share_biased_first"] = ((c0 == "pos") & (c1 == "neg")).astype(float)
    per["share_biased_second"] = ((c0 == "neg") & (c1 == "pos")).astype(float)
    per = per.reset_index()
    groups = ["judge", "benchmark", "split"]

    def rates(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
        s = frame.groupby(by)[[c for c in per.columns if c not in key]].sum()
        n = frame.groupby(by).size()
        out = s.div(n, axis=0)
        out["pos_a_rate"] = s["picks_a"] / s["decisive"]
        return out.drop(columns=["picks_a", "decisive"])

    point = rates(per, groups)
    pooled = rates(per, ["judge", "benchmark"])
    reps, reps_pooled = [], []
    for b in range(n_boot):
        sample = per.groupby(groups, group_keys=False).sample(frac=1, replace=True, random_state=b)
        reps.append(rates(sample, groups))
        reps_pooled.append(rates(sample, ["judge", "benchmark"]))
    low = high = point
    if reps:
        stack = pd.concat(reps, keys=range(n_boot), names=["replicate"])
        low = stack.groupby(level=groups).quantile(0.025)
        high = stack.groupby(level=groups).quantile(0.975)
    board = point["ca"].unstack("split")
    board["pooled"] = pooled["ca"]
    wall = time.perf_counter() - t0
    assert np.isfinite(low.to_numpy(dtype=float)).any() and len(high) == len(point)
    return {
        "wall_s": wall,
        "read_s": t_read - t0,
        "peak_rss_mb": peak_rss_mb(),
        "rows": len(df),
        "boards": len(board),
    }


def _child(kind: str, **kw: Any) -> dict[str, Any]:
    """Run one metrics path in a fresh interpreter; return its JSON result."""
    cmd = [sys.executable, "-m", "bench.run", "--child", json.dumps({"kind": kind, **kw})]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"bench child {kind} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Dispatch `--child` (in the child interpreter)."""
    kind = spec.pop("kind")
    funcs: dict[str, Callable[..., dict[str, Any]]] = {
        "chosen": metrics_chosen,
        "full_read": metrics_full_read,
        "pandas": metrics_pandas,
    }
    return funcs[kind](**spec)


def bench_metrics(cfg: dict[str, Any], repeat: int) -> dict[str, Any]:
    """Workload 3 (each measurement in its own child process)."""
    with tempfile.TemporaryDirectory(prefix="jl-bench-") as tmp:
        path = str(Path(tmp) / "judgments.parquet")
        rows = write_metric_table(Path(path), cfg["metric_items"], cfg["judges"], cfg["splits"])
        chosen = [_child("chosen", path=path, n_boot=cfg["n_boot"]) for _ in range(repeat)]
        full = _child("full_read", path=path)
        small_b = cfg["pandas_boot"]
        chosen_small = _child("chosen", path=path, n_boot=small_b)
        pandas_small = _child("pandas", path=path, n_boot=small_b)
        pandas_zero = _child("pandas", path=path, n_boot=0)
    per_rep = max(0.0, (pandas_small["wall_s"] - pandas_zero["wall_s"]) / max(1, small_b))
    pandas_full_est = pandas_zero["wall_s"] + per_rep * cfg["n_boot"]
    med = statistics.median(c["wall_s"] for c in chosen)
    return {
        "rows": rows,
        "items": cfg["metric_items"],
        "judges": cfg["judges"],
        "n_boot": cfg["n_boot"],
        "wall_s": summarize([c["wall_s"] for c in chosen]),
        "read_s": summarize([c["read_s"] for c in chosen]),
        "peak_rss_mb": summarize([c["peak_rss_mb"] for c in chosen]),
        "frame_mb": chosen[0]["frame_mb"],
        "text_columns_loaded": chosen[0]["text_columns_loaded"],
        "full_read": full,
        "equal_b": {
            "n_boot": small_b,
            "chosen_wall_s": chosen_small["wall_s"],
            "pandas_wall_s": pandas_small["wall_s"],
            "ratio": pandas_small["wall_s"] / chosen_small["wall_s"],
        },
        "pandas_b0_wall_s": pandas_zero["wall_s"],
        "pandas_peak_rss_mb": pandas_small["peak_rss_mb"],
        "pandas_per_replicate_s": per_rep,
        "pandas_estimated_wall_s": pandas_full_est,
        "ratio_estimated": pandas_full_est / med,
    }


# --------------------------------------------------------------------------- 4: import


def bench_import(repeat: int) -> dict[str, Any]:
    """Workload 4: the full LLMBar import from the mirror, into a fresh home each time."""
    mirror = mirror_dir()
    if mirror is None or not (mirror / "llmbar").is_dir():
        return {"skipped": "LLMBar mirror not found: set JUDGELAB_MIRROR or place ../shared/data"}
    from judgelab.data import ingest as imports

    walls, n_items, n_judg = [], 0, 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="jl-bench-") as tmp:
            with scoped_env(JUDGELAB_HOME=tmp, JUDGELAB_DATA=None, JUDGELAB_MIRROR=str(mirror)):
                t0 = time.perf_counter()
                report = imports.import_source("llmbar")
                walls.append(time.perf_counter() - t0)
        n_items, n_judg = report.n_items, report.n_judgments
    med = statistics.median(walls)
    return {
        "mirror": str(mirror),
        "items": n_items,
        "judgments": n_judg,
        "wall_s": summarize(walls),
        "judgment_rows_per_s": n_judg / med,
        "rows_per_s": (n_items + n_judg) / med,
    }


# --------------------------------------------------------------------------- 5: figures


def read_records(reports: Path, run: str = "default") -> list[dict[str, Any]]:
    """Return the `make figures` run records `reports/<nb>/<run>.json`, in notebook order."""
    out = []
    for p in sorted(reports.glob(f"*/{run}.json")):
        with contextlib.suppress(ValueError, OSError):
            rec = json.loads(p.read_text())
            if isinstance(rec, dict) and "seconds" in rec:
                out.append(
                    {
                        "notebook": rec.get("notebook", p.parent.name),
                        "status": rec.get("status"),
                        "seconds": float(rec["seconds"]),
                        "started_at": rec.get("started_at"),
                    }
                )
    return out


def bench_figures(mode: str, timeout_s: float) -> dict[str, Any]:
    """Workload 5: `judgelab reproduce --runs default` in a temporary home, or old records."""
    from judgelab.core import paths

    if mode == "records":
        recs = read_records(paths.reports())
        if not recs:
            return {"skipped": f"no run records under {paths.reports()}; run `make figures`"}
        return {
            "mode": "records",
            "notebooks": recs,
            "sum_seconds": sum(r["seconds"] for r in recs),
            "failed": [r["notebook"] for r in recs if r["status"] != "ok"],
        }
    from bench import rerun

    mirror = mirror_dir()
    runs = rerun.measure(ROOT, timeout_s, mirror, read=read_records)
    fresh = runs.pop("fresh")
    recs = fresh["notebooks"]
    return {
        "mode": "run",
        "mirror": str(mirror) if mirror else None,
        "returncode": fresh["returncode"],
        "wall_s": fresh["wall_s"],
        "notebooks": recs,
        "sum_seconds": sum(r["seconds"] for r in recs),
        "failed": [r["notebook"] for r in recs if r["status"] != "ok"],
        "rerun": runs,  # nothing changed, then one params file changed (issue 34)
    }


# --------------------------------------------------------------------------- 6: listing


def listing_commands(repeat: int) -> list[dict[str, Any]]:
    """Workload 6: listing and planning commands in fresh interpreters (`bench/listing.py`)."""
    from bench import listing

    return listing.measure(repeat)


# --------------------------------------------------------------------------- report


def table_rows(results: dict[str, Any]) -> list[list[str]]:
    """Return the printed table: workload, n, median, min, max, target, verdict."""
    rows: list[list[str]] = []
    for name in WORKLOADS:
        err = (results.get(name) or {}).get("error")
        if err:
            rows.append([f"{name} (failed)", "", "", "", "", "", "", "ERROR: " + err[:80]])

    def add(name: str, s: dict[str, Any] | float, unit: str, target: str = "", ok: Any = None):
        if isinstance(s, dict):
            vals = [str(s["n"]), f"{s['median']:.3f}", f"{s['min']:.3f}", f"{s['max']:.3f}"]
        else:
            vals = ["1", f"{s:.3f}", "", ""]
        verdict = "" if ok is None else ("PASS" if ok else "MISS")
        rows.append([name, *vals, unit, target, verdict])

    r = results.get("runner")
    if r and "error" not in r:
        eff_ok = r["efficiency"] >= TARGETS["runner_efficiency"]
        limit = f"<= {r['ideal_s'] / 0.9:.2f}"
        f, sdk = r["fresh"], r["fresh_openai_sdk"]
        add("1 runner requests wall (aiohttp)", f["request_s"], "s", limit, eff_ok)
        add("1 runner efficiency ideal/wall", r["efficiency"], "", ">= 0.90", eff_ok)
        add("1 runner whole run: plan+req+table", f["wall_s"], "s")
        add("1 runner whole-run efficiency", r["efficiency_end_to_end"], "")
        add("1 runner client CPU/request", f["client_cpu_ms"], "ms")
        if "server_cpu_ms" in f:
            add("1 test server CPU/request", f["server_cpu_ms"], "ms")
        add("1 openai SDK client: requests wall", sdk["request_s"], "s")
        add("1 openai SDK client: efficiency", r["efficiency_openai_sdk"], "")
        add("1 openai SDK client: CPU/request", sdk["client_cpu_ms"], "ms")
        add("1 raw-socket floor wall", r["floor_raw_socket_wall_s"], "s")
        add("1 raw-socket floor efficiency", r["floor_efficiency"], "")
        for label in ("defaults", "equal_concurrency"):
            ref = r["reference"][label]
            add(f"1 reference ({ref['threads']} thr) wall, all", ref["wall_full_s"], "s")
            add(f"1 reference ({ref['threads']} thr) CPU/req", ref["cpu_ms"], "ms")
        add(
            "1 speed-up vs reference defaults",
            r["speedup_defaults"],
            "x",
            ">= 5",
            r["speedup_defaults"] >= TARGETS["speedup_vs_reference"],
        )
        add("1 speed-up vs reference equal conc.", r["speedup_equal_concurrency"], "x")
        c = r["cached"]
        ok = c["wall_s"]["median"] <= TARGETS["cached_wall_s"]
        add("2 cached rerun + table write", c["wall_s"], "s", "<= 2", ok)
        add("2 overhead per cached request", c["per_request_us"], "us")
    m = results.get("metrics")
    if m and "error" not in m:
        ok = m["wall_s"]["median"] <= TARGETS["metrics_wall_s"]
        add(f"3 metrics+CI B={m['n_boot']} {m['rows']:,} rows", m["wall_s"], "s", "<= 10", ok)
        add("3   of which reading keys", m["read_s"], "s")
        ok = m["peak_rss_mb"]["max"] <= TARGETS["metrics_peak_rss_mb"]
        add("3 peak RSS", m["peak_rss_mb"], "MiB", "<= 2048", ok)
        add("3 full validated read (all cols)", m["full_read"]["wall_s"], "s")
        add("3 full read peak RSS", m["full_read"]["peak_rss_mb"], "MiB")
        eb = m["equal_b"]
        add(f"3 pandas-only / chosen, B={eb['n_boot']}", eb["ratio"], "x")
        add(f"3 pandas-only est. B={m['n_boot']}", m["pandas_estimated_wall_s"], "s")
        add(f"3 pandas-only / chosen, B={m['n_boot']} est.", m["ratio_estimated"], "x")
    i = results.get("import")
    if i and "error" not in i:
        if "skipped" in i:
            rows.append(["4 LLMBar import", "", "", "", "", "", "", "SKIP: " + i["skipped"]])
        else:
            add(f"4 LLMBar import ({i['judgments']:,} judgments)", i["wall_s"], "s")
            add("4 LLMBar judgment rows/s", i["judgment_rows_per_s"], "rows/s")
    f = results.get("figures")
    if f and "error" not in f:
        if "skipped" in f:
            rows.append(["5 make figures", "", "", "", "", "", "", "SKIP: " + f["skipped"]])
        else:
            for rec in f["notebooks"]:
                add(f"5   {rec['notebook']} ({rec['status']})", rec["seconds"], "s")
            total = f.get("wall_s", f["sum_seconds"])
            ok = total <= TARGETS["figures_wall_s"] and not f["failed"]
            label = "5 make figures wall" if "wall_s" in f else "5 make figures (sum of records)"
            add(label, total, "s", "<= 300", ok)
            if "rerun" in f:
                from bench import rerun

                rows += rerun.table_rows(f["rerun"])
    li = results.get("listing")
    if li and "error" not in li:
        from bench import listing

        rows += listing.table_rows(li["commands"])
    return rows


def format_table(rows: list[list[str]]) -> str:
    """Return rows as an aligned plain-text table with a header."""
    head = ["workload", "n", "median", "min", "max", "unit", "target", ""]
    cols = [head, *rows]
    widths = [max(len(r[i]) for r in cols) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cols]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    """Return what the numbers were measured on."""
    import openai

    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": load,
        "openai": openai.__version__,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the selected workloads, write the JSON report and print the table."""
    p = argparse.ArgumentParser(description="judgelab benchmarks (issue 12)")
    p.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    p.add_argument("--repeat", type=int, default=3, help="repetitions per workload")
    p.add_argument("--reference-repeat", type=int, default=1)
    p.add_argument("--reference-items", type=int, default=None, help="items the reference runs")
    p.add_argument("--smoke", action="store_true", help="tiny sizes (tests)")
    p.add_argument("--figures", choices=("run", "records", "skip"), default="run")
    p.add_argument("--figures-timeout", type=float, default=1200.0)
    p.add_argument("--out", type=Path, default=None, help="JSON report (default reports/)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(run_child(json.loads(args.child))))
        return 0
    from judgelab.core import paths

    only = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in only if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; known: {list(WORKLOADS)}")
    if args.repeat < 1 or args.reference_repeat < 1:
        p.error("--repeat and --reference-repeat must be at least 1")
    cfg = dict(SIZES["smoke" if args.smoke else "full"])
    if args.reference_items:
        cfg["reference_items"] = args.reference_items
    out = args.out or paths.reports() / "bench.json"
    results: dict[str, Any] = {"size": "smoke" if args.smoke else "full", "config": cfg}
    results["machine"] = machine()
    jobs: list[tuple[str, Callable[[], dict[str, Any]]]] = []
    if "runner" in only or "cached" in only:
        jobs.append(("runner", lambda: bench_runner(cfg, args.repeat, args.reference_repeat)))
    if "metrics" in only:
        jobs.append(("metrics", lambda: bench_metrics(cfg, args.repeat)))
    if "import" in only:
        jobs.append(("import", lambda: bench_import(args.repeat)))
    if "figures" in only and args.figures != "skip":
        jobs.append(("figures", lambda: bench_figures(args.figures, args.figures_timeout)))
    if "listing" in only:
        jobs.append(("listing", lambda: {"commands": listing_commands(args.repeat)}))
    failed = []
    for name, job in jobs:
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        # Tables and caches go to a scratch data folder, never the project's data/.
        with tempfile.TemporaryDirectory(prefix="jl-bench-data-") as scratch:
            with scoped_env(JUDGELAB_DATA=scratch):
                try:
                    results[name] = job()
                except Exception as exc:  # one broken workload must not lose the others
                    results[name] = {"error": f"{type(exc).__name__}: {exc}"[-2000:]}
                    failed.append(name)
    rows = table_rows(results)
    results["table"] = rows
    from judgelab.core import tables

    tables.write_text(out, json.dumps(results, indent=2, default=str))
    print(format_table(rows))
    print(f"\nwritten {out}")
    if failed:
        print(f"bench: workload(s) {failed} raised; see 'error' in {out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
