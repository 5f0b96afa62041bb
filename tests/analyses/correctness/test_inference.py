"""Issue 33 (Inference II) in the correctness family: WCR rows, declines, invalid policies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.analyses import correctness
from judgelab.analyses.correctness.table import confusion_counts


def _table(rows: list[tuple]) -> pd.DataFrame:
    """(cluster, own?, human, verdict) rows of judge J; own answers are model "jm"."""
    t = pd.DataFrame(
        [
            {"judge": "J", "condition": "", "question_uid": f"q{c}-{i}", "cluster": f"c{c}",
             "candidate_model": "jm" if own else f"m{i % 3}", "human": h, "verdict": v}
            for i, (c, own, h, v) in enumerate(rows)
        ]
    )  # fmt: skip
    return correctness.mark_self(t, judge_candidate={"J": "jm"})


def _lenient(n_clusters: int, own_correct: int, others: tuple[str | None, ...]) -> pd.DataFrame:
    """One own negative per cluster (judged Correct in the first `own_correct` clusters)."""
    rows = []
    for c in range(n_clusters):
        rows.append((c, True, "Incorrect", "Correct" if c < own_correct else "Incorrect"))
        rows += [(c, False, "Incorrect", v) for v in others]
        rows += [(c, True, "Correct", "Correct"), (c, False, "Correct", "Correct")]
    return _table(rows)


def test_inf2_2_too_few_own_negatives_decline_with_the_reason_never_a_silent_nan():
    """Before: NaN diff / interval / p and no reason when the judge had no own negatives."""
    none = _lenient(8, 0, ("Correct", "Incorrect")).query("not (candidate_is_judge and "
                                                          "human == 'Incorrect')")  # fmt: skip
    row = correctness.self_vs_others(none, metrics=("fpr",), n_boot=199).iloc[0]
    assert row["declined"] == "no own-model negatives" and np.isnan(row["p_value"])
    few = correctness.self_vs_others(_lenient(6, 3, ("Correct", "Incorrect")), n_boot=199)
    fpr = few.set_index("metric").loc["fpr"]
    assert fpr["declined"] == "too few own-model negatives: 6 < 10"
    assert fpr["diff"] == pytest.approx(0.0) and np.isnan(fpr["diff_low"])  # shown, untested
    spread = correctness.self_vs_others(
        _lenient(12, 6, ("Correct", "Incorrect")), min_own_clusters=13, n_boot=199
    ).set_index("metric")
    assert spread.loc["fpr", "declined"] == "too few clusters holding own-model negatives: 12 < 13"
    tested = correctness.self_vs_others(_lenient(12, 6, ("Correct", "Incorrect")), n_boot=199)
    assert (tested["declined"] == "").all() and tested["p_value"].notna().all()


def test_inf2_2_rows_report_effective_clusters_and_the_method():
    out = correctness.self_vs_others(_lenient(12, 9, ("Correct", "Incorrect")), n_boot=199)
    row = out.set_index("metric").loc["fpr"]
    assert row["n_clusters_self"] == 12 and 0 < row["n_eff_clusters"] <= 12.5
    assert bool(row["few_clusters"]) and row["method"].startswith("wild cluster bootstrap")
    assert row["diff"] == pytest.approx(0.75 - 0.5) and 0 < row["p_value"] < 1
    rates = correctness.correctness_rates(_lenient(12, 9, ("Correct", "Incorrect")))
    assert {"n_eff_clusters", "few_clusters", "method"} <= set(rates.columns)


def test_inf2_6_both_invalid_policies_side_by_side_and_a_changed_conclusion_is_marked():
    """Issue 33 item 6: a conclusion that hangs on the invalid policy says so."""
    # own FPR 18/30 = 0.6; others per cluster: Correct, Incorrect, Incorrect, invalid ->
    # excluded 1/3 (diff 0.27, significant), as errors 2/4 (diff 0.1, not significant)
    t = _lenient(30, 18, ("Correct", "Incorrect", "Incorrect", None))
    out = correctness.self_vs_others(t, metrics=("fpr",), n_boot=999)
    by = out.set_index("invalid_policy")
    assert by.loc["exclude", "others"] == pytest.approx(1 / 3)
    assert by.loc["error", "others"] == pytest.approx(0.5)
    assert by.loc["exclude", "p_value"] < 0.05 <= by.loc["error", "p_value"]
    assert out["policy_sensitive"].all()
    sides = correctness.policy_sides(out).iloc[0]  # a column per policy, the reading in words
    assert sides["p_value_excluded"] < 0.05 <= sides["p_value_as_errors"]
    assert sides["reading"].startswith("DEPENDS on invalid verdicts: significant")
    # the same conclusion under both policies is not marked
    same = _lenient(30, 27, ("Correct", "Incorrect", "Incorrect", None))
    both = correctness.self_vs_others(same, metrics=("fpr",), n_boot=999)
    assert len(both) == 2 and not both["policy_sensitive"].any()
    assert (both["p_value"] < 0.05).all()
    assert correctness.policy_sides(both)["reading"].str.startswith("same conclusion").all()
    clean = _lenient(30, 27, ("Correct", "Incorrect"))  # no invalid verdicts: one policy
    one = correctness.policy_sides(correctness.self_vs_others(clean, metrics=("fpr",)))
    assert one["reading"].iloc[0].endswith("no invalid verdicts, one policy")


def test_kappa_linearization_averages_to_kappa_and_matches_its_derivative():
    from judgelab.analyses.correctness.rates import parts, rates_from_counts

    rng = np.random.default_rng(0)
    n = 60
    human = np.where(rng.random(n) < 0.5, "Correct", "Incorrect")
    verdict = np.where(rng.random(n) < 0.8, human, np.where(human == "Correct", "Incorrect",
                                                            "Correct")).astype(object)  # fmt: skip
    verdict[rng.random(n) < 0.1] = None
    cells = confusion_counts(pd.DataFrame({"human": human, "verdict": verdict}))
    for policy in ("exclude", "error"):
        num, den, value = parts(cells, "kappa", policy)
        assert num.sum() / den.sum() == pytest.approx(value, abs=1e-9)
        keep = np.array([1, 1, 1, 1, policy == "error", policy == "error"], dtype=float)
        total = cells.sum(axis=0) * keep
        # dropping row i moves kappa by about −IF_i / N (IF_i = num_i − den_i · value)
        i = int(np.flatnonzero(den)[0])
        drop = rates_from_counts(total - cells[i] * keep, invalid_policy=policy)
        N = den.sum()
        assert float(drop["kappa"]) - value == pytest.approx(
            -(num[i] - den[i] * value) / (N - 1), rel=0.05, abs=2e-4
        )


@st.composite
def _tables(draw):
    seed = draw(st.integers(0, 10_000))
    G = draw(st.integers(2, 16))
    rng = np.random.default_rng(seed)
    size = 1 + rng.poisson(rng.lognormal(1.5, 1.0, G))
    rows = []
    for c, k in enumerate(size):
        lenient = rng.random()
        for _ in range(int(k)):
            own = rng.random() < 0.4 or not rows  # the judge's own model answers somewhere
            human = "Correct" if rng.random() < 0.5 else "Incorrect"
            wrong = rng.random() < (lenient if own else 0.3)
            v = human if not wrong else ("Incorrect" if human == "Correct" else "Correct")
            rows.append((c, own, human, None if rng.random() < 0.05 else v))
    return _table(rows), seed


#: Replicates of the property tests.
B = 199


def inverts(low: float, high: float, p: float) -> bool:
    """True when p < 0.05 exactly where 0 lies outside [low, high] (bisection precision)."""
    inside = low <= 0.0 <= high
    return min(abs(low), abs(high)) < 1e-3 * (high - low) or inside == (p >= 0.05)


@settings(max_examples=15, deadline=None)
@given(data=_tables())
def test_inf2_2_p_value_inverts_the_reported_interval(data):
    """Every p-value beside an interval rejects exactly outside it (self − others, gap)."""
    t, seed = data
    sv = correctness.self_vs_others(
        t, metrics=("fpr", "fnr", "kappa"), min_own=1, min_own_clusters=1, n_boot=B, seed=seed
    )
    t = t.assign(judge_answered=np.where(t["cluster"].str[-1].isin(list("02468")), "correct",
                                         "incorrect"))  # fmt: skip
    gap = correctness.answered_gap(t, n_boot=B, seed=seed)
    for out in (sv, gap):
        for r in out.itertuples():
            if r.declined:
                assert np.isnan(r.p_value) and np.isnan(r.diff_low)
                continue
            assert np.isfinite(r.p_value), r
            assert inverts(r.diff_low, r.diff_high, r.p_value), r


def test_the_earlier_default_stays_reachable():
    t = _lenient(12, 9, ("Correct", "Incorrect"))
    old = correctness.self_vs_others(t, inference="bootstrap", n_boot=199).set_index("metric")
    assert old.loc["fpr", "method"].startswith("paired cluster bootstrap")
    assert old.loc["fpr", "diff"] == pytest.approx(0.25)
    rates = correctness.correctness_rates(t, inference="bootstrap", n_boot=99)
    assert rates["method"].str.startswith("cluster bootstrap").all()
    with pytest.raises(ValueError, match="inference"):
        correctness.self_vs_others(t, inference="normal")


def _kappa_rows(own: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """8 clusters: own answers (human, verdict) as given; others' verdicts mostly right."""
    rows = []
    for c in range(8):
        rows += [(c, True, h, v) for h, v in own]
        wrong = "Correct" if c % 3 == 0 else "Incorrect"
        others = (("Incorrect", wrong), ("Correct", "Correct"), ("Incorrect", "Incorrect"))
        rows += [(c, False, h, v) for h, v in (*others, ("Correct", "Correct"))]
    return _table(rows)


