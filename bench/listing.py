"""`make bench`, workload `listing`: the commands people wait on at the prompt (issue 34, item 6).

Each command runs in a fresh interpreter (`python -m judgelab ...`, as a user types it) with
a temporary output home and no mirror, `repeat` times; the wall seconds of every run and the
machine's 1-minute load average before and after are recorded, because on a shared 2-core
machine the load explains most of the spread; the CPU seconds (user + system) of each run are
recorded too, which the load barely moves. Targets (on a quiet machine): `--help`,
`data list`, `probe --list`, `judge --list-templates` and `runs list` within 1 s (none of
them imports pandas, numpy or pyarrow), `plan` (help and a plan on a small sample pilot,
its 200 replays per design included) within 3 s.

    python -m bench.listing --repeat 5      # the table, and JSON with --out FILE
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: (label, argv after `judgelab`, target seconds on a quiet machine)
COMMANDS: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("--help", ("--help",), 1.0),
    ("data list", ("data", "list"), 1.0),
    ("probe --list", ("probe", "--list"), 1.0),
    ("judge --list-templates", ("judge", "--list-templates"), 1.0),
    ("runs list", ("runs", "list"), 1.0),
    ("plan --help", ("plan", "--help"), 3.0),
    (
        "plan position-bias (sample pilot)",
        ("plan", "position-bias", "--pilot", "sample:contextualjudgebench", "--delta", "0.1"),
        3.0,
    ),
)


def load() -> float | None:
    """The machine's 1-minute load average (None where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


Command = tuple[str, tuple[str, ...], float]


def measure(
    repeat: int = 5, *, commands: tuple[Command, ...] = COMMANDS, timeout_s: float = 120.0
) -> list[dict[str, Any]]:
    """Run each command `repeat` times; return per command its walls, loads and exit codes."""
    out = []
    with tempfile.TemporaryDirectory(prefix="jl-bench-listing-") as home:
        env = {**os.environ, "JUDGELAB_HOME": home, "MPLBACKEND": "Agg"}
        for var in ("JUDGELAB_MIRROR", "JUDGELAB_DATA"):
            env.pop(var, None)
        for label, argv, target in commands:
            walls, cpus, loads, codes = [], [], [], []
            for _ in range(repeat):
                loads.append(load())
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "judgelab", *argv],
                    capture_output=True,
                    cwd=home,
                    env=env,
                    timeout=timeout_s,
                )
                walls.append(time.perf_counter() - t0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                codes.append(done.returncode)
            loads.append(load())
            out.append(
                {
                    "command": label,
                    "argv": list(argv),
                    "target_s": target,
                    "wall_s": walls,
                    "median_s": statistics.median(walls),
                    "cpu_s": cpus,
                    "median_cpu_s": statistics.median(cpus),
                    "load_1min": loads,
                    "returncodes": codes,
                }
            )
    return out


def table_rows(results: list[dict[str, Any]]) -> list[list[str]]:
    """Rows of the bench table: command, n, median, min, max, unit, target, verdict (+ load)."""
    rows = []
    for r in results:
        walls = r["wall_s"]
        loads = [x for x in r["load_1min"] if x is not None]
        ok = r["median_s"] <= r["target_s"] and not any(r["returncodes"])
        verdict = "PASS" if ok else "MISS"
        if loads:
            verdict += f" (load {min(loads):.1f}-{max(loads):.1f})"
        if "median_cpu_s" in r:
            verdict += f" cpu {r['median_cpu_s']:.2f} s"
        rows.append(
            [
                f"6 {r['command']}",
                str(len(walls)),
                f"{r['median_s']:.3f}",
                f"{min(walls):.3f}",
                f"{max(walls):.3f}",
                "s",
                f"<= {r['target_s']:g} quiet",
                verdict,
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, and write the JSON report when `--out` is given."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    results = measure(args.repeat)
    for row in table_rows(results):
        print("  ".join(row))
    if args.out:
        args.out.write_text(json.dumps({"cpus": os.cpu_count(), "listing": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
