"""`make bench`, workload 5 (`figures`): a fresh `reproduce`, then what reruns cost (issue 34).

`measure(source)` copies a project's notebooks, params, committed data (samples, targets) and
lock into a temporary folder and, with a temporary output home, runs `judgelab reproduce
--runs default` three times as `make figures` does:

1. fresh: every run executes; the run records give each notebook's seconds (where the time
   goes);
2. nothing changed: every run is skipped (target: at most 15 s of wall time);
3. one params file changed (its `seed`, else its first whole number, plus one): exactly that
   run executes again.

Which runs executed is read from the records: a run whose `started_at` changed executed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

UNCHANGED_TARGET_S = 15.0
COPIED = ("notebooks", "params", "data/samples", "data/targets", "uv.lock")


def copy_project(source: Path, target: Path) -> Path:
    """Copy what `reproduce` reads from a project (never its outputs) to `target`."""
    for name in COPIED:
        src = source / name
        if src.is_dir():
            shutil.copytree(src, target / name)
        elif src.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target / name)
    return target


def started(reports: Path) -> dict[str, str]:
    """Return `<nb> [<run>]` -> started_at of every run record under `reports`."""
    out = {}
    for p in sorted(reports.glob("*/*.json")):
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(rec, dict) and "started_at" in rec:
            out[f"{p.parent.name} [{p.stem}]"] = rec["started_at"]
    return out


def change_one_params_file(project: Path) -> tuple[str, str] | None:
    """Add one to the `seed` (else the first whole number) of the first default params file.

    Returns (the file relative to the project, the key), or None when no file has one.
    """
    for path in sorted((project / "params").glob("*/default.yaml")):
        values = yaml.safe_load(path.read_text()) or {}
        numbers = [k for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)]
        key = "seed" if "seed" in numbers else (numbers[0] if numbers else None)
        if key is not None:
            values[key] += 1
            path.write_text(yaml.safe_dump(values, sort_keys=False))
            return str(path.relative_to(project)), key
    return None


def _reproduce(env: dict[str, str], timeout_s: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "judgelab", "reproduce", "--runs", "default"]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
        rc, err = done.returncode, done.stderr[-4000:]
    except subprocess.TimeoutExpired:
        rc, err = None, "timed out"
    return {"returncode": rc, "wall_s": time.perf_counter() - t0, "stderr_tail": err}


def _executed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k, v in after.items() if before.get(k) != v)


def measure(
    source: Path, timeout_s: float, mirror: Path | None = None, read: Any = None
) -> dict[str, Any]:
    """Run the three reproduces on a copy of project `source` (see the module docstring).

    `read(reports)` returns the fresh run's per-notebook records (`bench.run.read_records`).
    """
    with tempfile.TemporaryDirectory(prefix="jl-bench-figures-") as tmp:
        project = copy_project(source, Path(tmp) / "project")
        home = Path(tmp) / "home"
        env = dict(
            os.environ, JUDGELAB_HOME=str(home), JUDGELAB_PROJECT=str(project), MPLBACKEND="Agg"
        )
        env.pop("JUDGELAB_DATA", None)
        if mirror is not None:
            env["JUDGELAB_MIRROR"] = str(mirror)
        reports = home / "reports"
        fresh = _reproduce(env, timeout_s)
        after_fresh = started(reports)
        fresh["notebooks"] = read(reports) if read is not None else []
        unchanged = _reproduce(env, timeout_s)
        after_unchanged = started(reports)
        unchanged["executed"] = _executed(after_fresh, after_unchanged)
        changed = change_one_params_file(project)
        one = _reproduce(env, timeout_s) if changed else {"skipped": "no params file to change"}
        if changed:
            one["changed"] = {"file": changed[0], "key": changed[1]}
            one["executed"] = _executed(after_unchanged, started(reports))
        return {"fresh": fresh, "unchanged": unchanged, "one_params_change": one}


def table_rows(rerun: dict[str, Any]) -> list[list[str]]:
    """Return the bench table's rows of the two reruns (wall, target, verdict)."""
    rows = []
    u = rerun["unchanged"]
    ok = u["wall_s"] <= UNCHANGED_TARGET_S and not u["executed"] and u["returncode"] == 0
    n_run = f"{len(u['executed'])} ran"
    row = ["5 reproduce again, nothing changed", "1", f"{u['wall_s']:.3f}", "", "", "s"]
    rows.append(
        [*row, f"<= {UNCHANGED_TARGET_S:g}, 0 ran", f"{'PASS' if ok else 'MISS'} ({n_run})"]
    )
    one = rerun["one_params_change"]
    if "skipped" in one:
        rows.append(
            ["5 one params file changed", "", "", "", "", "", "", "SKIP: " + one["skipped"]]
        )
    else:
        ok = len(one["executed"]) == 1 and one["returncode"] in (0, 1)
        label = f"5 {one['changed']['file']} ({one['changed']['key']}+1)"
        verdict = f"{'PASS' if ok else 'MISS'} (ran: {', '.join(one['executed']) or 'none'})"
        rows.append([label, "1", f"{one['wall_s']:.3f}", "", "", "s", "exactly 1 reruns", verdict])
    return rows
