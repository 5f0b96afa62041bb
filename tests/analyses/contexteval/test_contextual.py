"""Contextualized Evaluations verdicts, agreement variants, win rates and rank flips."""

import json

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.contexteval import contextual as ce
from judgelab.analyses.contexteval import plots as pc
from judgelab.core import schema
from judgelab.data import catalog

PAIR = "a_vs_b"


def _out(position: str) -> str:
    return f'**output: {{"judgement": "{position}"}}** Justification: because.'


def _judgments(rows):
    """rows: (setting, example, judge, order, sample, output)."""
    return schema.new_judgments(
        [
            {
                "benchmark": "ce",
                "split": s,
                "item_id": f"{PAIR}/{e}",
                "judge": j,
                "order": o,
                "sample": k,
                "output": out,
                "valid": True,
            }
            for s, e, j, o, k, out in rows
        ]
    )


def _examples(labels_by_example, setting="NoCtxGen-NoCtxEval", source="autorater"):
    """Judgment rows whose candidate verdicts are the given labels (order 0: R1 = C1)."""
    pos = {"C1": _out("Response 1"), "C2": _out("Response 2"), "Tie": _out("Tie")}
    rows = []
    for e, labels in enumerate(labels_by_example):
        for k, lab in enumerate(labels):
            judge = "human" if source == "human" else f"j{k}"
            out = {"C1": "Response 1", "C2": "Response 2", "Tie": "Tie"}[lab]
            rows.append(
                (
                    setting,
                    e,
                    judge,
                    0,
                    k if source == "human" else 0,
                    out if source == "human" else pos[lab],
                )
            )
    return rows


def test_verdict_mapping_follows_the_repo():
    j = _judgments(
        [
            # order 0 (rand_choice 1): Response 1 is candidate 1.
            ("gen_wo_ctx_eval_wo_ctx", 0, "j0", 0, 0, _out("Response 1")),
            # order 1 (rand_choice 2): Response 1 is candidate 2.
            ("gen_wo_ctx_eval_wo_ctx", 0, "j1", 1, 0, _out("Response 1")),
            # no dict: substring fallback, "Response 1" wins when both appear.
            ("gen_wo_ctx_eval_wo_ctx", 0, "j2", 0, 0, "Response 2 is fine but Response 1 wins"),
            ("gen_wo_ctx_eval_wo_ctx", 0, "j3", 0, 0, "No response. Finish Reason: SAFETY"),
            # humans: anything but exactly Response 1/2 is a Tie, never Invalid.
            ("gen_wo_ctx_eval_w_ctx", 1, "human", 1, 0, "Response 2"),
            ("gen_wo_ctx_eval_w_ctx", 1, "human", 0, 1, "Both are bad"),
        ]
    )
    v = ce.verdict_table(j)
    assert v["verdict"].tolist() == ["C1", "C2", "C1", "Invalid", "C1", "Tie"]
    assert v["verdict_agg"].tolist() == ["C1", "C2", "C1", "Tie", "C1", "Tie"]
    assert v["setting"].tolist()[-1] == "NoCtxGen-CtxEval"
    assert v["source"].tolist() == ["autorater"] * 4 + ["human"] * 2
    dropped = ce.verdict_table(j, invalid_as="drop")
    assert dropped["verdict_agg"].isna().tolist() == [False, False, False, True, False, False]


def test_plurality_tie_break_by_judge_order():
    # 2-2-1 split: C2 occurs first in judge order, so the repo (Counter.most_common) picks C2.
    assert ce.plurality(["C2", "C1", "C1", "C2", "Tie"]) == ("C2", 2)
    assert ce.plurality(["C1", "C2", "C2", "C1", "Tie"]) == ("C1", 2)
    assert ce.plurality(["C1", "Tie", "C2"], tie_break="prefer_tie") == ("Tie", 1)


def test_panel_order_decides_the_plurality():
    # The panel lists j1 before j0: labels in judge order are [C2, C1] -> plurality C2 (1/2).
    rows = [
        ("gen_wo_ctx_eval_wo_ctx", 0, "j0", 0, 0, _out("Response 1")),
        ("gen_wo_ctx_eval_wo_ctx", 0, "j1", 0, 0, _out("Response 2")),
    ]
    v = ce.verdict_table(_judgments(rows), panels={PAIR: ("j1", "j0")})
    ex = ce.example_table(v)
    assert ex.loc[0, "plurality_label"] == "C2" and ex.loc[0, "plurality_share"] == 0.5
    assert ex.loc[0, "majority_label"] is None  # 1/2 is not > 0.5


def _agreement_frame():
    # Baseline: 3 examples with 3 humans each: [C1 C1 C1] share 1; [C1 C2 Tie] share 1/3
    # (plurality C1, first occurrence); [Tie Tie C2] share 2/3, plurality Tie.
    base = _examples(
        [["C1", "C1", "C1"], ["C1", "C2", "Tie"], ["Tie", "Tie", "C2"]], source="human"
    )
    # Context: [C2 C2 C1] 2/3; [C1 C1 C1] 1; [Tie Tie Tie] 1, plurality Tie.
    ctx = _examples(
        [["C2", "C2", "C1"], ["C1", "C1", "C1"], ["Tie", "Tie", "Tie"]],
        setting="CtxGen-CtxEval",
        source="human",
    )
    return ce.example_table(ce.verdict_table(_judgments(base + ctx)))


