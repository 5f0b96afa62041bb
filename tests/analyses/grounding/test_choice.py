"""Issue 36 item 5: which judge should I use on my data? (ranking, rank intervals, costs)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.grounding import choice, plots
from judgelab.core import stats


def _table(rng, flips: dict[str, float], n: int = 800, clusters: int = 160) -> pd.DataFrame:
    y = rng.binomial(1, 0.5, n).astype(float)
    cl = rng.integers(0, clusters, n)
    frames = []
    for name, p in flips.items():
        f = np.where(rng.random(n) < p, 1.0 - y, y)
        frames.append(pd.DataFrame({"judge": name, "benchmark": "b", "split": "s",
                                    "item_id": np.arange(n).astype(str), "cluster": cl,
                                    "judge_label": f, "human_label": y}))  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def test_i36_5_ranks_judges_with_intervals_and_p_best():
    rng = np.random.default_rng(11)
    table = _table(rng, {"good": 0.05, "mid": 0.2, "poor": 0.35})
    r = choice.rank_judges(table, n_boot=499).set_index("judge")
    assert list(r.index) == ["good", "mid", "poor"]
    g = table[table.judge == "good"]
    conf = pd.crosstab(g.human_label, g.judge_label).to_numpy()
    assert r.loc["good", "kappa"] == pytest.approx(float(stats.kappa_from_confusion(conf)))
    assert r.loc["good", "kappa_p_best"] > 0.99 and r.loc["poor", "kappa_p_best"] == 0.0
    assert r["kappa_p_best"].sum() == pytest.approx(1.0)
    assert (r["kappa_rank_low"] <= r["kappa_rank"]).all()
    assert (r["kappa_rank"] <= r["kappa_rank_high"]).all()
    assert (r["kappa_low"] <= r["kappa"]).all() and (r["kappa"] <= r["kappa_high"]).all()
    # a better judge buys a smaller PPI++ error: worth more human labels than the budget
    assert r.loc["good", "ppi_se"] < r.loc["mid", "ppi_se"] < r.loc["poor", "ppi_se"]
    assert r.loc["good", "worth_labels"] > 3 * r.loc["good", "budget"]
    assert (r["n"] == 800).all() and (r["n_clusters"] == g["cluster"].nunique()).all()


def test_i36_5_costs_records_prices_or_blank_and_frontier():
    rng = np.random.default_rng(12)
    table = _table(rng, {"a": 0.05, "b": 0.2, "c": 0.1, "d": 0.3}, n=300, clusters=60)
    judgments = pd.DataFrame({"judge": ["a"] * 3 + ["b"] * 2, "model": ["A"] * 3 + ["B"] * 2,
                              "cost_usd": [0.002, 0.002, 0.002, 0.0001, None]})  # fmt: skip
    r = choice.rank_judges(table, judgments=judgments, prices={"B": 0.5, "c": 3.0}, n_boot=199)
    r = r.set_index("judge")
    assert r.loc["a", "cost_per_1000"] == pytest.approx(2.0)
    assert r.loc["a", "cost_source"].startswith("cost records")
    assert r.loc["b", "cost_per_1000"] == 0.5  # a missing record: the model's stated price
    assert r.loc["c", "cost_source"] == "stated price (judge)"
    assert np.isnan(r.loc["d", "cost_per_1000"]) and "no stated price" in r.loc["d", "cost_source"]
    # a (κ best, $2) and b ($0.5) are on the frontier; c ($3, worse than a) is not
    assert r["frontier"].to_dict() == {"a": True, "b": True, "c": False, "d": False}
    assert choice.frontier_reason(r.reset_index()) is None
    ax = plots.frontier(r.reset_index(), title="t")
    assert "no cost: d" in ax.get_title(loc="left")
    alone = choice.rank_judges(table, n_boot=99)
    assert choice.frontier_reason(alone).startswith("0 of 4 judges have a cost")
    with pytest.raises(ValueError, match="at least 2 judges"):
        choice.rank_judges(table[table.judge == "a"])