def test_i33_2_a_kappa_side_that_cannot_vary_gets_no_test_not_a_point_interval():
    """Before: the flat side's linearized kappa has no variance (every score 0).

    One human class on the own side (κ ≡ 0 whatever the judge says): the test of self −
    others ran on the others' variance alone; both sides flat (the answered gap with 8
    very unequal clusters, 6 % of draws): the interval was the point [−1, −1] with p = 0.
    """
    one_class = _kappa_rows((("Correct", "Correct"), ("Correct", "Incorrect")))
    row = correctness.self_vs_others(one_class, metrics=("kappa",), n_boot=199).iloc[0]
    assert row["self"] == pytest.approx(0.0) and row["n_self"] == 16
    assert row["declined"].startswith("kappa 0 on self cannot vary in its linearization")
    assert np.isnan(row["p_value"]) and np.isnan(row["diff_low"]) and np.isnan(row["diff_high"])
    agree = _kappa_rows((("Correct", "Correct"), ("Incorrect", "Incorrect")))
    row = correctness.self_vs_others(agree, metrics=("kappa",), n_boot=199).iloc[0]
    assert row["self"] == pytest.approx(1.0) and row["declined"].startswith("kappa 1 on self")
    varied = _kappa_rows((("Correct", "Correct"), ("Incorrect", "Incorrect"),
                          ("Incorrect", "Correct")))  # fmt: skip
    row = correctness.self_vs_others(varied, metrics=("kappa",), n_boot=199).iloc[0]
    assert row["declined"] == "" and 0.0 < row["p_value"] <= 1.0
    assert row["diff_low"] < row["diff"] < row["diff_high"]


