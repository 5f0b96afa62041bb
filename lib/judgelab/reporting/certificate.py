"""A certificate per judge and task: each trust criterion graded PASS / FAIL / INCONCLUSIVE.

Each criterion reads one headline the report card already computed (`card.collect`: the
value, its interval, n and effective clusters; nothing is recomputed here) and compares its
**interval** — never the point estimate — with a margin declared in the notebook's params
before any data is read (equivalence logic, as the transport audit's `grade`):

- `deviation` (position, length: a rate whose ideal is ½) and `abs` (self-preference, probe
  pull: a gap whose ideal is 0): PASS when the whole interval of the gap lies inside
  [−margin, margin], FAIL when it lies wholly outside, INCONCLUSIVE otherwise;
- `higher` (agreement with humans, κ): PASS when the interval's low end is ≥ the margin,
  FAIL when its high end is below it; `lower` (instability): PASS when the high end is ≤ the
  margin, FAIL when the low end is above it.

A criterion the data cannot measure is `NOT MEASURED` with the card's reason. A PASS whose
headline rests on fewer than `min_n` units or fewer than `min_eff_clusters` effective
clusters is INCONCLUSIVE instead (the card's light shows "uncertain: few effective clusters"
there: the interval's coverage is least sure where the clusters are few). With the card's
95 % intervals a PASS is two one-sided tests at 2.5 % each: a judge whose true value sits at
the margin passes at most 2.5 % of the time when the interval covers (checked on planted
truth: `reporting.calibration.checks.certificate`).

The overall grade (`RULE`): PASS iff every measured criterion passes (and at least one was
measured), FAIL if any fails, INCONCLUSIVE otherwise. `certificate` returns it JSON-able with
its margins, the rule, the data hashes (`data_hashes`: the registry's sha256 of each file read,
or a digest of the loaded tables for a sample) and the calibration status of every estimator
behind a criterion and of the criterion's grade itself (`grade_checks`, `calibration_status`:
the verdict of those checks in the saved `make calibrate` summary, or that none was saved).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import atomic, clusters, paths

#: The grades of a criterion and of a certificate.
GRADES = ("PASS", "FAIL", "INCONCLUSIVE", "NOT MEASURED")
#: The rule of the overall grade, as shown on the page.
RULE = (
    "PASS iff every measured criterion passes (at least one measured); FAIL if any criterion "
    "fails; INCONCLUSIVE otherwise. Criteria not measured are listed and do not count."
)


class Criterion(NamedTuple):
    """One criterion: its label, the card measure it reads, how it is graded, its checks."""

    label: str
    measure: str
    how: str  # deviation | abs | higher | lower
    checks: tuple[str, ...]  # calibration checks of the measure's estimator


#: Criterion key (the params' `certificate_margins` key) → `Criterion`, in page order.
CRITERIA: dict[str, Criterion] = {
    "agreement": Criterion("Agreement with humans (κ)", "kappa_human", "higher",
                           ("correctness.kappa",)),
    "position": Criterion("Position bias (|P(A) − ½|)", "pos_a_rate", "deviation",
                          ("pairwise.pos_a_rate",)),
    "length": Criterion("Length bias (|P(longer) − ½|)", "p_longer", "deviation",
                        ("length.picks_longer_balanced",)),
    "self_preference": Criterion("Self-preference (|gap|)", "self_gap", "abs",
                                 ("correctness.self_fpr_diff",)),
    "stability": Criterion("Verdict instability", "stability", "lower",
                           ("stability.flip", "stability.changed")),
    "probe_robustness": Criterion("Probe robustness (|pull|)", "probe_pull", "abs",
                                  ("probes.pull",)),
    "transport": Criterion("Transport of the human correction", "transport_error", "abs",
                           ("grounding_transport.rectifier",)),
}  # fmt: skip

#: Default margins (workbench choices; notebook 14 declares its own in params).
DEFAULT_MARGINS: dict[str, float] = {
    "agreement": 0.6,
    "position": 0.05,
    "length": 0.05,
    "self_preference": 0.05,
    "stability": 0.1,
    "probe_robustness": 0.1,
    "transport": 0.05,
}


def grade(low: float, high: float, margin: float, how: str) -> str:
    """Return PASS / FAIL / INCONCLUSIVE of an interval against a margin (module docstring).

    >>> grade(0.47, 0.52, 0.05, "deviation"), grade(0.62, 0.8, 0.6, "higher")
    ('PASS', 'PASS')
    >>> grade(0.3, 0.7, 0.05, "deviation"), grade(0.05, 0.2, 0.1, "lower")
    ('INCONCLUSIVE', 'INCONCLUSIVE')
    >>> grade(0.12, 0.2, 0.05, "abs"), grade(0.2, 0.5, 0.6, "higher")
    ('FAIL', 'FAIL')
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return "INCONCLUSIVE"
    if how in ("deviation", "abs"):
        c = 0.5 if how == "deviation" else 0.0
        lo, hi = low - c, high - c
        if -margin <= lo and hi <= margin:
            return "PASS"
        return "FAIL" if hi < -margin or lo > margin else "INCONCLUSIVE"
    if how == "higher":
        return "PASS" if low >= margin else "FAIL" if high < margin else "INCONCLUSIVE"
    if how == "lower":
        return "PASS" if high <= margin else "FAIL" if low > margin else "INCONCLUSIVE"
    raise ValueError(f"criterion direction must be deviation, abs, higher or lower, got {how!r}")


