"""Context-length analyses: bins, the context × response grid, the trend test."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length


def table(judge, ctx, resp, correct, consistent=None):
    n = len(ctx)
    return pd.DataFrame(
        {
            "judge": judge,
            "benchmark": "b",
            "split": "s",
            "item_id": [str(i) for i in range(n)],
            "len_context": ctx,
            "len_response": resp,
            "correct": correct,
            "consistent": consistent if consistent is not None else [np.nan] * n,
            "len_unit": "words",
        }
    )


def test_accuracy_by_context_hand_values():
    t = table("j", [10.0, 20, 30, 40], [5.0, 5, 5, 5], [1.0, 1, 0, 0])
    out = length.accuracy_by_context(t, edges=[0, 50, 100], n_boot=100)
    # median of 10..40 = 25: bin 1 = {10, 20} (2/2 correct), bin 2 = {30, 40} (0/2)
    assert out["value"].tolist() == [1.0, 0.0]
    assert out["n"].tolist() == [2, 2]
    assert out["metric"].unique().tolist() == ["accuracy"]
    # labels name the largest length in the bin (20, 40), not the cut 25
    assert out["bin"].astype(str).tolist() == ["P0–50 (≤20)", "P50–100 (≤40)"]


def test_accuracy_by_context_reports_consistency_for_pairwise():
    t = table("j", [10.0, 20, 30, 40], [5.0, 6, 7, 8], [1.0, 0, 0, 0], [1.0, 1, 0, 1])
    out = length.accuracy_by_context(t, edges=[0, 100], n_boot=50)
    assert out.set_index("metric")["value"].to_dict() == {"accuracy": 0.25, "consistency": 0.75}


def test_length_grid_means_over_judges_and_masks():
    a = table("a", [10.0, 10, 40, 40], [1.0, 9, 1, 9], [1.0, 0, 1, 1])
    b = table("b", [10.0, 10, 40, 40], [1.0, 9, 1, 9], [0.0, 0, 1, 0])
    grid = length.length_grid(
        pd.concat([a, b]), context_edges=[0, 50, 100], response_edges=[0, 50, 100], min_n=1
    )
    assert len(grid) == 4  # 2 context bins x 2 response bins, accuracy only
    cell = grid.iloc[0]  # short context, short response: judge a 1, judge b 0 -> mean 0.5
    assert cell["value"] == 0.5 and cell["n"] == 1 and cell["n_judges"] == 2
    masked = length.length_grid(
        pd.concat([a, b]), context_edges=[0, 50, 100], response_edges=[0, 50, 100], min_n=2
    )
    assert masked["masked"].all()  # one item per cell < 2
    fig = length.plots.grid_heatmaps(grid)
    assert len(fig.axes) == 2  # one heatmap + its colorbar


def test_context_trend_planted_and_null(rng):
    n = 3000
    ctx = 2 ** rng.uniform(4, 10, n)
    eta = 2.0 - 0.5 * np.log2(ctx)  # log-odds fall 0.5 per doubling
    falling = table("fall", ctx, np.full(n, 50.0), (rng.random(n) < 1 / (1 + np.exp(-eta))) * 1.0)
    # null: every context length once right and once wrong -> slope exactly 0
    flat = table("flat", np.repeat(ctx[:500], 2), np.full(1000, 50.0), np.tile([1.0, 0.0], 500))
    out = length.context_trend(pd.concat([falling, flat])).set_index("judge")
    assert out.loc["fall", "coef"] == pytest.approx(-0.5, abs=0.12)
    assert out.loc["fall", "trend"] == "falls"
    assert out.loc["flat", "coef"] == pytest.approx(0.0, abs=1e-6)
    assert out.loc["flat", "trend"] == "no clear trend"


def test_missing_columns_raise_keyerror():
    t = table("j", [10.0], [5.0], [1.0]).drop(columns=["len_context"])
    with pytest.raises(KeyError):
        length.accuracy_by_context(t)
    with pytest.raises(KeyError):
        length.context_trend(t)
