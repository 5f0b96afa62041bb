"""The ContextEval generators plant what they say: shapes, exact nulls, truths vs large draws."""

from types import SimpleNamespace

import numpy as np
import pytest

from judgelab.analyses import contexteval as ce
from judgelab.simulate import contexteval as sc
from judgelab.simulate.base import Design, scenario

BASE, CTX = sc.SETTINGS


def test_pairwise_tables_give_the_examples_the_checks_read():
    design = scenario("unequal/varying/G8/n48").design(benchmark="sim-ce")
    sim = sc.pairwise(np.random.default_rng(3), design, quality=0.4)
    ex = ce.example_table(ce.verdict_table(sim.judgments, sim.items))
    fast = sim.extra["examples"]
    cols = ["setting", "example_key", "n_c1", "n_c2", "n_tie", "plurality_label", "n_invalid"]
    assert (ex[cols].to_numpy() == fast[cols].to_numpy()).all()
    assert (ex["majority_label"].isna() == fast["majority_label"].isna()).all()
    ok = ex["majority_label"].notna()
    assert (ex.loc[ok, "majority_label"] == fast.loc[ok, "majority_label"]).all()
    # One conversation is one unit in both settings (the comparison is paired), and the
    # conversations are of unequal size, as drawn.
    sizes = sim.params["design"].sizes
    assert ex["cluster"].nunique() == 8 and set(ex["cluster"]) == set(fast["cluster"])
    assert sum(sizes) == 48 and max(sizes) >= 3 * min(sizes)
    per = ex[ex["setting"] == BASE].groupby("cluster").size().sort_values().to_numpy()
    assert per.tolist() == sorted(sizes)


def _population(params: dict, n: int = 500_000) -> dict[str, float]:
    """Margins and agreement counted on one large draw of the generator's votes.

    Each query its own conversation (expectations do not depend on how queries group);
    the draw is the generator's own (`_pairwise_draw`), counted here without the analyses.
    """
    p = {"quality": 0.0, "context_effect": 0.0, "tie_band": 0.8, "query_sd": 0.7}
    p.update(invalid=(0.02, 0.06), close_factor=3.0)
    p.update(params)
    design = Design(n, 1, 0.5, effect_sd=0.5)
    out = {}
    for s, (votes, bad) in zip(
        sc.SETTINGS,
        sc._pairwise_draw(np.random.default_rng(11), design, SimpleNamespace(**p)),
        strict=True,
    ):
        v = np.where(bad, 2, votes)
        counts = np.stack([(v == k).sum(axis=1) for k in range(3)], axis=1)
        major = counts * 2 > v.shape[1]
        out[f"{s}|margin"] = 100 * (major[:, 0].sum() - major[:, 1].sum()) / major.sum()
        out[f"{s}|agreement"] = 100 * float(np.mean(counts.max(axis=1))) / v.shape[1]
    out["delta_margin"] = out[f"{CTX}|margin"] - out[f"{BASE}|margin"]
    out["delta_agreement"] = out[f"{CTX}|agreement"] - out[f"{BASE}|agreement"]
    return out


@pytest.mark.parametrize(
    "params",
    [
        {"quality": 0.0, "context_effect": 0.0},  # the margin's null
        {"quality": 0.3, "context_effect": 0.0, "invalid": (0.04, 0.04)},  # the context's
        {"quality": 0.4, "context_effect": 0.8, "invalid": (0.02, 0.06)},  # an alternative
    ],
)
def test_pairwise_truth_matches_a_large_draw_and_nulls_are_exact(params):
    truth = sc.pairwise(
        np.random.default_rng(0), Design(8, 6, 0.5, effect_sd=0.5), tables=False, **params
    ).truth
    big = _population(params)
    # 500,000 queries: the MC SE of a margin is ~0.14 points (0.0014), of agreement ~0.03.
    for key in (f"{BASE}|margin", f"{CTX}|margin", "delta_margin"):
        assert big[key] == pytest.approx(truth[key], abs=0.5)
    for key in (f"{BASE}|agreement", "delta_agreement"):
        assert big[key] == pytest.approx(truth[key], abs=0.1)
    if params["quality"] == 0.0:  # C1 <-> C2 symmetry: the margin is exactly 0
        assert abs(truth[f"{BASE}|margin"]) < 1e-9 and abs(big[f"{BASE}|margin"]) < 0.5
    if params["context_effect"] == 0.0 and params.get("invalid") == (0.04, 0.04):
        # exchangeable settings: no change at all (|truth - null| < 0.002 as a share)
        assert abs(truth["delta_margin"]) < 1e-9 and abs(truth["delta_agreement"]) < 1e-9
        assert abs(big["delta_margin"]) < 0.5 and abs(big["delta_agreement"]) < 0.1
    if params["context_effect"] > 0:
        assert truth["delta_margin"] > 20