def check_margins(margins: Mapping[str, float]) -> dict[str, float]:
    """Return the margins of every criterion; refuse an unknown key or a margin ≤ 0."""
    unknown = sorted(set(margins) - set(CRITERIA))
    if unknown:
        raise ValueError(
            f"certificate_margins: unknown criteria {unknown}; known: {list(CRITERIA)}"
        )
    out = {**DEFAULT_MARGINS, **{k: float(v) for k, v in margins.items()}}
    bad = {k: v for k, v in out.items() if not (math.isfinite(v) and v > 0)}
    if bad:
        raise ValueError(f"certificate_margins: a margin must be > 0, got {bad}")
    return out


def _criterion_row(head: pd.DataFrame, key: str, margin: float, *, min_n: int,
                   min_eff: float) -> dict[str, Any]:  # fmt: skip
    c = CRITERIA[key]
    base = {"criterion": key, "label": c.label, "measure": c.measure, "how": c.how,
            "margin": margin, "value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0,
            "n_eff_clusters": np.nan}  # fmt: skip
    if c.measure not in head.index:
        why = f"no `{c.measure}` row on the card for this judge"
        return {**base, "grade": "NOT MEASURED", "note": why}
    r = head.loc[c.measure]
    if r["status"] != "ok":
        return {**base, "grade": "NOT MEASURED", "note": str(r["note"])}
    g = float(r.get("n_eff_clusters", np.nan))
    out = {**base, "value": float(r["value"]), "ci_low": float(r["ci_low"]),
           "ci_high": float(r["ci_high"]), "n": int(r["n"]), "n_eff_clusters": g}  # fmt: skip
    verdict, note = grade(out["ci_low"], out["ci_high"], margin, c.how), ""
    if verdict == "PASS" and out["n"] < min_n:
        verdict, note = "INCONCLUSIVE", f"too few to pass (n {out['n']} < {min_n})"
    elif verdict == "PASS" and math.isfinite(g) and g < min_eff:
        verdict = "INCONCLUSIVE"
        note = f"uncertain: few effective clusters ({g:.1f} < {min_eff:g}); no PASS on them"
    return {**out, "grade": verdict, "note": note}


def overall(grades: list[str]) -> str:
    """Return the overall grade of criterion grades by `RULE`.

    >>> overall(["PASS", "NOT MEASURED"]), overall(["PASS", "FAIL"]), overall(["NOT MEASURED"])
    ('PASS', 'FAIL', 'INCONCLUSIVE')
    """
    measured = [g for g in grades if g != "NOT MEASURED"]
    if "FAIL" in measured:
        return "FAIL"
    return "PASS" if measured and all(g == "PASS" for g in measured) else "INCONCLUSIVE"


