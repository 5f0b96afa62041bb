"""Issue 36 item 6: a certificate per judge and task, graded on the card's intervals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.registry import COLUMNS
from judgelab.reporting import certificate


def _row(judge, measure, value, low, high, *, n=200, g=80.0, status="ok", note=""):
    return {"source": "src", "judge": judge, "measure": measure, "scope": "all",
            "headline": True, "value": value, "ci_low": low, "ci_high": high, "n": n,
            "n_eff_clusters": g, "p_value": np.nan, "status": status, "note": note}  # fmt: skip


def _measures() -> pd.DataFrame:
    rows = [
        # judge "good": every measured criterion's interval inside its margin
        _row("good", "kappa_human", 0.78, 0.70, 0.85),
        _row("good", "pos_a_rate", 0.51, 0.48, 0.54),
        _row("good", "p_longer", 0.50, 0.47, 0.53),
        _row("good", "stability", 0.03, 0.02, 0.05),
        _row("good", "self_gap", np.nan, np.nan, np.nan, status="n/a", note="no model family"),
        # a non-headline row never counts
        {**_row("good", "pos_a_rate", 0.9, 0.85, 0.95), "headline": False, "scope": "Natural"},
        # judge "biased": position interval wholly beyond the margin
        _row("biased", "kappa_human", 0.78, 0.70, 0.85),
        _row("biased", "pos_a_rate", 0.62, 0.58, 0.66),
        # judge "unsure": agreement interval straddles the margin; length passes on 6 clusters
        _row("unsure", "kappa_human", 0.62, 0.50, 0.72),
        _row("unsure", "p_longer", 0.50, 0.48, 0.52, g=6.0),
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def test_i36_6_grades_each_criterion_on_its_interval():
    rows = certificate.criteria(_measures(), {"agreement": 0.6, "position": 0.05})
    g = rows.set_index(["judge", "criterion"])["grade"]
    assert g[("good", "agreement")] == "PASS"  # low 0.70 ≥ 0.6
    assert g[("good", "position")] == "PASS"  # [−0.02, 0.04] inside ±0.05
    assert g[("good", "stability")] == "PASS"  # high 0.05 ≤ 0.1
    assert g[("good", "self_preference")] == "NOT MEASURED"
    assert g[("good", "transport")] == "NOT MEASURED"
    assert g[("biased", "position")] == "FAIL"  # [0.08, 0.16] wholly outside ±0.05
    assert g[("unsure", "agreement")] == "INCONCLUSIVE"  # [0.50, 0.72] straddles 0.6
    # inside the margin, but on 6 effective clusters: no PASS
    assert g[("unsure", "length")] == "INCONCLUSIVE"
    note = rows.set_index(["judge", "criterion"]).loc[("unsure", "length"), "note"]
    assert "uncertain: few effective clusters (6.0 < 20)" in note
    # the point estimate alone never decides: 0.62 > 0.6 but the interval reaches 0.50
    assert rows.set_index(["judge", "criterion"]).loc[("unsure", "agreement"), "value"] > 0.6
    reason = rows.set_index(["judge", "criterion"]).loc[("good", "self_preference"), "note"]
    assert reason == "no model family"


def test_i36_6_overall_rule_and_json_certificate(tmp_path):
    rows = certificate.criteria(_measures())
    status = certificate.calibration_status(
        pd.DataFrame(
            {
                "check": ["correctness.kappa"] * 2 + ["pairwise.pos_a_rate"],
                "variant": ["after", "after", "after"],
                "verdict": ["pass", "fail", "pass"],
            }
        )  # fmt: skip
    )
    assert status["correctness.kappa"] == "fail (1/2 scenarios pass)"
    assert status["pairwise.pos_a_rate"] == "pass (1/1 scenarios pass)"
    assert status["probes.pull"].startswith("not calibrated")
    data = {"src": [{"path": "src/items.parquet", "sha256": "ab" * 32}]}
    certs = certificate.certificates(rows, level=0.95, data=data, calibration=status)
    by = {c["key"]: c for c in certs}
    assert by["src:good"]["grade"] == "PASS"
    assert by["src:biased"]["grade"] == "FAIL"
    assert by["src:unsure"]["grade"] == "INCONCLUSIVE"
    good = by["src:good"]
    assert good["rule"] == certificate.RULE and good["level"] == 0.95
    assert good["margins"] == certificate.DEFAULT_MARGINS
    assert good["data"] == data["src"]
    agree = next(c for c in good["criteria"] if c["criterion"] == "agreement")
    assert agree["calibration"] == {
        "correctness.kappa": "fail (1/2 scenarios pass)",
        "certificate.agreement": "not calibrated: the check is not in the saved summary",
    }
    unmeasured = next(c for c in good["criteria"] if c["criterion"] == "self_preference")
    assert unmeasured["calibration"] == {} and unmeasured["value"] is None
    path = certificate.save(certs, tmp_path / "certificates.json")
    assert json.loads(path.read_text())[0]["key"] == "src:good"  # strict JSON (no NaN)
    html = certificate.html_view(good)
    assert "PASS" in html and "correctness.kappa: fail" in html and "abababab" in html
    table = certificate.summary(certs).set_index("judge")
    assert table.loc["src:biased", "Position bias (|P(A) − ½|)"] == "FAIL"


def test_i36_6_margins_are_checked_before_any_grade():
    with pytest.raises(ValueError, match=r"unknown criteria \['posiiton'\]"):
        certificate.criteria(_measures(), {"posiiton": 0.05})
    with pytest.raises(ValueError, match=r"a margin must be > 0, got \{'length': 0.0\}"):
        certificate.criteria(_measures(), {"length": 0})


def test_i36_6_reads_the_summary_make_calibrate_saves():
    from judgelab.reporting.calibration import results

    assert certificate.summary_path() == results.folder() / "summary.csv"