def test_agreement_variants_hand_computed_with_ties():
    ex = _agreement_frame()
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
    assert ag.loc[(c, "A_all"), "test"].startswith("ttest_rel")


def test_agreement_without_ties_all_variants_coincide():
    # No Tie anywhere: [C1 C1 C2] 2/3 and [C2 C2 C2] 1 -> every variant = 5/6.
    ex = ce.example_table(
        ce.verdict_table(
            _judgments(_examples([["C1", "C1", "C2"], ["C2", "C2", "C2"]], source="human"))
        )
    )
    ag = ce.agreement(ex, n_boot=50)
    assert np.allclose(ag["agreement"], 100 * 5 / 6)
    assert ag["delta"].isna().all()  # the baseline alone: no deltas


def test_rank_flip_worked_example():
    # Baseline (5 autoraters): majorities C2, C2, C1, and one 2-2-1 example without a
    # majority -> |M| = 3, WR = (33.3, 66.7, 0), leader b. Context: C1, C1, C2 -> leader a.
    base = _examples(
        [
            ["C2"] * 5,
            ["C2", "C2", "C2", "C1", "Tie"],
            ["C1"] * 4 + ["C2"],
            ["C1", "C1", "C2", "C2", "Tie"],
        ]
    )
    ctx = _examples(
        [["C1"] * 5, ["C1", "C1", "C1", "Tie", "C2"], ["C2"] * 5], setting="NoCtxGen-CtxEval"
    )
    ex = ce.example_table(ce.verdict_table(_judgments(base + ctx)))
    fl = ce.rank_flips(ex, n_boot=200).set_index("setting")
    b, c = fl.loc["NoCtxGen-NoCtxEval"], fl.loc["NoCtxGen-CtxEval"]
    assert (b["n_majority"], b["n_excluded"]) == (3, 1)
    assert b["wr_c1"] == pytest.approx(100 / 3) and b["wr_c2"] == pytest.approx(200 / 3)
    assert b["leader"] == "b" and c["leader"] == "a"
    assert not b["flipped"] and c["flipped"]
    # margin: baseline 33.3 - 66.7 = -33.3, context +33.3 -> delta +66.7 points.
    assert c["delta_margin"] == pytest.approx(200 / 3)
    assert 0 <= c["p_flip"] <= 1
    lead = ce.leaders_by_source(fl.reset_index())
    assert lead["leader_autorater"].tolist() == ["b", "a"]


def test_constraint_subset_uses_mean_satisfied_difference():
    ex = _agreement_frame()
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


def test_followup_counts_skip_annotators_with_missing_labels():
    recs = [
        {
            "example_id": "x_rep0",
            "setting": "gen_w_ctx_eval_w_ctx",
            "follow_up_qas": [{"qa": "q", "satisfied_1": True, "satisfied_2": False}] * 3,
        },
        {
            "example_id": "x_rep1",
            "setting": "gen_w_ctx_eval_w_ctx",
            "follow_up_qas": [{"qa": "q", "satisfied_1": None, "satisfied_2": False}],
        },
    ]
    fu = ce.followup_counts(recs, pair=PAIR)
    assert fu[["example_key", "rep", "diff"]].values.tolist() == [[f"{PAIR}/human/x", 0, 3]]


def test_justification_shares_hand_computed():
    coded = pd.DataFrame(
        {
            "source": "human",
            "setting": ["NoCtxGen-NoCtxEval"] * 4 + ["CtxGen-CtxEval"] * 2,
            "codes": ["Codes: 2", "Codes: 1, 2", "Codes: 1", "??", "Codes: 1", "Codes: 1"],
        }
    )
    sh = ce.justification_shares(coded).set_index("setting")
    # baseline: surface in 2 of 4 = 50%, content 2 of 4, both 1 of 4, unparseable 1 of 4.
    assert sh.loc[
        "NoCtxGen-NoCtxEval", ["pct_surface", "pct_content", "pct_both", "pct_unparseable"]
    ].tolist() == [50, 50, 25, 25]
    assert sh.loc["CtxGen-CtxEval", "delta_surface"] == pytest.approx(-50)
    # share of code mentions: 2 surface + 2 content mentions -> 50 / 50.
    m = ce.justification_shares(coded, normalization="share_of_code_mentions")
    assert m["pct_surface"].iloc[0] == 50


def test_missing_columns_raise():
    with pytest.raises(KeyError, match="output"):
        ce.verdict_table(pd.DataFrame({"split": [], "item_id": []}))
    with pytest.raises(KeyError, match="codes"):
        ce.justification_shares(pd.DataFrame({"source": [], "setting": []}))


def test_sample_set_runs_end_to_end_and_plots():
    loaded = catalog.load_source("sample:contexteval_pairwise")
    assert all(json.loads(m)["illustrative"] for m in loaded.items["meta"])
    ex = ce.example_table(ce.verdict_table(loaded.judgments, loaded.items))
    # 3 pairs x 3 settings x (14 autorater + 8 human examples)
    assert len(ex) == 3 * 3 * (14 + 8)
    assert set(ex.loc[ex["source"] == "autorater", "n_judges"]) == {5}
    flips = ce.rank_flips(ex, n_boot=50)
    ax = pc.win_rate_bars(flips)
    assert len(ax.figure.axes) == 6 and "win rate" in ax.get_ylabel()
    cross = ce.cross_source_agreement(ex)
    assert (cross["n_matched"] > 0).all()
