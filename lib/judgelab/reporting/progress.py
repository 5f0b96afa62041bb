"""Progress of notebook runs on stderr: N of M, elapsed and ETA (issue 34, item 6).

On a terminal a tqdm bar stays at the bottom while one line per finished run scrolls above
it; elsewhere (a log, CI, `make figures | tee`) each finished run is one plain line.

- `Progress` counts runs: each has an expected cost (its last run's seconds), so the ETA
  weighs a 5-minute notebook above a 5-second one: remaining expected seconds times the
  wall seconds spent per expected second so far (which folds in `--jobs` and the machine's
  load); before the first run ends, the expected seconds over the jobs.
- `cell_bar` is papermill's bar over one notebook's cells (the `card` command): a tqdm bar on
  a terminal, a line per cell elsewhere.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


def clock(seconds: float | None) -> str:
    """Return seconds as `m:ss` (or `h:mm:ss`); "?" when unknown.

    >>> clock(75.4), clock(3725), clock(None)
    ('1:15', '1:02:05', '?')
    """
    if seconds is None:
        return "?"
    s = int(round(seconds))
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """Count finished runs out of `total` and print one line each (with a bar on a terminal).

    `expected` maps each run's key to its expected seconds (None when unknown: the mean of
    the known ones stands in). Without a `stream` nothing is printed (`step` returns the line).
    """

    def __init__(
        self,
        expected: dict[str, float | None],
        *,
        jobs: int = 1,
        stream: TextIO | None = None,
        unit: str = "run",
    ) -> None:
        self.stream = stream
        self.total, self.done, self.jobs = len(expected), 0, max(1, jobs)
        known = [v for v in expected.values() if v]
        mean = sum(known) / len(known) if known else None
        self._left = {k: (v or mean) for k, v in expected.items()}
        self._spent = 0.0  # expected seconds of the runs that finished
        self._t0 = time.monotonic()
        self._bar = None
        if self.total and stream is not None and _is_tty(stream):
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total,
                file=self.stream,
                unit=unit,
                bar_format="{n_fmt} of {total_fmt} {unit}s |{bar}| {postfix}",
            )

    def eta_s(self) -> float | None:
        """Return the seconds expected until every run has finished (None when unknown)."""
        left = list(self._left.values())
        if not left:
            return 0.0
        if any(v is None for v in left):  # nothing expected: the mean wall time per run
            return (time.monotonic() - self._t0) / self.done * len(left) if self.done else None
        remaining = sum(v or 0.0 for v in left)
        if self._spent > 0:
            return remaining * (time.monotonic() - self._t0) / self._spent
        return remaining / self.jobs

    def step(self, key: str, text: str) -> str:
        """Mark run `key` finished; print and return its line with N of M, elapsed and ETA."""
        self.done += 1
        self._spent += self._left.pop(key, None) or 0.0
        elapsed = time.monotonic() - self._t0
        eta = clock(self.eta_s())
        line = f"[{self.done}/{self.total}] {text} · elapsed {clock(elapsed)} · ETA {eta}"
        if self._bar is not None:
            self._bar.set_postfix_str(f"elapsed {clock(elapsed)}, ETA {eta}", refresh=False)
            self._bar.write(line, file=self.stream)
            self._bar.update(1)
        elif self.stream is not None:
            print(line, file=self.stream, flush=True)
        return line

    def close(self) -> None:
        """Remove the bar (the lines stay)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class _Lines:
    """A stream for tqdm off a terminal: each redraw with a new count ("cell 3 of 9") is a line."""

    def __init__(self, inner: TextIO) -> None:
        self.inner, self.last = inner, ""

    def write(self, text: str) -> int:
        line = text.replace("\r", "").strip()
        count = line.split(" · ")[0]
        if line and count != self.last:
            self.inner.write(line + "\n")
            self.last = count
        return len(text)

    def flush(self) -> None:
        self.inner.flush()


def cell_bar(label: str, stream: TextIO | None = None) -> dict[str, Any]:
    """Return papermill's `progress_bar` options: cells N of M, elapsed and ETA, on stderr."""
    stream = stream or sys.stderr
    tty = _is_tty(stream)
    return {
        "file": stream if tty else _Lines(stream),
        "desc": label,
        "unit": "cell",
        "mininterval": 0.5 if tty else 0,
        "bar_format": "{desc}: cell {n_fmt} of {total_fmt}"
        + (" |{bar}|" if tty else "")
        + " · elapsed {elapsed} · ETA {remaining}",
    }


__all__ = ["Progress", "cell_bar", "clock"]
