"""Issue 36 item 1: per-slice PPI++ with stratified label allocation (allocate, slices)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.grounding import budget, ppi, slices


def _population(rng, noise: dict[str, float], n: int = 2000, clusters: int = 0) -> pd.DataFrame:
    """Binary labels per slice; the judge flips the human label with probability noise[s]."""
    frames = []
    for name, p in noise.items():
        y = rng.binomial(1, 0.6, n).astype(float)
        f = np.where(rng.random(n) < p, 1.0 - y, y)
        cl = rng.integers(0, clusters, n) if clusters else np.arange(n)
        frames.append(pd.DataFrame({"group": name, "cluster": [f"{name}{c}" for c in cl],
                                    "judge_label": f, "human_label": y}))  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _stratified_ppi(f, y, codes, lab) -> float:
    """Σ_h W_h θ̂_h of PPI++ (tuned λ̂ per stratum), by `ppi.solve` on each stratum's sums."""
    total = 0.0
    for h in np.unique(codes):
        idx = codes == h
        sums = ppi.moment_rows(y[idx, None], f[idx, None], lab[idx]).sum(axis=0)[None]
        total += idx.mean() * float(ppi.solve(sums, 1)["ppi"][0][0])
    return total


def test_i36_1_neyman_allocation_and_its_expected_se():
    rng = np.random.default_rng(1)
    pop = _population(rng, {"clean": 0.02, "noisy": 0.35, "mid": 0.15})
    f, y = pop["judge_label"].to_numpy(), pop["human_label"].to_numpy()
    codes = pd.factorize(pop["group"], sort=True)[0]
    pilot = np.zeros(len(pop), bool)
    for h in range(3):
        pilot[rng.choice(np.flatnonzero(codes == h), 40, replace=False)] = True
    plan = budget.allocate(f, np.where(pilot, y, np.nan), pop["group"], 300).set_index("stratum")
    assert list(plan.index) == ["clean", "mid", "noisy", "all"]
    assert plan.loc["all", "proportional"] == plan.loc["all", "neyman"] == 300
    assert plan.loc[["clean", "mid", "noisy"], "proportional"].tolist() == [100, 100, 100]
    ney = plan.loc[["clean", "mid", "noisy"], "neyman"]
    assert ney["clean"] < ney["mid"] < ney["noisy"]  # labels go where the rectifier is noisy
    assert plan.loc["all", "se_neyman"] < plan.loc["all", "se_proportional"]
    # the expected SE is the SD of the stratified estimate over replays of each plan
    for alloc in budget.ALLOCATIONS:
        want = plan.loc[["clean", "mid", "noisy"], alloc].to_numpy()
        draws = []
        for _ in range(300):
            lab = np.zeros(len(pop), bool)
            for h in range(3):
                lab[rng.choice(np.flatnonzero(codes == h), want[h], replace=False)] = True
            draws.append(_stratified_ppi(f, y, codes, lab))
        sd = float(np.std(draws, ddof=1))
        assert sd == pytest.approx(plan.loc["all", f"se_{alloc}"], rel=0.2), alloc
        assert abs(np.mean(draws) - y.mean()) < 0.01


def test_i36_1_by_slice_rows_and_the_population_row():
    rng = np.random.default_rng(2)
    pop = _population(rng, {"a": 0.05, "b": 0.3}, n=300, clusters=60)
    lab = rng.random(len(pop)) < 0.25
    df = pop.assign(human_label=np.where(lab, pop["human_label"], np.nan))
    out = slices.by_slice(df, n_boot=199).set_index(["slice", "method"])
    assert set(out.index.get_level_values(0)) == {"a", "b", "all"}
    for s in ("a", "b"):
        part = df[df["group"] == s]
        assert out.loc[(s, "classical"), "estimate"] == pytest.approx(
            part["human_label"].mean(skipna=True)
        )
        assert out.loc[(s, "naive"), "estimate"] == pytest.approx(part["judge_label"].mean())
        assert out.loc[(s, "ppi"), "n_labelled"] == int(part["human_label"].notna().sum())
    # the population row combines the strata by their shares (0.5 each)
    mix = 0.5 * out.loc[("a", "ppi"), "estimate"] + 0.5 * out.loc[("b", "ppi"), "estimate"]
    assert out.loc[("all", "ppi"), "estimate"] == pytest.approx(mix, abs=1e-9)
    assert "MOVER over 2 strata" in out.loc[("all", "ppi"), "interval"]
    for key, r in out.iterrows():
        assert r["ci_low"] <= r["estimate"] <= r["ci_high"], key
    # the slice whose judge is noisy gets a wider PPI++ interval
    width = out["ci_high"] - out["ci_low"]
    assert width[("b", "ppi")] > width[("a", "ppi")]


def test_i36_1_study_keeps_the_pilot_and_places_the_budget():
    rng = np.random.default_rng(4)
    pop = _population(rng, {"x": 0.05, "y": 0.3, "z": 0.2}, n=200).assign(judge="J")
    plan, est = slices.study(pop, judge="J", budget=120, pilot=15, n_boot=199, seed=3)
    plan = plan.set_index("stratum")
    assert plan.loc["all", "pilot_labels"] == 45
    assert plan.loc["all", "neyman"] == plan.loc["all", "proportional"] == 120
    got = est[est["method"] == "ppi"].set_index(["allocation", "slice"])
    for alloc in budget.ALLOCATIONS:
        for s in ("x", "y", "z"):
            n_lab = got.loc[(alloc, s), "n_labelled"]
            assert n_lab == max(plan.loc[s, alloc], 15)  # pilot labels are kept, never redrawn
        assert got.loc[(alloc, "all"), "all_human"] == pytest.approx(pop["human_label"].mean())
    assert est["covers"].dtype == bool


def test_i36_1_allocate_refuses_a_budget_it_cannot_place():
    f = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    y = np.array([1.0, 0.0, np.nan, 1.0, 1.0, np.nan])
    with pytest.raises(ValueError, match=r"label budget 3 outside \[4, 4\]"):
        budget.allocate(f, y, ["a", "a", "a", "b", "b", "b"], 3)
