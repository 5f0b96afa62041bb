"""Issue 36 items 2 and 3: the transport audit and the refusal outside the labelled range."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.grounding import support, transport


def _slices(rng, shifts: dict[str, float], n: int = 600, clusters: int = 120) -> pd.DataFrame:
    """A binary judge per slice whose bias (judge − human) is `shifts[slice]` on average."""
    frames = []
    for name, shift in shifts.items():
        y = rng.binomial(1, 0.6, n).astype(float)
        flip_up = rng.random(n) < max(shift, 0) / 0.4
        flip_down = rng.random(n) < max(-shift, 0) / 0.6
        f = np.where(y == 0, np.where(flip_up, 1.0, 0.0), np.where(flip_down, 0.0, 1.0))
        frames.append(pd.DataFrame({"group": name, "cluster": rng.integers(0, clusters, n),
                                    "judge_label": f, "human_label": y}))  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def test_i36_2_transport_grades_each_slice():
    rng = np.random.default_rng(3)
    table = _slices(rng, {"a": 0.1, "b": 0.1, "c": 0.1, "off": -0.25})
    out = transport.audit(table, margin=0.08, n_boot=499).set_index("slice")
    assert out.loc["off", "grade"] == "FAIL"  # error = Δ_train − Δ_off ≈ −0.1 − 0.25
    assert out.loc["off", "error"] < -0.25
    # the rectifier's error is Δ_train − Δ_s exactly
    lab = table.assign(d=table["human_label"] - table["judge_label"])
    expect = lab.loc[lab.group != "a", "d"].mean() - lab.loc[lab.group == "a", "d"].mean()
    assert out.loc["a", "error"] == pytest.approx(expect, abs=1e-12)
    assert (out["correction"] == "rectifier").all()
    assert (out["n"] == 600).all() and (out["n_clusters"] == 120).all()
    assert (out["n_eff_clusters"] > 50).all()
    for s, r in out.iterrows():
        assert r["ci_low"] <= r["error"] <= r["ci_high"], s
        assert r["grade"] == transport.grade(r["ci_low"], r["ci_high"], 0.08)


def test_i36_2_transport_fixed_training_slices():
    rng = np.random.default_rng(4)
    table = _slices(rng, {"a": 0.0, "b": 0.0, "c": 0.0}, n=2000, clusters=400)
    out = transport.audit(table, margin=0.05, train=["a"], n_boot=499)
    assert out["slice"].tolist() == ["b", "c"]
    assert (out["grade"] == "PASS").all(), out[["slice", "ci_low", "ci_high"]]
    assert (out["trained_on"] == "a").all()
    with pytest.raises(ValueError, match=r"train slices \['z'\] are not among"):
        transport.audit(table, train=["z"])
    with pytest.raises(ValueError, match="margin must be > 0"):
        transport.audit(table, margin=0.0)


def test_i36_2_transport_isotonic_map_for_scores():
    rng = np.random.default_rng(5)
    rows = []
    for name, bend in (("a", 0.0), ("b", 0.0), ("drift", 0.3)):
        s = rng.random(1500)
        p = np.clip(s + bend * (s > 0.0) - 0.15 * bend, 0, 1)  # another calibration in drift
        rows.append(
            pd.DataFrame(
                {
                    "group": name,
                    "cluster": rng.integers(0, 300, 1500),
                    "judge_label": s,
                    "human_label": rng.binomial(1, p),
                }
            )
        )
    table = pd.concat(rows, ignore_index=True)
    out = transport.audit(table, margin=0.05, n_boot=499).set_index("slice")
    assert (out["correction"] == "isotonic").all()
    assert out.loc["drift", "grade"] == "FAIL"
    assert out.loc["drift", "error"] < -0.1  # the others' map under-predicts drift's labels
    # the map itself: monotone, and ties pooled
    m = transport.isotonic_map(np.array([0.1, 0.1, 0.5, 0.9]), np.array([1.0, 0.0, 0.0, 1.0]))
    assert m(np.array([0.1, 0.5, 0.9])).tolist() == pytest.approx([1 / 3, 1 / 3, 1.0])


def test_i36_3_refused_outside_the_labelled_range():
    # transport: the tested slice's scores reach beyond what the training labels cover
    rng = np.random.default_rng(6)
    score = rng.random(200) * 0.5
    a = pd.DataFrame({"group": "a", "cluster": np.arange(200), "judge_label": score,
                      "human_label": rng.binomial(1, 0.3, 200)})  # fmt: skip
    b = a.assign(group="b", judge_label=a["judge_label"] + 0.3)
    out = transport.audit(pd.concat([a, b], ignore_index=True), train=["a"], n_boot=199)
    row = out.iloc[0]
    assert row["grade"] == "REFUSED" and np.isnan(row["error"])
    n_out = int((b["judge_label"] > a["judge_label"].max()).sum())
    assert row["n_outside"] == n_out > 0
    assert f"{n_out} of 200 unlabelled items have judge scores outside" in row["refused"]
    # the reason function and the guarded level estimate
    assert support.support_reason([0.2, 0.8], [0.3, 0.5]) is None
    why = support.support_reason(["x", "y"], ["x", "z", "z"])
    assert why.startswith("2 of 3 unlabelled items are in categories no labelled item is in (z)")
    judge = np.r_[np.linspace(0.2, 0.6, 20), [0.9, 0.95]]
    human = np.r_[rng.binomial(1, 0.5, 20).astype(float), [np.nan, np.nan]]
    refused = support.level_estimates(judge, human)
    assert refused["estimate"].isna().all() and (refused["n_outside"] == 2).all()
    assert "2 of 2 unlabelled items" in refused["refused"].iloc[0]
    human[5:8] = np.nan  # three unlabelled items inside the range, none outside
    ok = support.level_estimates(judge[:20], human[:20])
    assert ok["estimate"].notna().all() and (ok["refused"] == "").all()


def test_i36_3_replay_refuses_a_scored_judge_and_keeps_a_verdict():
    rng = np.random.default_rng(7)
    n = 300
    y = rng.binomial(1, 0.4, n).astype(float)
    score = np.clip(0.5 * y + 0.5 * rng.random(n), 0, 1)
    base = {"cluster": np.arange(n) // 3, "human_label": y}
    table = pd.concat([pd.DataFrame({"judge": "scored", "judge_label": score, **base}),
                       pd.DataFrame({"judge": "verdict", "judge_label": (score > 0.5) * 1.0,
                                     **base})], ignore_index=True)  # fmt: skip
    out = support.replay(table, budget=40, seed=0, n_boot=199).set_index("judge")
    assert out.loc["verdict", "refused"] == "" and np.isfinite(out.loc["verdict", "estimate"])
    assert out.loc["scored", "n_outside"] > 0 and np.isnan(out.loc["scored", "estimate"])
    assert out.loc["scored", "refused"].startswith(f"{out.loc['scored', 'n_outside']} of 260")
