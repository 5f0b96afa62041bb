"""Logistic regression of the judge's choice on length; OLS of a score on length."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length
from judgelab.errors import ChoiceError


def simulate(rng, n, length_effect, gold_effect=1.5, intercept=0.2):
    order = rng.integers(0, 2, n)
    diff = rng.normal(0, 50, n)  # len_pos - len_neg
    first_pos = order == 0
    d_first = np.where(first_pos, diff, -diff)
    z = d_first / d_first.std(ddof=1)
    eta = intercept + length_effect * z + gold_effect * np.where(first_pos, 0.5, -0.5)
    chose_first = rng.random(n) < 1 / (1 + np.exp(-eta))
    chosen = np.where(chose_first == first_pos, "pos", "neg")
    return pd.DataFrame(
        {
            "judge": "sim",
            "benchmark": "b",
            "split": "s",
            "item_id": np.arange(n).astype(str),
            "order": order,
            "chosen": chosen,
            "len_pos": 200 + diff,
            "len_neg": 200.0,
            "correct": chosen == "pos",
            "len_unit": "words",
        }
    )


def test_length_regression_recovers_planted_effect(rng):
    reg = length.length_regression(simulate(rng, 4000, 1.0), transform="linear")
    reg = reg.set_index("term")
    assert 0.8 < reg.loc["length", "coef"] < 1.2  # planted 1.0 per SD
    assert reg.loc["length", "ci_low"] > 0 and reg.loc["length", "p_value"] < 1e-6
    assert 1.2 < reg.loc["gold", "coef"] < 1.8  # planted 1.5
    assert reg.loc["length", "x"] == "response shown first (A)"


def test_length_regression_finds_no_effect_when_none_planted(rng):
    reg = length.length_regression(simulate(rng, 4000, 0.0)).set_index("term")
    assert reg.loc["length", "ci_low"] < 0 < reg.loc["length", "ci_high"]
    assert abs(reg.loc["length", "coef"]) < 0.15


def test_length_regression_single_order_uses_pos_slot(rng):
    sim = simulate(rng, 2000, 1.0)
    reg = length.length_regression(sim[sim["order"] == 0])
    assert set(reg["term"]) == {"intercept", "length"}  # gold is constant: no gold term
    assert reg["x"].iloc[0].startswith("pos slot")


def test_score_length_regression_planted(rng):
    n = 1500
    lens = rng.uniform(50, 500, n)
    model = rng.choice(["m1", "m2"], n)
    score = 3 + 0.01 * lens + np.where(model == "m2", 1.0, 0.0) + rng.normal(0, 1, n)
    table = pd.DataFrame(
        {
            "judge": "g",
            "split": model,
            "item_id": np.arange(n).astype(str),
            "score": score,
            "len_response": lens,
            "len_unit": "words",
        }
    )
    out = length.score_length_regression(table).iloc[0]
    assert out["coef_per_100"] == pytest.approx(1.0, abs=0.15)  # 0.01 points per unit


def test_design_length_standardizes_and_checks_transform():
    z, sd = length.design_length(np.array([-2.0, 0.0, 2.0]), "linear")
    assert sd == pytest.approx(2.0) and z.tolist() == [-1.0, 0.0, 1.0]
    t, _ = length.design_length(np.array([-2.0, 0.0, 2.0]), "tanh")
    assert t == pytest.approx(np.tanh([-1.0, 0.0, 1.0]))
    flat, sd = length.design_length(np.array([3.0, 3.0]), "linear")
    assert sd == 0.0 and flat.tolist() == [0.0, 0.0]
    with pytest.raises(ChoiceError, match="transform must be one of"):
        length.design_length(np.array([1.0, 2.0]), "log")


def test_i34_3_score_reason_says_why_without_pointwise_scores(make_pairwise):
    # pairwise judgments only (03 on LLMBar): every score NaN, three empty tables and a plot
    items, judgments = make_pairwise([("1", 10, 5, "pos", "pos"), ("2", 5, 10, "neg", "pos")])
    table = length.item_table(items, judgments)
    assert table["score"].isna().all()
    assert "no pointwise scores" in length.score_reason(table)
    scored = table.assign(score=[7.0] + [float("nan")] * (len(table) - 1))
    assert length.score_reason(scored) is None


def test_point_fit_equals_statsmodels_logit_and_checks_rank_where_the_gram_is_short(
    monkeypatch,
):
    """The design's rank is checked on its Gram matrix; statsmodels' own check where short."""
    import statsmodels.api as sm

    from judgelab.analyses.length import glm

    rng = np.random.default_rng(5)
    x = rng.normal(size=400)
    X = pd.DataFrame({"const": 1.0, "x": x, "z": rng.normal(size=400)})
    y = (rng.random(400) < 1 / (1 + np.exp(-0.5 * x))).astype(float)
    fit, note = glm.point_fit(y, X)
    want = sm.Logit(y, X.to_numpy()).fit(method="newton", disp=0)
    np.testing.assert_allclose(fit.params, want.params, rtol=1e-10)
    np.testing.assert_allclose(fit.mu, want.predict(), rtol=1e-10)
    assert note == ""
    checks = []
    real = sm.Logit

    def spy(endog, exog, check_rank=True):
        checks.append(check_rank)
        return real(endog, exog, check_rank=check_rank)

    from statsmodels.discrete import discrete_model

    monkeypatch.setattr(discrete_model, "Logit", spy)
    glm.point_fit(y, X)
    glm.point_fit(y, X.assign(z=2 * x))  # rank 2 of 3
    assert checks == [False, True]


@pytest.mark.parametrize("kind", ["separated", "quasi"])
def test_point_fit_flags_separation_without_touching_the_warnings_state(kind):
    """Perfect (or quasi-) separation is read from the fit, not from statsmodels' warning.

    The Newton fit runs in threads (`core.threads.ordered_map`), where the warnings module's
    state must not be touched; separation still goes to the GLM, whose note says so.
    """
    import warnings

    from judgelab.analyses.length import glm

    x = np.linspace(-3, 3, 200)
    y = (x > 0).astype(float)
    if kind == "quasi":
        y[100] = 1.0 - y[100]  # one row on the wrong side at the boundary: still separated
    X = pd.DataFrame({"const": 1.0, "x": x})
    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit, note = glm.point_fit(y, X)
        rows, term_note = glm.term_inference(y, X, np.arange(200) // 4, terms=["x"])
    assert "separation" in note and "separation" in term_note
    assert list(warnings.filters) == before
    assert rows[0]["term"] == "x"
    del caught


def test_point_fit_takes_an_array_design_with_its_names_and_refuses_one_without():
    from judgelab.analyses.length import glm

    rng = np.random.default_rng(2)
    X = pd.DataFrame({"const": 1.0, "x": rng.normal(size=300)})
    y = (rng.random(300) < 1 / (1 + np.exp(-X["x"].to_numpy()))).astype(float)
    by_frame, _ = glm.point_fit(y, X)
    Xv = np.array(X.to_numpy(), order="F")  # writable, as a fit's own design
    by_array, _ = glm.point_fit(y, Xv, ["const", "x"])
    np.testing.assert_array_equal(by_frame.params, by_array.params)
    rows_frame, _ = glm.term_inference(y, X, np.arange(300) // 3, terms=["x"])
    kept = Xv.copy()
    rows_array, _ = glm.term_inference(
        y, Xv, np.arange(300) // 3, terms=["x"], columns=["const", "x"], overwrite=True
    )
    assert rows_frame == rows_array
    assert not np.array_equal(Xv, kept)  # overwritten as allowed (its √w·X)
    with pytest.raises(ValueError, match="column names"):
        glm.point_fit(y, Xv)


def test_default_fit_leaves_no_cycles_and_a_large_glm_fit_is_collected(monkeypatch):
    """The Logit path frees its data by reference count; a large GLM fit is collected at once.

    A full collection costs ~0.1 s in a kernel with pandas loaded (15 of them in notebook 03),
    so it runs only after a GLM fit, whose statsmodels results are reference cycles.
    """
    import gc

    from judgelab.analyses.length import glm

    rng = np.random.default_rng(6)
    n = 2_000
    x = rng.normal(size=n)
    X = pd.DataFrame({"const": 1.0, "x": x})
    y = (rng.random(n) < 1 / (1 + np.exp(-0.5 * x))).astype(float)
    codes = np.arange(n) // 10
    gc.collect()
    glm.term_inference(y, X, codes, terms=["x"], wild_mode="none")
    assert gc.collect() == 0  # nothing left for a collection to find
    collected = []
    monkeypatch.setattr(glm, "LARGE_FIT", n)
    monkeypatch.setattr(glm.gc, "collect", lambda: collected.append(1))
    glm.term_inference(y, X, codes, terms=["x"], wild_mode="none")
    assert collected == []
    glm.term_inference(y, X, codes, terms=["x"], wild_mode="none", inference="cluster")
    assert collected == [1]  # the CR1 GLM fit beside it
    glm.point_fit(y / 2, X)  # fractions: the GLM
    assert collected == [1, 1]
