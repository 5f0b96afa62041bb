"""Issue 20 fixes of the length family, on planted truth (`judgelab.simulate.length`).

Cluster-robust / cluster-bootstrap defaults (the legacy item-level choice stays reachable
with `cluster=None`), the bounded log-ratio length term with linear and tanh sensitivity
rows, and adaptive bootstrap p-values.
"""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length
from judgelab.simulate import length as sim
from judgelab.simulate import length_context as sim_ctx
from judgelab.simulate.base import Design

CLUSTERED = Design(n_clusters=40, per_cluster=10, icc=0.5)


@pytest.fixture(scope="module")
def docs():
    s = sim_ctx.context_lengths(np.random.default_rng(11), CLUSTERED)
    return length.item_table(s.items, s.judgments)


@pytest.fixture(scope="module")
def pairs():
    s = sim.pairwise_lengths(np.random.default_rng(12), CLUSTERED, length_kind="t")
    return length.pairwise_verdicts(s.items, s.judgments)


def test_context_trend_clusters_by_document_by_default(docs):
    new = length.context_trend(docs).iloc[0]
    old = length.context_trend(docs, cluster=None).iloc[0]
    assert new["se"] == "CR2" and new["n_clusters"] == 40
    assert old["se"] == "HC0" and old["n_clusters"] == old["n"]  # items (valid judgments)
    assert new["coef"] == pytest.approx(old["coef"])  # same fit, other errors
    # ten items share one context length: the honest interval is much wider
    assert (new["ci_high"] - new["ci_low"]) > 1.4 * (old["ci_high"] - old["ci_low"])


def test_accuracy_bins_resample_documents(docs):
    kw = dict(edges=[0, 50, 100], n_boot=400)
    new = length.accuracy_by_context(docs, **kw).query("metric == 'accuracy'")
    old = length.accuracy_by_context(docs, cluster=None, **kw).query("metric == 'accuracy'")
    assert (new["n_clusters"] < new["n_items"]).all()
    assert (old["n_clusters"] == old["n_items"]).all()
    assert ((new["ci_high"] - new["ci_low"]) > (old["ci_high"] - old["ci_low"])).all()


def test_picks_longer_cluster_bootstrap_and_adaptive_test(pairs):
    new = length.picks_longer(pairs, n_boot=500).set_index("condition")
    old = length.picks_longer(pairs, n_boot=500, cluster=None).set_index("condition")
    assert new.loc["balanced", "n_clusters"] == 40
    assert new.loc["balanced", "value"] == pytest.approx(old.loc["balanced", "value"])
    assert 0.38 < new.loc["balanced", "value"] < 0.62  # null: no length bias planted
    assert new.loc["balanced", "p_value"] > 0.01
    assert new.loc["balanced", "n_boot_p"] >= 500
    assert np.isnan(new.loc["longer is better", "p_value"])  # only all / balanced tested
    # the judge's skill varies by question: the gold-conditioned rates are clustered
    width, old_width = new["ci_high"] - new["ci_low"], old["ci_high"] - old["ci_low"]
    assert width["longer is better"] > 1.2 * old_width["longer is better"]


def test_picks_longer_resolves_a_small_p():
    s = sim.pairwise_lengths(np.random.default_rng(13), Design(40, 5, 0.3), bias=1.5)
    v = length.pairwise_verdicts(s.items, s.judgments)
    kw = dict(conditions=("balanced",), n_boot=500)
    row = length.picks_longer(v, inference="bootstrap", **kw).iloc[0]
    assert row["n_boot_p"] > 500 and row["p_value"] < 0.01  # more resamples, or a bound
    wild = length.picks_longer(v, **kw).iloc[0]  # the default: the inverted wild test
    assert wild["p_value"] < 0.01 and not wild["p_bound"] and wild["ci_low"] > 0.5


def test_length_regression_bounded_term_by_default(pairs):
    reg = length.length_regression(pairs)
    assert set(reg["transform"]) == {"log_ratio"}
    assert set(reg["n_clusters"]) == {40}
    sens = length.length_sensitivity(pairs)
    assert sens["transform"].tolist() == ["log_ratio", "linear", "tanh"]
    assert (sens["term"] == "length").all() and sens["p_value"].notna().all()
    legacy = length.length_regression(pairs, transform="linear", cluster=None)
    assert legacy["n_clusters"].iloc[0] > 390  # items (a few have no decisive verdict)


def test_length_term_is_the_log2_ratio():
    term, _ = length.length_term(np.array([100.0, 1.0]), np.array([1.0, 1.0]), "log_ratio")
    assert term.tolist() == pytest.approx([np.log2(101 / 2), 0.0])


def test_lc_winrate_clusters_by_default():
    s = sim_ctx.lc_winrate(np.random.default_rng(14), CLUSTERED)
    v = length.pairwise_verdicts(s.items, s.judgments)
    new = length.length_controlled_winrate(v, by=("judge",), n_boot=400).iloc[0]
    old = length.length_controlled_winrate(v, by=("judge",), n_boot=400, cluster=None).iloc[0]
    assert new["n_clusters"] == 40 and old["n_clusters"] == old["n"]
    assert new["lc_winrate"] == pytest.approx(old["lc_winrate"])
    assert (new["lc_high"] - new["lc_low"]) > 1.3 * (old["lc_high"] - old["lc_low"])
    assert (new["raw_high"] - new["raw_low"]) > 1.3 * (old["raw_high"] - old["raw_low"])


def test_sensitivity_takes_a_known_regression_fitted_alike_and_refits_otherwise(
    pairs, monkeypatch
):
    from judgelab.analyses.length import regression

    want = length.length_sensitivity(pairs)
    reg = length.length_regression(pairs)  # wild "interval": the same p-values
    calls = []
    real = regression._regressions

    def counted(verdicts, by, transforms, cluster, **kw):
        calls.append(list(transforms))
        return real(verdicts, by, transforms, cluster, **kw)

    monkeypatch.setattr(regression, "_regressions", counted)
    got = length.length_sensitivity(pairs, known=[reg])
    pd.testing.assert_frame_equal(got, want)
    assert calls == [["linear", "tanh"]]
    calls.clear()
    other = length.length_regression(pairs, seed=3)  # other wild draws: not this one's row
    elsewhere = length.length_regression(pairs, cluster=None)
    again = length.length_sensitivity(pairs, known=[other, elsewhere, reg.copy()])
    pd.testing.assert_frame_equal(again, want)
    assert calls[-1] == ["linear", "tanh"]  # a copy keeps what it was fitted with
    assert length.length_sensitivity(pairs, known=[other])["p_value"].notna().all()
    assert calls[-1] == ["log_ratio", "linear", "tanh"]
