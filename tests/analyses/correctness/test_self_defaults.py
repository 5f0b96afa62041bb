"""Issue 20 fixes of the correctness family, on planted truth (`simulate.correctness`)."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import correctness
from judgelab.simulate import correctness as sc
from judgelab.simulate.base import Design


@pytest.fixture(scope="module")
def family_only():
    """The judge is lenient with its family's OTHER model only: model-level self shows none."""
    sim = sc.correctness_sim(
        np.random.default_rng(11), design=Design(n_clusters=250, per_cluster=8), family_fpr=1.5
    )
    return sim, correctness.correctness_table(sim.items, sim.judgments)


def test_self_is_the_same_model_by_default_family_is_an_option(family_only):
    sim, t = family_only
    model = correctness.mark_self(t, judge_candidate=sim.params["judge_candidate"])
    assert set(model.loc[model["candidate_is_judge"].astype(bool), "candidate_model"]) == {
        sc.JUDGE_MODEL
    }
    fam = correctness.mark_self(
        t,
        judge_family=sim.params["judge_family"],
        candidate_family=sim.params["candidate_family"],
        level="family",
    )
    sv_m = correctness.self_vs_others(model, metrics=("fpr",), n_boot=300).iloc[0]
    sv_f = correctness.self_vs_others(fam, metrics=("fpr",), n_boot=300).iloc[0]
    # model level: its own model has no shift, others include the lenient family member
    assert sv_m["diff_low"] <= sim.truth["fpr_diff"] <= sv_m["diff_high"]
    assert sv_m["diff"] < 0 < sv_f["diff"]
    assert sv_f["diff_low"] <= sim.truth["fpr_family_diff"] <= sv_f["diff_high"]
    assert sv_f["self_level"] == "family" and sv_m["self_level"] == "model"


def test_a_map_that_matches_nothing_is_an_error(family_only):
    _, t = family_only
    with pytest.raises(ValueError, match="judge_candidate matches nothing"):
        correctness.mark_self(t, judge_candidate={"alpha.judge": "alpha-70B"})  # misspelt
    with pytest.raises(ValueError, match="candidate_family matches nothing.*llama2-"):
        correctness.mark_self(
            t, judge_family={"alpha.judge": "a"}, candidate_family={"llama2-*": "a"},
            level="family",
        )  # fmt: skip
    with pytest.raises(ValueError, match="needs judge_candidate"):
        correctness.mark_self(t)
    partly = correctness.check_maps(t, candidate_family={"alpha-*": "a", "nope-*": "b"})
    assert partly == {"candidate_family": ["nope-*"]}


def test_cluster_default_is_the_items_cluster_none_is_legacy(family_only):
    sim, t = family_only
    assert t["cluster"].nunique() == 250  # from the items' `cluster` (their question cluster)
    clustered = correctness.correctness_rates(t, n_boot=400).set_index("metric")
    legacy = correctness.correctness_rates(t, cluster=None, n_boot=400).set_index("metric")
    assert clustered.loc["agreement", "n_clusters"] == 250
    # every graded answer its own unit (invalid verdicts are out of the denominator)
    assert legacy.loc["agreement", "n_clusters"] == t["verdict"].notna().sum() > 1800
    width = lambda r: r["ci_high"] - r["ci_low"]  # noqa: E731
    assert width(clustered.loc["kappa"]) > 1.15 * width(legacy.loc["kappa"])
    assert clustered["method"].str.startswith("wild cluster bootstrap").all()
    # a hand-made table without `cluster` falls back to the question
    no_col = correctness.correctness_rates(t.drop(columns="cluster"), n_boot=50)
    graded = t.loc[t["verdict"].notna(), "question_uid"].nunique()
    assert no_col.set_index("metric").loc["agreement", "n_clusters"] == graded


def test_answered_gap_interval_test_and_subset_rates():
    sim = sc.correctness_sim(
        np.random.default_rng(5), design=Design(n_clusters=200, per_cluster=8), answered_shift=1.0
    )
    t = correctness.correctness_table(sim.items, sim.judgments)
    marked = correctness.mark_answered(t, judge_candidate=sim.params["judge_candidate"])
    gap = correctness.answered_gap(marked, n_boot=400, missing_as_error=False)
    k = gap.set_index("metric")
    assert k.loc["kappa", "diff_low"] <= sim.truth["kappa_gap"] <= k.loc["kappa", "diff_high"]
    assert k.loc["kappa", "p_value"] < 0.01 and not k["declined"].any()
    assert "kappa, joined with a delete-one-cluster jackknife" in k.loc["kappa", "method"]
    boot = correctness.answered_gap(marked, n_boot=400, missing_as_error=False,
                                    inference="bootstrap").set_index("metric")  # fmt: skip
    assert boot.loc["kappa", "n_boot_p"] > 400  # the earlier default: adaptive p
    assert {"fpr", "fnr"} <= set(k.index) and (k["n_correctly"] > 0).all()
    split = marked[marked["judge_answered"].notna()]  # questions its own model answered
    assert k.loc["fpr", "n_correctly"] + k.loc["fpr", "n_incorrectly"] == int(
        ((split["human"] == "Incorrect") & split["verdict"].notna()).sum()
    )


def test_missing_as_error_rows_beside_exclude():
    sim = sc.correctness_sim(np.random.default_rng(2), invalid_self_rate=0.3)
    t = correctness.correctness_table(sim.items, sim.judgments)
    marked = correctness.mark_self(t, judge_candidate=sim.params["judge_candidate"])
    sv = correctness.self_vs_others(marked, metrics=("fpr",), n_boot=200, min_own=1)
    assert sv["invalid_policy"].tolist() == ["exclude", "error"]
    assert sv["n_invalid_self"].iloc[0] > sv["n_invalid_others"].iloc[0] / 4
    same = sc.correctness_sim(np.random.default_rng(2), invalid_rate=0.0, invalid_wrong_rate=0.0)
    t0 = correctness.correctness_table(same.items, same.judgments)
    m0 = correctness.mark_self(t0, judge_candidate=same.params["judge_candidate"])
    assert correctness.self_vs_others(m0, n_boot=50)["invalid_policy"].eq("exclude").all()


def test_empty_maps_give_empty_tables_not_errors(table_of):
    t = correctness.mark_answered(
        table_of([("J", "q", "m", "Correct", "Correct")]), judge_candidate={}
    )
    assert correctness.kappa_by_answered(t, n_boot=10).empty
    out = correctness.answered_gap(t, n_boot=10)
    assert out.empty and "p_value" in out.columns
    assert isinstance(out, pd.DataFrame)
