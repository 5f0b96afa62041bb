"""Strategy comparisons paired over clustered items, Holm and missing-as-error (issue 20)."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import prompting
from judgelab.analyses.prompting import paired
from judgelab.core import inference
from judgelab.simulate import faithfulness as sim


def _cmp(seed: int, **kwargs):
    s = sim.prompt_strategies(np.random.default_rng(seed), effects={"CoT": 0.6, "Reference": 0.0})
    return s, prompting.strategy_comparison(
        s.judgments, baseline="Vanilla", metric_names=("ca",), n_boot=300, **kwargs
    )


def test_strategy_comparison_clusters_and_adjusts():
    s, cmp = _cmp(1)
    row = cmp[(cmp["strategy"] == "CoT") & (cmp["split"] == "test")].iloc[0]
    assert row["n_clusters"] == 50 and row["n_common"] == 250
    assert row["ci_low"] <= s.truth["diff_ca:CoT"] <= row["ci_high"]
    cell = cmp[cmp["split"] == "test"]
    assert cell["n_tests"].eq(2).all()  # Holm over the two strategies compared
    assert np.allclose(cell["p_holm"], inference.adjust(cell["p_value"].to_numpy(), "holm"))
    _, legacy = _cmp(1, cluster=None, test="mcnemar")
    old = legacy[(legacy["strategy"] == "CoT") & (legacy["split"] == "test")].iloc[0]
    assert old["n_clusters"] == 250 and old["p_value"] == old["p_mcnemar"]
    assert old["diff"] == pytest.approx(row["diff"])


def test_missing_as_error_rows_when_missingness_differs():
    s = sim.prompt_strategies(np.random.default_rng(2), effects={"CoT": 0.0})
    j = s.judgments
    drop = (
        (j["prompt"] == "CoT") & (j["order"] == 1) & j["item_id"].isin(j["item_id"].unique()[:20])
    )
    cmp = prompting.strategy_comparison(
        j[~drop], baseline="Vanilla", metric_names=("ca",), n_boot=200
    )
    test = cmp[cmp["split"] == "test"].set_index("variant")
    assert test.loc["complete_pairs", "n_common"] == 230
    assert test.loc["missing_as_error", "n_common"] == 250
    assert test.loc["missing_as_error", "n_missing_strategy"] == 20
    assert test.loc["missing_as_error", "diff"] < test.loc["complete_pairs", "diff"]


def test_pooled_row_resamples_within_splits():
    x = np.array([1.0, 1, 0, 0, 1, 1])
    y = np.array([0.0, 1, 0, 1, 0, 1])
    res = paired.paired_difference(
        x,
        y,
        np.array([0, 0, 1, 1, 2, 2]),
        strata=np.array([0, 0, 0, 0, 1, 1]),
        n_boot=200,
        rng=np.random.default_rng(0),
    )
    assert res["diff"] == pytest.approx(1 / 6) and res["n_clusters"] == 3
    assert res["only_strategy"] == 2 and res["only_baseline"] == 1
