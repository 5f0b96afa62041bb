"""Unit tests of the stability family (issue 35 item 1): hand-computed values and planted cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from judgelab.analyses import stability as st


def _rows(judge, labels, *, order=0, sample=0, prompt="p", model=None, clusters=None):
    """Judgments of one judge: item i gets labels[i] (`chosen`), one cluster per item or given."""
    out = []
    for i, lab in enumerate(labels):
        out.append(
            {
                "benchmark": "b",
                "split": "s",
                "item_id": f"i{i}",
                "judge": judge,
                "model": model or judge,
                "prompt": prompt,
                "order": order,
                "sample": sample,
                "valid": lab is not None,
                "chosen": lab,
                "verdict": lab,
                "cluster": f"c{clusters[i]}" if clusters is not None else f"c{i}",
            }
        )
    return pd.DataFrame(out)


A = ["pos", "pos", "neg", "neg", "tie", "pos"]
B = ["pos", "neg", "neg", "pos", "tie", "pos"]


def test_i35_1_verdict_shift_hand_computed():
    j = pd.concat([_rows("A", A), _rows("B", B)], ignore_index=True)
    out = st.verdict_shift(j, n_boot=199).set_index("measure")
    # agreement 4 of 6; changed 2 of 6
    assert out.loc["agreement", "value"] == pytest.approx(4 / 6)
    assert out.loc["changed", "value"] == pytest.approx(2 / 6)
    # p_o = 24/36, p_e = (3·3 + 2·2 + 1·1)/36 = 14/36 → kappa = 10/22
    assert out.loc["kappa", "value"] == pytest.approx(10 / 22)
    for m in st.MEASURES:
        row = out.loc[m]
        assert row["n"] == 6 and row["n_clusters"] == 6
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
        assert row["few_clusters"]  # 6 clusters: below FEW_EFFECTIVE
    assert set(out["a"]) == {"A"} and set(out["b"]) == {"B"}


def test_i35_1_verdict_shift_resamples_clusters():
    # the same labels in 2 big clusters vs 6 singletons: fewer (effective) clusters
    j = pd.concat(
        [_rows("A", A * 10, clusters=[i % 2 for i in range(60)]), _rows("B", B * 10)],
        ignore_index=True,
    )
    j.loc[j["judge"] == "B", "cluster"] = j.loc[j["judge"] == "A", "cluster"].to_numpy()
    out = st.verdict_shift(j, n_boot=199).set_index("measure")
    assert out.loc["changed", "n_clusters"] == 2
    assert out.loc["changed", "n_eff_clusters"] <= 2.0 + 1e-9


def test_i35_1_shift_matrix_counts():
    j = pd.concat([_rows("A", A), _rows("B", B)], ignore_index=True)
    m = st.shift_matrix(j, "A", "B").set_index(["from", "to"])
    assert m.loc[("pos", "neg"), "n"] == 1 and m.loc[("neg", "pos"), "n"] == 1
    assert m.loc[("pos", "pos"), "share"] == pytest.approx(2 / 3)
    assert m["n"].sum() == 6
    with pytest.raises(KeyError, match="judge='C'"):
        st.shift_matrix(j, "A", "C")


def test_i35_1_score_drift_mean_and_quantiles():
    xa = np.arange(1, 41, dtype=float)
    ja = _rows("A", [str(x) for x in xa])
    jb = _rows("B", [str(x + 2) for x in xa])  # every score moves up by 2
    out = st.score_drift(pd.concat([ja, jb]), "A", "B", n_boot=199).set_index("statistic")
    assert out.loc["mean", "value"] == pytest.approx(2.0)
    assert out.loc["mean", "ci_low"] <= 2.0 <= out.loc["mean", "ci_high"]
    assert out.loc["q0.5", "value"] == pytest.approx(2.0)
    assert out.loc["q0.5", "value_a"] == 20.0  # inverse CDF: 20th of 40
    assert out.loc["mean", "n"] == 40


def _board_scores(rng, means, raters=("humans", "J1"), n_q=200):
    rows = []
    for q in range(n_q):
        for s, mu in enumerate(means):
            for r in raters:
                rows.append(
                    {"system": f"s{s}", "rater": r, "cluster": f"q{q}", "value": rng.random() < mu}
                )
    return pd.DataFrame(rows).astype({"value": float})


def test_i35_1_kendall_tau_matches_scipy(rng):
    x, y = rng.random(7), rng.random(7)
    assert float(st.kendall_tau_b(x, y)) == pytest.approx(sps.kendalltau(x, y).statistic)
    assert st.ranks(np.array([0.1, 0.5, 0.5])).tolist() == [3.0, 1.5, 1.5]


def test_i35_1_leaderboard_clear_leader(rng):
    scores = _board_scores(rng, [0.95, 0.5, 0.3, 0.1])
    lb = st.leaderboard_stability(scores, n_boot=199, n_boot_wild=199)
    lead = lb.leaders.set_index("rater")
    assert lead.loc["humans", "leader"] == "s0"
    assert lead.loc["humans", "p_leader_changes"] == 0.0
    tau = lb.taus.iloc[0]
    assert tau["rater_1"] == "humans" and tau["tau"] == 1.0
    assert tau["ci_low"] <= 1.0 == tau["ci_high"]
    b = lb.board.set_index(["rater", "system"])
    assert b.loc[("humans", "s0"), "rank"] == 1 and b.loc[("humans", "s3"), "rank"] == 4
    assert b.loc[("humans", "s0"), "p_lead"] == 1.0


def test_i35_1_leaderboard_close_race_changes_leader(rng):
    scores = _board_scores(rng, [0.5, 0.5, 0.5], n_q=60)
    lb = st.leaderboard_stability(scores, n_boot=299, n_boot_wild=199)
    assert lb.leaders["p_leader_changes"].min() > 0.1  # three equal systems
    b = lb.board[lb.board["rater"] == "humans"]
    assert (b["rank_high"] - b["rank_low"]).max() >= 1  # rank sets overlap


def test_i35_1_scores_from_judgments_adds_humans():
    j = _rows("J", ["Correct", "Incorrect", "Correct"]).assign(chosen=None)
    items = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": ["i0", "i1", "i2"],
            "cluster": ["c0", "c1", "c2"],
            "meta": ['{"m": "x"}', '{"m": "y"}', '{"m": "x"}'],
            "gold": ["Correct", "Correct", None],
        }
    )
    other = items.assign(split="other")  # not judged here: no human row either
    items = pd.concat([items, other], ignore_index=True)
    sc = st.scores_from_judgments(j, items, system="meta.m", positive="Correct", human="gold")
    hum = sc[sc["rater"] == st.HUMANS]
    assert len(hum) == 2 and hum["value"].tolist() == [1.0, 1.0]
    assert sc[sc["rater"] == "J"].groupby("system")["value"].mean().to_dict() == {
        "x": 1.0,
        "y": 0.0,
    }


def test_i35_1_repeat_reliability_hand_computed():
    # 4 items × 3 trials; item 0 flips once (pos, pos, neg), the rest are steady
    trials = [
        ["pos", "pos", "neg", "neg"],
        ["pos", "pos", "neg", "neg"],
        ["neg", "pos", "neg", "neg"],
    ]
    j = pd.concat([_rows("J", t, sample=s) for s, t in enumerate(trials)], ignore_index=True)
    out = st.repeat_reliability(j, n_boot=199).set_index("measure")
    assert out.loc["flip", "value"] == pytest.approx(1 / 4)
    # trial pairs: 3 per item, item 0 has 2 disagreeing → 2 / 12
    assert out.loc["disagreement", "value"] == pytest.approx(2 / 12)
    # ordered pairs: 24, 20 agree; margins pos 10 / neg 14 each side: p_e = (100+196)/576
    p_o, p_e = 20 / 24, (100 + 196) / 576
    assert out.loc["kappa", "value"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert out.loc["flip", "trials"] == 3.0


def test_i35_1_trials_needed_steady_and_noisy_judges(rng):
    n_units, m = 400, 5
    steady = [_rows("steady", ["pos"] * 200 + ["neg"] * 200, sample=s) for s in range(m)]
    noisy = [
        _rows("noisy", list(np.where(rng.random(n_units) < 0.6, "pos", "neg")), sample=s)
        for s in range(m)
    ]
    j = pd.concat(steady + noisy, ignore_index=True)
    need, curve = st.trials_needed(j, targets=(0.9,), n_boot=99)
    need = need.set_index("judge")
    assert need.loc["steady", "trials_needed"] == 1
    # q = 0.6 for every unit: a majority of k agrees w.p. P(Bin(k, .6) > k/2) ≥ .9 from k = 41
    assert need.loc["noisy", "trials_needed"] >= 15 or need.loc["noisy", "beyond"]
    noisy_curve = curve[curve["judge"] == "noisy"]["p_agree"].to_numpy()
    assert np.all(np.diff(noisy_curve) >= -1e-9)


def test_i35_1_template_sensitivity_hand_computed():
    j = pd.concat(
        [
            _rows("m.p1", ["pos", "pos", "neg", "neg"], prompt="p1", model="m"),
            _rows("m.p2", ["pos", "neg", "neg", "neg"], prompt="p2", model="m"),
            _rows("m.p3", ["pos", "pos", "neg", "pos"], prompt="p3", model="m"),
            _rows("x.p1", ["pos", "pos", "neg", "neg"], prompt="p1", model="x"),
        ],
        ignore_index=True,
    )
    out = st.template_sensitivity(j, n_boot=199)
    assert out["model"].tolist() == ["m"]  # x has one prompt
    assert out["value"].iloc[0] == pytest.approx(2 / 4) and out["n_prompts"].iloc[0] == 3
    pair = st.verdict_shift(j, by="prompt", within=["model"], pairs=[("p1", "p2")], n_boot=199)
    changed = pair[(pair["model"] == "m") & (pair["measure"] == "changed")]["value"]
    assert changed.iloc[0] == pytest.approx(1 / 4)


def test_i35_1_reasons_and_missing_columns():
    empty = pd.DataFrame()
    assert "second judge" in st.shift_reason(empty)
    assert "once per item" in st.repeats_reason(empty)
    assert "two or more prompts" in st.template_reason(empty)
    assert "at least 3 systems" in st.leaderboard_reason(pd.DataFrame(columns=["system", "rater"]))
    with pytest.raises(KeyError, match="order"):
        st.verdict_shift(pd.DataFrame({"benchmark": ["b"], "split": ["s"], "item_id": ["i"]}))


def test_i35_1_plots_draw(rng):
    j = pd.concat([_rows("A", A), _rows("B", B)], ignore_index=True)
    ax = st.plots.shift_heatmap(st.shift_matrix(j, "A", "B"))
    assert len(ax.texts) == 9
    lb = st.leaderboard_stability(_board_scores(rng, [0.9, 0.5, 0.2]), n_boot=99, n_boot_wild=99)
    assert len(st.plots.rank_sets(lb.board, rater="humans").lines) >= 1
    t = st.tau_table(lb)
    ax = st.plots.forest(t, label="rater_2", value="tau", reference=1.0)
    assert ax.get_yticklabels()[0].get_text() == "J1"


def test_i35_1_scores_by_split_and_reference_pairs():
    # arena-style: the system is the split, the verdict a score
    j = pd.concat(
        [_rows("J", ["3", "5"]).assign(split="m1"), _rows("J", ["8", "9"]).assign(split="m2")]
    ).assign(chosen=None)
    items = j[["benchmark", "split", "item_id", "cluster"]].drop_duplicates()
    sc = st.scores_from_judgments(j, items, system="split")
    assert sc.groupby("system")["value"].mean().to_dict() == {"m1": 4.0, "m2": 8.5}
    both = pd.concat([_rows("A", A), _rows("B", B), _rows("C", A)], ignore_index=True)
    out = st.verdict_shift(both, reference="C", n_boot=99)
    assert sorted(set(zip(out["a"], out["b"], strict=True))) == [("C", "A"), ("C", "B")]
    assert st.focus_pair(out, "X", "Y") == ("C", "B")  # absent pair: the largest change


def test_i35_4_headline_adds_the_drift_of_two_scorers():
    xa = np.arange(1, 31, dtype=float)
    j = pd.concat([_rows("A", [str(x) for x in xa]), _rows("B", [str(x + 1) for x in xa])])
    j = j.assign(chosen=None)
    rows = st.headline(j, pd.DataFrame(), "A", "B", n_boot_wild=99).set_index("measure")
    assert rows.loc["drift_mean", "value"] == pytest.approx(1.0)
    assert rows.loc["changed", "value"] == pytest.approx(1.0)  # every score differs
    with pytest.raises(ValueError, match="got 'C'"):
        st.headline(j, pd.DataFrame(), "A", "C")


def test_i35_7_tau_projection_covers_a_population_tau_of_one_where_systems_are_close():
    # Both raters share the population order s0 > … > s5, the middle four 0.02 apart: the
    # sample τ falls below 1 and the percentile interval then misses τ = 1 (10 of 12 here).
    means = [0.7, 0.56, 0.54, 0.52, 0.5, 0.3]
    missed = {"extended": 0, "projection": 0, "percentile": 0}
    for seed in range(12):
        scores = _board_scores(np.random.default_rng(seed), means, n_q=100)
        for method in missed:
            t = st.leaderboard_stability(
                scores, n_boot=299, n_boot_wild=99, tau_interval=method
            ).taus.iloc[0]
            missed[method] += not (t["ci_low"] <= 1.0 <= t["ci_high"])
            if method != "percentile":
                assert "pairs unsettled" in t["method"]
    assert missed["extended"] == missed["projection"] == 0
    assert missed["percentile"] >= 6


def test_i35_7_tau_projection_settles_clear_orders_and_excludes_a_reversal(rng):
    rows = _board_scores(rng, [0.9, 0.5, 0.1], raters=("humans",), n_q=300)
    rev = _board_scores(rng, [0.1, 0.5, 0.9], raters=("J1",), n_q=300)
    t = st.leaderboard_stability(pd.concat([rows, rev]), n_boot=299, n_boot_wild=99).taus
    row = t.iloc[0]
    assert row["tau"] == -1.0 and row["ci_low"] == row["ci_high"] == -1.0
    assert "0 of 3 pairs unsettled" in row["method"]
    with pytest.raises(ValueError, match="tau_interval"):
        st.leaderboard_stability(rows, tau_interval="bca")