def test_i33_2_a_kappa_side_resting_on_one_answer_of_a_label_gets_no_test():
    """Before: tested; such draws rejected a true null 10–20 % of the time (G50/n100)."""
    rows = []
    for c in range(8):
        lone = c == 0  # the only own answer a human marked Incorrect
        rows += [(c, True, "Incorrect" if lone else "Correct", "Correct"),
                 (c, True, "Correct", "Incorrect" if c % 2 else "Correct")]  # fmt: skip
        rows += [
            (c, False, h, v)
            for h, v in (
                ("Incorrect", "Incorrect"),
                ("Correct", "Correct"),
                ("Incorrect", "Correct" if c % 3 else "Incorrect"),
            )
        ]
    row = correctness.self_vs_others(_table(rows), metrics=("kappa",), n_boot=199).iloc[0]
    why = "kappa on self rests on 1 answer(s) of one human label (< 2): no test"
    assert row["declined"] == why and np.isnan(row["p_value"]) and np.isfinite(row["diff"])


def test_i33_2_the_kappa_test_is_the_union_with_its_cluster_jackknife():
    """The interval holds the wild one and diff ± t(G − 1)·SE_jackknife; p is the larger."""
    from scipy import stats as sps

    from judgelab.analyses.correctness.rates import rates_from_counts

    t = _kappa_rows((("Correct", "Correct"), ("Incorrect", "Incorrect"),
                     ("Incorrect", "Correct"), ("Correct", "Incorrect")))  # fmt: skip
    t.loc[t["cluster"].isin(["c1", "c4"]) & t["candidate_is_judge"], "verdict"] = t["human"]
    row = correctness.self_vs_others(t, metrics=("kappa",), n_boot=199).iloc[0]
    cells = confusion_counts(t)
    own = t["candidate_is_judge"].to_numpy()
    codes = t["cluster"].str[1:].astype(int).to_numpy()

    def kappa(rows):  # noqa: E306
        return float(rates_from_counts(cells[rows].sum(axis=0))["kappa"])

    diff = kappa(own) - kappa(~own)
    leave = np.array([kappa(own & (codes != c)) - kappa(~own & (codes != c)) for c in range(8)])
    se = np.sqrt(7 / 8 * np.sum((leave - leave.mean()) ** 2))
    q = sps.t.ppf(0.975, 7)
    assert row["diff"] == pytest.approx(diff)
    assert row["diff_low"] <= diff - q * se + 1e-12 and row["diff_high"] >= diff + q * se - 1e-12
    assert row["p_value"] >= 2 * sps.t.sf(abs(diff) / se, 7) - 1e-12
    assert "jackknife t(7)" in row["method"]


def test_i33_2_the_answered_gap_of_a_flat_draw_is_declined():
    """The calibration draw that gave the point interval [−1, −1], p = 0 under the null."""
    from judgelab.reporting.calibration import harness
    from judgelab.reporting.calibration.checks import correctness as checks
    from judgelab.simulate.base import scenario

    check = next(c for c in checks.CHECKS if c.name == "correctness.answered_kappa_gap")
    shape = scenario("unequal/varying/G8/n48")
    rng = harness.stats.rng_for(0, harness.generator_name(check.simulate), shape.name, "null", 15)
    out = check.estimate(check.simulate(rng, "null", shape), {})
    assert out.estimate == pytest.approx(-1.0)  # κ 0 (one human class) − κ 1 (all agree)
    assert out.declined.startswith("kappa 0 on correctly cannot vary")
    assert np.isnan(out.p_value) and np.isnan(out.low)