def criteria(
    measures: pd.DataFrame,
    margins: Mapping[str, float] | None = None,
    *,
    min_n: int = 30,
    min_eff_clusters: float = clusters.FEW_EFFECTIVE,
) -> pd.DataFrame:
    """Return one row per judge × criterion: the headline read, its margin and its grade.

    Args:
        measures: `card.collect` rows (every judge's headline rows).
        margins: Criterion → margin (`CRITERIA` keys; the rest `DEFAULT_MARGINS`).
        min_n: Fewest units a PASS may rest on.
        min_eff_clusters: Fewest effective clusters a PASS may rest on.
    """
    m = check_margins(margins or {})
    head = measures[measures["headline"].astype(bool)].drop_duplicates(
        ["source", "judge", "measure"]
    )
    rows = []
    for (source, judge), part in head.groupby(["source", "judge"], sort=False):
        by = part.set_index("measure")
        for key in CRITERIA:
            r = _criterion_row(by, key, m[key], min_n=min_n, min_eff=min_eff_clusters)
            rows.append({"source": source, "judge": judge, **r})
    return pd.DataFrame(rows)


def grade_checks(criterion: str) -> tuple[str, ...]:
    """The calibration checks behind a criterion: its estimator's, then its grade's own."""
    return (*CRITERIA[criterion].checks, f"certificate.{criterion}")


def calibration_status(summary: pd.DataFrame | None) -> dict[str, str]:
    """Return check → status from a saved calibration summary (`summary.csv`), after variant.

    The status is the worst verdict over its scenarios with the counts ("pass (4/4
    scenarios)"), or why there is none.
    """
    names = sorted({c for key in CRITERIA for c in grade_checks(key)})
    if summary is None or summary.empty:
        return {c: "not calibrated: no `make calibrate` summary saved" for c in names}
    after = summary[summary["variant"] == "after"]
    out = {}
    for name in names:
        v = after.loc[after["check"] == name, "verdict"].astype(str).tolist()
        if not v:
            out[name] = "not calibrated: the check is not in the saved summary"
            continue
        worst = next(w for w in ("fail", "inconclusive", "pass", v[0]) if w in v)
        out[name] = f"{worst} ({v.count('pass')}/{len(v)} scenarios pass)"
    return out


def saved_summary() -> pd.DataFrame | None:
    """Return the saved `make calibrate` summary table, or None (only `summary.csv` is read)."""
    path = summary_path()
    return pd.read_csv(path) if path.exists() else None


def summary_path() -> Path:
    """Where `make calibrate` saves its summary: `calibration.results.folder()/summary.csv`.

    Spelled out here, not imported: importing the calibration package (its harness and the
    simulator) costs a card about 1.5 s; a test keeps the two paths equal.
    """
    return paths.reports() / "calibration" / "summary.csv"


