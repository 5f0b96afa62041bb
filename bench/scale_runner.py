"""Issue 24's runner workloads: high concurrency against a bare client, and start-up times.

- `runner_scale`: `items` x 2 orders at `concurrency` (20,000 / 256 by default) against the
  loopback server (50 ms latency, listen backlog 1024), a bare asyncio-streams client and
  judgelab's runner measured in the same run, interleaved repeat by repeat, with one worker
  process and with two (`spec.workers`), and with a speed mechanism turned off, to show what
  it buys (`client:workers[:-mechanism]`, mechanisms in `OFF`: `aiohttp:1:-uvloop`,
  `aiohttp:2:-prebuild`). The ratio is judgelab's whole-run wall (plan + requests + table)
  over the bare client's (target: at most 1.35, issue 38), the request phase alone over the bare
  client's beside it, the time after the request phase (the table: what `prebuild` shortens)
  and the CPU per request of every process of the run (workers included).
- `startup`: `judgelab --help` and a cached rerun of `judgelab judge` (every answer cached;
  plans the prompts, reads the cache, writes the table) as subprocesses, with `python -c pass`
  and `import pandas` beside them for what an interpreter and pandas alone cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.run import (
    API_KEY_ENV,
    ROOT,
    Server,
    _fresh_run,
    _raw_client,
    bench_spec,
    scoped_env,
    summarize,
    synthetic_items,
)

SCALE = {"items": 10_000, "concurrency": 256, "latency_ms": 50.0}
SCALE_SMOKE = {"items": 200, "concurrency": 8, "latency_ms": 2.0}
TARGETS = {"runner_vs_bare": 1.35, "help_s": 0.3, "cached_rerun_s": 0.3}


CONFIGS = ("aiohttp:1", "aiohttp:1:-uvloop", "aiohttp:2", "aiohttp:2:-prebuild")
METRICS = ("wall", "request", "after", "cpu", "cpu_all", "ratio", "request_ratio")
#: The mechanisms a config can turn off (`aiohttp:2:-prebuild`).
OFF = ("uvloop", "prebuild")


@contextlib.contextmanager
def _off(mechanism: str) -> Iterator[None]:
    """Run the block with one of judgelab's speed mechanisms turned off ("": none)."""
    from judgelab.judges import requesting

    if mechanism == "":
        yield
    elif mechanism == "uvloop":  # the standard asyncio loop (`judgelab.judges.eventloop`)
        with scoped_env(JUDGELAB_EVENT_LOOP="asyncio"):
            yield
    elif mechanism == "prebuild":  # every row parsed after the request phase
        real = requesting.Prebuild
        requesting.Prebuild = lambda *a, **k: None  # type: ignore[assignment,misc]
        try:
            yield
        finally:
            requesting.Prebuild = real  # type: ignore[misc]
    else:
        raise ValueError(f"unknown mechanism {mechanism!r}; known: {sorted(OFF)}")


def _parse(config: str) -> tuple[str, int, str]:
    """Return (client, workers, mechanism turned off) of `client:workers[:-mechanism]`."""
    client, workers, *rest = config.split(":")
    off = rest[0].removeprefix("-") if rest else ""
    if off and off not in OFF:
        raise ValueError(f"config {config!r}: unknown mechanism {off!r}; known: {list(OFF)}")
    return client, int(workers), off


