"""Agreement variants (Table 4), kappa, human vs autorater labels, Table 5's subset."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import contexteval as ce


def test_agreement_variants_hand_computed_with_ties(agreement_examples):
    ex = agreement_examples
    ag = ce.agreement(ex, pairing="example_key", n_boot=50).set_index(["setting", "variant"])
    b = "NoCtxGen-NoCtxEval"
    # A_all = mean plurality share over all examples = (1 + 1/3 + 2/3) / 3 = 2/3.
    assert ag.loc[(b, "A_all"), "agreement"] == pytest.approx(100 * 2 / 3)
    # A_nontie drops the example whose plurality is Tie: (1 + 1/3) / 2 = 2/3 as well.
    assert ag.loc[(b, "A_nontie"), "agreement"] == pytest.approx(100 * 2 / 3)
    assert ag.loc[(b, "A_nontie"), "n"] == 2
    # A_excl_tie_votes drops Tie votes: [C1 C1 C1] 1; [C1 C2] 1/2; [C2] 1 -> 2.5 / 3.
    assert ag.loc[(b, "A_excl_tie_votes"), "agreement"] == pytest.approx(100 * 2.5 / 3)
    c = "CtxGen-CtxEval"
    # Context A_all = (2/3 + 1 + 1) / 3 = 8/9; delta = 8/9 - 2/3 = 2/9 (22.2 points).
    assert ag.loc[(c, "A_all"), "agreement"] == pytest.approx(100 * 8 / 9)
    assert ag.loc[(c, "A_all"), "delta"] == pytest.approx(100 * 2 / 9)
    # Context A_nontie: the all-Tie example goes: (2/3 + 1) / 2 = 5/6.
    assert ag.loc[(c, "A_nontie"), "agreement"] == pytest.approx(100 * 5 / 6)
    # A_excl_tie_votes: the all-Tie example has no vote left and is dropped: (2/3 + 1) / 2.
    assert ag.loc[(c, "A_excl_tie_votes"), "n"] == 2
    assert "excluding ties" in ag.loc[(c, "A_all"), "paper_label"]
    assert "including ties" in ag.loc[(c, "A_nontie"), "paper_label"]
    # The default test is the paired wild cluster bootstrap; the repo's paired t stays beside it.
    assert ag.loc[(c, "A_all"), "test"].startswith("wild cluster bootstrap")
    assert ag.loc[(c, "A_all"), "delta_method"].startswith("wild cluster bootstrap")
    assert ag.loc[(c, "A_all"), "ttest"].startswith("ttest_rel")
    legacy = ce.agreement(ex, pairing="example_key", test="ttest", n_boot=50)
    assert legacy.set_index(["setting", "variant"]).loc[(c, "A_all"), "test"].startswith("ttest")


def test_agreement_without_ties_all_variants_coincide(judgments, example_rows):
    # No Tie anywhere: [C1 C1 C2] 2/3 and [C2 C2 C2] 1 -> every variant = 5/6.
    rows = example_rows([["C1", "C1", "C2"], ["C2", "C2", "C2"]], source="human")
    ex = ce.example_table(ce.verdict_table(judgments(rows)))
    ag = ce.agreement(ex, n_boot=50)
    assert np.allclose(ag["agreement"], 100 * 5 / 6)
    assert ag["delta"].isna().all()  # the baseline alone: no deltas


def test_cross_source_kappa_hand_computed():
    # Majority labels on four shared queries: human C1 C1 C2 Tie, autorater C1 C2 C2 Tie.
    # p_o = 3/4; p_e = .5 x .25 + .25 x .5 + .25 x .25 = 5/16; kappa = (12/16 - 5/16) / (11/16).
    human, auto = ["C1", "C1", "C2", "Tie"], ["C1", "C2", "C2", "Tie"]
    examples = pd.DataFrame(
        {
            "source": ["human"] * 4 + ["autorater"] * 4,
            "pair": "a_vs_b",
            "setting": "CtxGen-CtxEval",
            "query": ["q1", "q2", "q3", "q4"] * 2,
            "majority_label": human + auto,
        }
    )
    cross = ce.cross_source_agreement(examples)
    assert cross[["n_matched", "agreement"]].values.tolist() == [[4, 75.0]]
    assert cross["kappa"].iloc[0] == pytest.approx(7 / 11)


def test_constraint_subset_uses_mean_satisfied_difference(agreement_examples):
    ex = agreement_examples
    keys = ex[ex["setting"] == "CtxGen-CtxEval"]["example_key"].tolist()
    # Example 0: diffs +2, +1, 0 -> mean 1 -> in; example 1: +1, -1, 0 -> mean 0 -> out;
    # example 2 has no labels -> out. Subset A_all = example 0's share = 2/3.
    fu = pd.DataFrame(
        {
            "setting": "CtxGen-CtxEval",
            "example_key": [keys[0]] * 3 + [keys[1]] * 3,
            "diff": [2, 1, 0, 1, -1, 0],
        }
    )
    t5 = ce.constraint_subset_agreement(ex, fu)
    assert t5["n_subset"].tolist() == [1] and t5["n_with_labels"].tolist() == [2]
    assert t5["agreement"].iloc[0] == pytest.approx(100 * 2 / 3)
    # against the human baseline A_all of 2/3: delta 0.
    assert t5["delta_vs_human_baseline"].iloc[0] == pytest.approx(0.0)
    # the loaders keep the repo's setting ids: the same rows under them give the same table
    repo_ids = ce.constraint_subset_agreement(ex, fu.assign(setting="gen_w_ctx_eval_w_ctx"))
    pd.testing.assert_frame_equal(repo_ids, t5)