def data_hashes(sources: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Return source → files with sha256 of the data each carded source read.

    A registry source: its files as the registry and lock record them (`provenance`); a
    sample or a local table: the sha256 digest of its loaded items and judgments tables.
    """
    from judgelab.reporting import provenance
    from judgelab.reporting.card import stored

    out = {}
    for label, cs in sources.items():
        name = str(cs.loaded.source)
        reg = provenance.data_sources({"source": name})
        if reg and reg[0].get("files"):
            out[label] = [{"path": f["path"], "sha256": f["sha256"]} for f in reg[0]["files"]]
        else:
            tabs = {t: getattr(cs.loaded, t) for t in ("items", "judgments")}
            out[label] = [{"path": f"{name}:{t}", "sha256": stored.table_digest(df)}
                          for t, df in tabs.items() if df is not None]  # fmt: skip
    return out


def certificate(
    rows: pd.DataFrame,
    *,
    source: str,
    judge: str,
    level: float,
    data: Mapping[str, list] | None = None,
    calibration: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Return one judge's certificate as a JSON-able dict (the `criteria` rows of the judge)."""
    part = rows[(rows["source"] == source) & (rows["judge"] == judge)]
    status = dict(calibration or calibration_status(None))

    def clean(v: Any) -> Any:
        if isinstance(v, float | np.floating):
            return None if not math.isfinite(float(v)) else float(v)
        return v.item() if isinstance(v, np.generic) else v

    crit = []
    for r in part.to_dict("records"):
        checks = grade_checks(r["criterion"])
        used = (
            {c: status.get(c, "unknown") for c in checks} if r["grade"] != "NOT MEASURED" else {}
        )
        crit.append({**{k: clean(v) for k, v in r.items() if k not in ("source", "judge")},
                     "calibration": used})  # fmt: skip
    return {
        "key": f"{source}:{judge}",
        "grade": overall([c["grade"] for c in crit]),
        "rule": RULE,
        "level": float(level),
        "margins": {c["criterion"]: c["margin"] for c in crit},
        "criteria": crit,
        "data": dict(data or {}).get(source, []),
    }


_COLOURS = {"PASS": "#1a7f37", "FAIL": "#cf222e", "INCONCLUSIVE": "#9a6700",
            "NOT MEASURED": "#6e7781"}  # fmt: skip


def html_view(cert: Mapping[str, Any]) -> str:
    """Return one certificate as an HTML block: overall grade, rule, criteria, data, checks."""
    from judgelab.reporting.card.html import Html

    e = html.escape

    def fmt(c: Mapping[str, Any]) -> str:
        if c["value"] is None:
            return "—"
        lo, hi = c["ci_low"], c["ci_high"]
        return f"{c['value']:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None else f"{c['value']:.3f}"

    body = "".join(
        f"<tr><td>{e(c['label'])}</td><td>{fmt(c)}</td><td>{e(c['how'])} {c['margin']:g}</td>"
        f"<td>{c['n']}</td><td style='color:{_COLOURS[c['grade']]};font-weight:bold'>"
        f"{e(c['grade'])}</td><td>{e(c['note'] or '')}</td>"
        f"<td>{e('; '.join(f'{k}: {v}' for k, v in c['calibration'].items()))}</td></tr>"
        for c in cert["criteria"]
    )
    files = "".join(f"<li><code>{e(str(f['path']))}</code> sha256 {e(str(f['sha256'])[:16])}…</li>"
                    for f in cert["data"])  # fmt: skip
    colour = _COLOURS[cert["grade"]]
    return Html(
        f"<div class='certificate'><h4>Certificate · {e(cert['key'])}: "
        f"<span style='color:{colour}'>{e(cert['grade'])}</span></h4>"
        f"<p><b>Rule:</b> {e(cert['rule'])} Intervals at level {cert['level']:g}.</p>"
        "<table><tr><th>criterion</th><th>value [interval]</th><th>margin</th><th>n</th>"
        f"<th>grade</th><th>note</th><th>calibration of its estimator</th></tr>{body}</table>"
        f"<p><b>Data read:</b></p><ul>{files}</ul></div>"
    )


def certificates(
    rows: pd.DataFrame,
    *,
    level: float,
    data: Mapping[str, list] | None = None,
    calibration: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Return the `certificate` of every judge of `criteria` rows, in their order."""
    keys = rows[["source", "judge"]].drop_duplicates().itertuples(index=False)
    return [certificate(rows, source=s, judge=j, level=level, data=data,
                        calibration=calibration) for s, j in keys]  # fmt: skip


def summary(certs: list[Mapping[str, Any]]) -> pd.DataFrame:
    """Return one row per certificate: its key, overall grade and each criterion's grade."""
    return pd.DataFrame(
        [{"judge": c["key"], "certificate": c["grade"],
          **{CRITERIA[x["criterion"]].label: x["grade"] for x in c["criteria"]}} for c in certs]
    )  # fmt: skip


def save(certs: list[Mapping[str, Any]], path: Any) -> Any:
    """Write the certificates as JSON (atomically) and return the path."""
    return atomic.write_text(path, json.dumps(list(certs), indent=2, allow_nan=False) + "\n")


__all__ = [
    "CRITERIA",
    "DEFAULT_MARGINS",
    "GRADES",
    "RULE",
    "Criterion",
    "calibration_status",
    "certificate",
    "certificates",
    "check_margins",
    "criteria",
    "data_hashes",
    "grade",
    "grade_checks",
    "html_view",
    "overall",
    "save",
    "saved_summary",
    "summary",
    "summary_path",
]
