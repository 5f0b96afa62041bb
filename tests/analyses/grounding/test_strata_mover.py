"""Stratified PPI++ with clusters: each stratum's wild interval combined by MOVER (issue 33)."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import grounding
from judgelab.core import clusters, stats

NAN = np.nan


def _two_strata(rng: np.random.Generator, flat: bool) -> tuple[np.ndarray, ...]:
    """8 clusters of 6 items, clusters 0-3 in stratum a, 4-7 in b; half the items labelled.

    flat: every human label of stratum a is 1 and of stratum b is 0 (as 8 unequal clusters
    with a strong stratum shift draw often); else b's labels vary within and across clusters.
    """
    cluster = np.repeat(np.arange(8), 6)
    stratum = np.where(cluster < 4, "a", "b")
    p = np.where(stratum == "a", 1.0, 0.0) if flat else np.where(stratum == "a", 1.0, 0.4)
    if not flat:
        p = np.where(stratum == "b", np.array([0, 0, 0, 0, 0.05, 0.3, 0.7, 0.95])[cluster], p)
    human = (rng.random(len(cluster)) < p).astype(float)
    judge = np.where(rng.random(len(cluster)) < 0.85, human, 1 - human)
    labelled = np.tile([True, False], len(cluster) // 2)
    return judge, np.where(labelled, human, NAN), cluster, stratum


def test_i33_2_strata_whose_labels_all_agree_get_no_point_interval():
    judge, human, cluster, stratum = _two_strata(np.random.default_rng(3), flat=True)
    kw = {"cluster": cluster, "stratum": stratum, "n_boot": 499}
    old = grounding.estimates(judge, human, strata_combine="joint", **kw).set_index("method")
    new = grounding.estimates(judge, human, **kw).set_index("method")
    # Before (the joint wild bootstrap, still reachable): no stratum can vary, a point.
    assert old.loc["classical", "ci_low"] == old.loc["classical", "ci_high"] == 0.5
    # After: each stratum's labels at one bound carry the Wilson interval; no stratum varies,
    # so the ICC is taken as 1: one trial per cluster (4 clusters: [0.510, 1] for a,
    # [0, 0.490] for b), combined by MOVER:
    # the lower end takes a's distance below its 1, the upper end b's above its 0.
    w_low, _ = stats.wilson_interval(4, 4)
    half = 0.5 * (1 - float(w_low))
    for method in ("classical", "ppi"):
        row = new.loc[method]
        assert row["estimate"] == pytest.approx(0.5)
        assert row["ci_low"] == pytest.approx(0.5 - half)
        assert row["ci_high"] == pytest.approx(0.5 + half)
        assert row["interval"].startswith("MOVER over 2 strata")
        assert row["few_clusters"]


def test_i33_2_mover_combines_each_strata_own_wild_interval():
    judge, human, cluster, stratum = _two_strata(np.random.default_rng(11), flat=False)
    t = grounding.estimates(judge, human, cluster=cluster, stratum=stratum, n_boot=499)
    t = t.set_index("method")
    parts = []
    for h in ("a", "b"):
        m = stratum == h
        one = grounding.estimates(judge[m], human[m], cluster=cluster[m], n_boot=499)
        parts.append(one.set_index("method").loc["classical"])
    est = np.array([p["estimate"] for p in parts])
    low = np.array([p["ci_low"] for p in parts])
    high = np.array([p["ci_high"] for p in parts])
    # stratum a's labels are all 1: a point on its own; in the MOVER the Wilson interval on
    # its Kish effective labels, with the ICC that stratum b's labels show.
    assert low[0] == high[0] == 1.0
    lab = ~np.isnan(human)
    centred = human[lab] - np.where(
        stratum[lab] == "a", 1.0, np.mean(human[lab & (stratum == "b")])
    )
    icc = clusters.icc_anova(centred, cluster[lab])
    assert 0.0 < icc < 1.0
    k = clusters.kish_n_eff(cluster[lab & (stratum == "a")], icc)
    assert 4 < k < 12
    low[0] = stats.wilson_interval(k, k)[0]
    value = float(np.mean(est))
    row = t.loc["classical"]
    assert row["estimate"] == pytest.approx(value)
    assert row["ci_low"] == pytest.approx(value - np.sqrt(np.sum((0.5 * (est - low)) ** 2)))
    assert row["ci_high"] == pytest.approx(value + np.sqrt(np.sum((0.5 * (high - est)) ** 2)))


def test_i33_2_an_unknown_strata_combination_is_refused():
    judge, human, cluster, stratum = _two_strata(np.random.default_rng(1), flat=False)
    with pytest.raises(ValueError, match="strata_combine must be one of"):
        grounding.estimates(judge, human, cluster=cluster, stratum=stratum, strata_combine="x")
