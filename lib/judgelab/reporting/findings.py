"""The one named finding each analysis declares (`out.finding(...)`), read by the landing page.

A notebook states its own headline: the measure's name, what it is about (the judges at
both ends, or the contrast), the estimate with its interval, n and the effective clusters,
the data source, and whether that source is illustrative sample data. It is saved as
`figures/<notebook>/<run>/finding.json` beside the run's tables; the landing page shows
exactly that, nothing guessed. A finding on illustrative data is shown labelled, never as
a headline.

`from_table` builds one from a table the notebook already has (thin notebook cells).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.core import tables

if TYPE_CHECKING:  # the report pipeline reads findings without pandas (issue 38)
    import pandas as pd

FILE = "finding.json"
#: Where `from_table` looks for n, in this order.
N_COLUMNS = ("n", "n_valid", "n_common", "n_pairs", "n_items")
#: Column names that are not a measure's name: a finding must say what it measures.
GENERIC_MEASURES = frozenset({"value", "estimate", "coef", "diff", "mean", "score", "result"})


#: Readable names of the metric codes tables carry (`measure_name`).
MEASURE_NAMES = {
    "a1": "accuracy in order 1 (A1)",
    "a2": "accuracy in order 2 (A2)",
    "ca": "consistent accuracy (CA)",
    "oa": "optimistic accuracy (OA)",
    "cons": "consistency across orders",
    "pos_a_rate": "position-A preference",
    "pos_a_rate_decisive": "position-A preference (decisive verdicts)",
    "flip_rate": "flip rate across orders",
    "agreement": "agreement with humans",
    "kappa": "Cohen's kappa with humans",
    "fpr": "false-positive rate",
    "fnr": "false-negative rate",
}


def measure_name(code: str) -> str:
    """Return the readable name of a metric code (the code itself when it is no code)."""
    return MEASURE_NAMES.get(code, code)


class FindingError(ValueError):
    """A finding that cannot be declared as given (names what is wrong)."""


@dataclass(frozen=True)
class Finding:
    """One analysis's headline result (see the module docstring)."""

    measure: str
    subject: str
    estimate: float
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    n_eff_clusters: int | None = None
    source: str = ""
    illustrative: bool = False
    text: str = ""  # an optional sentence replacing "measure: estimate [ci]" (e.g. 13's k of m)

    def __post_init__(self) -> None:
        if not self.measure.strip() or self.measure.strip().lower() in GENERIC_MEASURES:
            raise FindingError(
                f"finding measure {self.measure!r}: name the measure (e.g. 'consistent "
                "accuracy'), not a column name"
            )
        if not self.subject.strip():
            raise FindingError(f"finding {self.measure!r}: empty subject")
        if not isinstance(self.estimate, (int, float)) or not math.isfinite(self.estimate):
            raise FindingError(f"finding {self.measure!r}: estimate {self.estimate!r} not finite")

    def line(self) -> str:
        """Return the finding as one sentence (its `text` when it has one)."""
        if self.text:
            return self.text
        ci = ""
        if self.ci_low is not None and self.ci_high is not None:
            ci = f" [{self.ci_low:.3f}, {self.ci_high:.3f}]"
        n = f", n = {self.n}" if self.n is not None else ""
        k = f", {self.n_eff_clusters} clusters" if self.n_eff_clusters is not None else ""
        whole = float(self.estimate).is_integer() and not ci
        est = f"{self.estimate:g}" if whole else f"{self.estimate:.3f}"
        return f"{self.measure}: {self.subject}: {est}{ci}{n}{k}"


def write(folder: Path, finding: Finding) -> Path:
    """Write `finding` as `folder/finding.json` (atomically) and return the path."""
    return tables.write_text(folder / FILE, json.dumps(asdict(finding), indent=1))