def test_pairwise_plants_varying_effects_and_invalids_not_at_random():
    design = Design(400, 50, 0.5, "sim-ce", effect_sd=0.5)
    sim = sc.pairwise(np.random.default_rng(2), design, context_effect=0.5, tables=False)
    ex = sim.extra["examples"]
    per = ex.assign(d=ex["n_c1"] - ex["n_c2"]).pivot_table(
        index="cluster", columns="setting", values="d", aggfunc="mean"
    )
    change = per[CTX] - per[BASE]
    assert change.mean() > 0.5 and change.std() > 0.5  # the context effect varies
    share = ex.groupby("setting")["n_invalid"].mean() / 5
    assert share[BASE] < share[CTX]  # more refusals with context
    # refusals cluster by conversation: their spread is far above a binomial one's
    by_conv = ex[ex["setting"] == CTX].groupby("cluster")["n_invalid"].mean() / 5
    assert by_conv.std() > 3 * np.sqrt(share[CTX] * (1 - share[CTX]) / 250)


def test_ratings_tables_parse_to_the_long_ratings():
    design = scenario("unequal/varying/G8/n48").design(benchmark="sim-weird")
    sim = sc.ratings(np.random.default_rng(4), design, gaps={"Age Group": 1.0}, missing=0.1)
    parsed = ce.ratings_table(sim.judgments, sim.items)
    keys = ["attribute", "query_id", "rater", "value"]
    a = parsed.sort_values(keys).reset_index(drop=True)
    b = sim.extra["ratings"].sort_values(keys).reset_index(drop=True)
    assert (a[keys].to_numpy() == b[keys].to_numpy()).all()
    assert np.allclose(a["rating"], b["rating"], equal_nan=True)
    assert (a["cluster"] == b["cluster"]).all() and a["cluster"].nunique() == 8
    assert a["rating"].isna().any() and a["query_id"].nunique() == 48


@pytest.mark.parametrize("gap", [0.0, 0.5])
def test_gap_truth_matches_a_large_draw_and_the_null_is_exact(gap):
    values, weird = sc.ATTRIBUTES["Age Group"]
    w = np.array([v in weird for v in values])
    design = Design(200_000, 1, 0.5, effect_sd=0.5)
    lat = sc._rating_latent(np.random.default_rng(5), design, w, gap)  # the generator's draw
    r = np.clip(np.round(lat), 1, 5)  # queries × raters × values
    drawn = float(np.mean(r[:, :, w].mean(axis=2) - r[:, :, ~w].mean(axis=2)))
    truth = sc.ratings(
        np.random.default_rng(0),
        Design(8, 6, 0.5, effect_sd=0.5),
        gaps={"Age Group": gap},
        tables=False,
    ).truth
    # 10^6 (query, rater) gaps, 5 per query correlated: MC SE ~0.002.
    assert drawn == pytest.approx(truth["Age Group"], abs=0.008)
    young = float(r[:, :, values.index("Young adults")].mean())
    assert young == pytest.approx(truth["Age Group|Young adults"], abs=0.01)
    if gap == 0.0:
        assert all(abs(truth[a]) < 1e-12 for a in sc.ATTRIBUTES)
    else:
        assert truth["Age Group"] > 0.3