def _cpu_s() -> float:
    """This process's CPU seconds and its reaped children's (worker processes)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def runner_scale(cfg: dict[str, Any], repeat: int, configs: tuple[str, ...] = CONFIGS) -> dict:
    """Bare client and judgelab's runner per config on one server, interleaved."""
    import dataclasses

    from judgelab.judges import runner
    from judgelab.judges import table as table_mod
    from judgelab.judges.cache import RequestCache

    items = synthetic_items(cfg["items"])
    conc, latency_s = cfg["concurrency"], cfg["latency_ms"] / 1000
    bare: list[float] = []
    loads: list[float] = []
    runs: dict[str, dict[str, list[float]]] = {c: {k: [] for k in METRICS} for c in configs}
    with scoped_env(**{API_KEY_ENV: "sk-bench-loopback"}), Server(cfg["latency_ms"]) as srv:
        spec = bench_spec(srv.url, conc)
        plan = table_mod.plan(items, spec)
        n = len(plan.requests)
        bodies = [json.dumps(p.payload()).encode("utf-8") for p in plan.requests]
        with tempfile.TemporaryDirectory(prefix="jl-bench-") as tmp:  # warm-up
            with RequestCache(Path(tmp) / "warm.sqlite") as cache:
                runner.run(items.head(2), spec, cache=cache, progress=False, write_tables=False)
        for i in range(repeat):
            loads.append(os.getloadavg()[0])
            t0 = time.perf_counter()
            done = asyncio.run(_raw_client(srv.port, bodies, conc, timeout_s=300))
            bare.append(time.perf_counter() - t0)
            if done != n:
                raise RuntimeError(f"bare client answered {done} of {n}")
            for config in configs if i % 2 == 0 else configs[::-1]:  # no config always last
                client, w, off = _parse(config)
                wspec = dataclasses.replace(spec, client=client, workers=w)
                with _off(off), tempfile.TemporaryDirectory(prefix="jl-bench-") as tmp:
                    c0 = _cpu_s()
                    res, cache, wall, cpu_ms, _ = _fresh_run(runner, items, wspec, srv, tmp, n)
                    c1 = _cpu_s()
                    cache.close()
                r = runs[config]
                r["wall"].append(wall)
                r["request"].append(res.summary.request_s)
                r["after"].append(wall - res.summary.request_s)
                r["cpu"].append(cpu_ms)  # this process only
                r["cpu_all"].append(1000 * (c1 - c0) / n)  # workers included
                r["ratio"].append(wall / bare[-1])
                r["request_ratio"].append(res.summary.request_s / bare[-1])
            loads.append(os.getloadavg()[0])
    return {
        "requests": n,
        "concurrency": conc,
        "ideal_s": math.ceil(n / conc) * latency_s,
        "bare_wall_s": summarize(bare),
        "load_1min": summarize(loads),  # the machine's load average around each repeat
        "by_config": {
            c: {
                "judgelab_wall_s": summarize(r["wall"]),
                "judgelab_request_s": summarize(r["request"]),
                "after_request_phase_s": summarize(r["after"]),
                "parent_cpu_ms_per_request": summarize(r["cpu"]),
                "cpu_ms_per_request": summarize(r["cpu_all"]),
                "ratio_to_bare": summarize(r["ratio"]),
                "request_phase_ratio_to_bare": summarize(r["request_ratio"]),
            }
            for c, r in runs.items()
        },
    }


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}… failed: {out.stderr[-500:]}")
    return wall


def startup(repeat: int, n_items: int = 2000) -> dict[str, Any]:
    """`judgelab --help`, a cached `judgelab judge` rerun, and interpreter/pandas baselines."""
    from judgelab.core import tables
    from judgelab.testing.judge_cli import write_loopback_spec

    exe = str(Path(sys.executable).parent / "judgelab")
    out: dict[str, list[float]] = {k: [] for k in ("python", "pandas", "help", "cached")}
    with tempfile.TemporaryDirectory(prefix="jl-bench-start-") as tmp, Server(0) as srv:
        home = Path(tmp)
        env = {**os.environ, API_KEY_ENV: "sk-bench-loopback", "JUDGELAB_DATA": str(home)}
        items = home / "items.parquet"
        tables.write(synthetic_items(n_items), items, "items")
        spec = write_loopback_spec(
            home / "judge.yaml", srv.url, api_key_env=API_KEY_ENV, concurrency=64
        )
        judge = [exe, "judge", "--judge", str(spec), "--benchmark", str(items), "--no-progress"]
        _timed(judge, env, ROOT)  # fresh: every request answered and cached
        for _ in range(repeat):
            out["python"].append(_timed([sys.executable, "-c", "pass"], env, ROOT))
            out["pandas"].append(_timed([sys.executable, "-c", "import pandas"], env, ROOT))
            out["help"].append(_timed([exe, "--help"], env, ROOT))
            out["cached"].append(_timed(judge, env, ROOT))
    return {"requests": 2 * n_items} | {f"{k}_s": summarize(v) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    """Run both workloads and print their JSON (`--smoke`: tiny sizes)."""
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--smoke", action="store_true")
    p.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        help="client:workers[:-mechanism] to measure (default: %(default)s)",
    )
    args = p.parse_args(argv)
    cfg = SCALE_SMOKE if args.smoke else SCALE
    configs = tuple(args.configs.split(","))
    for config in configs:
        _parse(config)  # an unknown mechanism fails before anything runs
    res = {
        "runner_scale": runner_scale(cfg, args.repeat, configs),
        "startup": startup(args.repeat, 20 if args.smoke else 2000),
    }
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