def read(folder: Path) -> Finding | None:
    """Return the finding a run declared, None when it declared none (or it is unreadable)."""
    p = folder / FILE
    try:
        return Finding(**json.loads(p.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _number(x: Any) -> float | None:
    import pandas as pd

    v = pd.to_numeric(x, errors="coerce")
    return None if pd.isna(v) else float(v)


def _count(row: pd.Series, column: str | None) -> int | None:
    v = _number(row[column]) if column and column in row.index else None
    return None if v is None else int(v)


def is_sample_source(name: str) -> bool:
    """Whether a source name is an illustrative sample set (`sample:<set>`).

    >>> is_sample_source("sample:nfl_correctness"), is_sample_source("llmbar")
    (True, False)
    """
    return str(name).startswith("sample:")


def _source_of(source: Any) -> tuple[str, bool]:
    """Return (name, illustrative) of a source.

    A `catalog.Loaded`, a source name, or a mapping of them (a card's or the reproduction's
    sources: values are `Loaded`, objects holding one as `.loaded`, or why one is missing).
    """
    if isinstance(source, Mapping):
        parts = [_source_of(getattr(v, "loaded", v)) for v in source.values()]
        parts = [p for p, v in zip(parts, source.values(), strict=True) if not isinstance(v, str)]
        return ", ".join(n for n, _ in parts) or "none loaded", any(i for _, i in parts)
    if hasattr(source, "is_sample") and hasattr(source, "source"):
        return str(source.source), bool(source.is_sample)
    name = str(source)
    return name, is_sample_source(name)


def from_table(
    df: pd.DataFrame,
    *,
    measure: str,
    source: Any,
    value: str = "value",
    subject: str | tuple[str, ...] = "judge",
    where: dict[str, Any] | None = None,
    pick: str = "max",
    n: str | None = "auto",
    clusters: str | None = None,
    low: str = "ci_low",
    high: str = "ci_high",
) -> Finding:
    """Build the finding from one row of a result table.

    Args:
        df: The table the notebook already saved.
        measure: The measure's name as a reader knows it.
        source: The `catalog.Loaded` (or source name) the table was computed on.
        value: Column of the estimate.
        low: Column of the interval's lower end.
        high: Column of the interval's upper end.
        subject: Column(s) naming the row (judge; or `<x>_1`, `<x>_2` for a pair of judges,
            where a judge paired with itself is never a finding).
        where: Keep only rows whose column equals the value (or is in a list of values).
        pick: "max" or "min" estimate, or "first" row; the subject says which end, of how many.
        n: Column of n ("auto": the first of `N_COLUMNS` the table has; None: no n).
        clusters: Column of the effective number of clusters (default: `n_eff_clusters`,
            else `n_clusters`; absent gives None).

    Raises:
        FindingError: No row is left, or a column is missing.
    """
    import pandas as pd  # a table's finding: pandas is loaded already (the module is not)

    cols = (subject,) if isinstance(subject, str) else tuple(subject)
    missing = [c for c in (value, *cols, *(where or {})) if c not in df.columns]
    if missing:
        raise FindingError(
            f"finding {measure!r}: table has no column(s) {missing}; it has {list(df.columns)}"
        )
    rows = df
    for col, want in (where or {}).items():
        rows = rows[rows[col].isin(want if isinstance(want, list) else [want])]
    pair = len(cols) == 2 and cols[0].endswith("_1") and cols[1].endswith("_2")
    if pair:  # a pair of judges: never a judge against itself
        rows = rows[rows[cols[0]].astype(str) != rows[cols[1]].astype(str)]
    rows = rows.assign(_v=pd.to_numeric(rows[value], errors="coerce")).dropna(subset=["_v"])
    if rows.empty:
        raise FindingError(f"finding {measure!r}: no row with a {value!r} left")
    i = {"max": rows["_v"].idxmax, "min": rows["_v"].idxmin}.get(pick, lambda: rows.index[0])()
    row = rows.loc[i]
    who = (" vs " if pair else " · ").join(str(row[c]) for c in cols)
    if pick in ("max", "min") and len(rows) > 1:
        who += f" ({'highest' if pick == 'max' else 'lowest'} of {len(rows)})"
    name, illustrative = _source_of(source)
    if n == "auto":
        n = next((c for c in N_COLUMNS if c in row.index), None)
    if clusters is None:
        clusters = next((c for c in ("n_eff_clusters", "n_clusters") if c in row.index), None)
    return Finding(
        measure=measure_name(measure),
        subject=who,
        estimate=float(row["_v"]),
        ci_low=_number(row[low]) if low in row.index else None,
        ci_high=_number(row[high]) if high in row.index else None,
        n=_count(row, n),
        n_eff_clusters=_count(row, clusters),
        source=name,
        illustrative=illustrative,
    )


def reproduced(report: pd.DataFrame, *, source: Any, status: str = "pass") -> Finding:
    """Return "k of m published numbers reproduced" from a reproduction report (notebook 13).

    k counts the rows whose `status` is `status`; m every published number the report lists
    (those still waiting for a judge run included).
    """
    if "status" not in report.columns or report.empty:
        raise FindingError("finding 'published numbers reproduced': no report rows")
    k, m = int((report["status"] == status).sum()), len(report)
    name, illustrative = _source_of(source)
    return Finding(
        measure="published numbers reproduced",
        subject=f"{k} of {m}",
        estimate=k / m,
        n=m,
        source=name,
        illustrative=illustrative,
        text=f"{k} of {m} published numbers reproduced (within tolerance)",
    )


def sample_sources(record: dict[str, Any]) -> list[str]:
    """Return the illustrative sample sources a run read (from its provenance's `data`)."""
    data = (record.get("provenance") or record).get("data") or []
    return [
        str(d.get("source"))
        for d in data
        if isinstance(d, dict)
        and (d.get("sample") is True or is_sample_source(d.get("source", "")))
    ]


def badge_html(samples: list[str]) -> str:
    """Return the badge of a run with sections on illustrative samples ("" when none)."""
    if not samples:
        return ""
    names = ", ".join(sorted(set(samples)))
    return (
        '<span class="jl-sample-badge" style="background:#b00;color:#fff;padding:1px 6px;'
        f'border-radius:4px;font-size:12px" title="{html.escape(names)}">'
        f"sample data: {len(set(samples))} illustrative source(s)</span>"
    )


def summary_html(finding: Finding | None) -> str:
    """Return the finding as a labelled line: illustrative ones are never a headline."""
    if finding is None:
        return ""
    line = html.escape(finding.line())
    src = html.escape(finding.source)
    if finding.illustrative:
        return (
            f'<p class="jl-finding illustrative"><i>Illustrative sample only, not a result '
            f"({src}): {line}</i></p>"
        )
    return f'<p class="jl-finding"><b>{line}</b> <small>· data: {src}</small></p>'


def header_html(folder: Path, prov: dict[str, Any]) -> str:
    """Return a report's top box: the sample-data badge and the declared finding."""
    samples = sample_sources({"provenance": prov})
    finding = read(folder)
    if not samples and finding is None:
        return ""
    return (
        '<div class="jl-header" style="border:1px solid #ccc;border-radius:6px;'
        f'padding:8px 12px;margin:1em">{badge_html(samples)}{summary_html(finding)}</div>'
    )


__all__ = [
    "FILE",
    "Finding",
    "FindingError",
    "badge_html",
    "from_table",
    "header_html",
    "is_sample_source",
    "measure_name",
    "reproduced",
    "read",
    "sample_sources",
    "summary_html",
    "write",
]
