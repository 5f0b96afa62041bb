"""Ragas formulas (spec 004 §2.4), FaithBench pairs, preferences and human alignment (§2.5)."""

import json
import math

import pandas as pd
import pytest

from judgelab.analyses.faithfulness import plots as plots_faithfulness
from judgelab.analyses.faithfulness import ragas as rm
from judgelab.data import catalog

# ---------------------------------------------------------------- formulas on a hand-computed item

CONTEXT = "The mill closed in 1990. The town bought it in 1995. It is now a museum."
ANSWER = "The mill closed in 1990. Aliens bought it. It is now a museum."


def test_ragas_formulas_on_a_hand_computed_item():
    # F: 2 of 3 statements verified -> 2/3
    assert rm.faithfulness_score(2, 3) == pytest.approx(2 / 3)
    # AR: cosines 0.9, 0.6, 0.3 -> mean 0.6; one noncommittal answer zeroes it when asked
    assert rm.answer_relevance_score([0.9, 0.6, 0.3]) == pytest.approx(0.6)
    assert rm.answer_relevance_score([0.9, 0.6, 0.3], noncommittal=[0, 1, 0], zeroing=True) == 0
    assert rm.answer_relevance_score([-0.2, 0.4]) == pytest.approx(0.1)  # raw, may be negative
    assert math.isnan(rm.answer_relevance_score([]))
    # CR: 1 essential of 3 context sentences; capped at 1; empty context 0
    assert rm.context_relevance_score(1, 3) == pytest.approx(1 / 3)
    assert rm.context_relevance_score(5, 3) == 1.0
    assert rm.context_relevance_score(0, 0) == 0.0


def test_empty_statement_policy():
    assert math.isnan(rm.faithfulness_score(0, 0))
    assert rm.faithfulness_score(0, 0, empty_policy="zero") == 0.0
    assert rm.faithfulness_score(0, 0, empty_policy="one") == 1.0
    with pytest.raises(ValueError):
        rm.faithfulness_score(3, 2)
    with pytest.raises(ValueError, match="empty_policy"):
        rm.faithfulness_score(1, 2, empty_policy="drop")


def test_offline_decomposition_on_the_item():
    # statements: "The mill closed in 1990." -> {mill, closed, 1990} all in context (1.0)
    # "Aliens bought it." -> {aliens, bought}: bought only -> 1/2 = 0.5 >= 0.5 supported
    # "It is now a museum." -> {now, museum}: both -> 1.0
    assert rm.decompose_faithfulness(ANSWER, CONTEXT) == (3, 3, 1.0)
    # a stricter support threshold rejects the half-grounded statement: 2/3
    v, s, f = rm.decompose_faithfulness(ANSWER, CONTEXT, support=0.6)
    assert (v, s) == (2, 3) and f == pytest.approx(2 / 3)
    # CR: question {mill, close}; only sentence 1 holds "mill" (1/2 = 0.5) -> 1 of 3
    n, total, cr = rm.decompose_context_relevance("When did the mill close?", CONTEXT)
    assert (n, total) == (1, 3) and cr == pytest.approx(1 / 3)
    # AR stand-in: bag-of-words cosine; refusals zeroed
    assert rm.bow_cosine("red apple pie", "apple pie recipe") == pytest.approx(2 / 3)
    assert rm.lexical_answer_relevance("When did the mill close?", "I cannot answer that.") == 0


# ---------------------------------------------------------------- pairs and preferences


def fb_items():
    # source S1: items 1, 2 Consistent, 3 Hallucinated (Unwanted); S2: 4 Consistent, 5 Benign
    # (Consistent gold), 6 Hallucinated (Questionable); S3: 7, 8 Consistent only
    spec = [
        ("1", "S1", "Consistent", []),
        ("2", "S1", "Consistent", []),
        ("3", "S1", "Hallucinated", ["Unwanted"]),
        ("4", "S2", "Consistent", []),
        ("5", "S2", "Consistent", ["Benign"]),
        ("6", "S2", "Hallucinated", ["Questionable"]),
        ("7", "S3", "Consistent", []),
        ("8", "S3", "Consistent", []),
    ]
    return pd.DataFrame(
        [
            {
                "benchmark": "fb",
                "split": "all",
                "item_id": iid,
                "task": "pointwise",
                "context": src,
                "response": f"summary {iid}",
                "gold": gold,
                "meta": json.dumps({"annotations": [{"label": labels}] if labels else []}),
            }
            for iid, src, gold, labels in spec
        ]
    )


def test_faithbench_pairs_by_gold_and_severity():
    pairs = rm.faithbench_pairs(fb_items())
    # S1: {1,2} x {3} = 2 pairs; S2: {4,5} x {6} = 2; S3 has one label only -> 0
    assert sorted(pairs["pair_id"]) == ["1>3", "2>3", "4>6", "5>6"]
    assert pairs["group"].nunique() == 2
    sev = rm.faithbench_pairs(fb_items(), by="severity")
    # S1 ranks 0,0,3 -> 2 pairs; S2 ranks 0 (4), 1 (5 Benign), 2 (6) -> 3 pairs
    assert sorted(sev["pair_id"]) == ["1>3", "2>3", "4>5", "4>6", "5>6"]
    dis = rm.faithbench_pairs(fb_items(), pairing="disjoint", seed=3)
    # each summary at most once: one pair per source
    assert len(dis) == 2 and not set(dis["item_pos"]) & set(dis["item_neg"])
    summary = rm.pair_summary(pairs)
    assert summary[["pairs", "sources", "summaries"]].iloc[0].tolist() == [4, 2, 6]
    with pytest.raises(ValueError, match="pairing"):
        rm.faithbench_pairs(fb_items(), pairing="some")
    with pytest.raises(KeyError):
        rm.faithbench_pairs(fb_items().drop(columns="gold"))


def test_pointwise_preferences_and_judgment_scores():
    pairs = rm.faithbench_pairs(fb_items())
    judg = pd.DataFrame(
        {
            "item_id": ["1", "2", "3", "4", "5", "6"],
            "judge": "d",
            "output": ["1", "0", "0", "0.8", "0.3", None],
            "verdict": ["Consistent", "Hallucinated", "Hallucinated", "Consistent", "x", None],
            "valid": [True, True, True, True, True, False],
        }
    )
    scores = rm.judgment_scores(judg)
    assert scores["score"].tolist()[:5] == [1.0, 0.0, 0.0, 0.8, 0.3]
    prefs = rm.pointwise_preferences(scores, pairs).set_index("pair_id")["pref"]
    # 1>3: 1 vs 0 pos; 2>3: 0 vs 0 tie; 4>6 and 5>6: item 6 invalid
    assert prefs.to_dict() == {"1>3": "pos", "2>3": "tie", "4>6": "invalid", "5>6": "invalid"}


# ---------------------------------------------------------------- alignment and tie policies


def prefs_table():
    # 10 pairs: 5 pos, 2 neg, 2 ties, 1 invalid, in two source groups
    pref = ["pos"] * 5 + ["neg"] * 2 + ["tie"] * 2 + ["invalid"]
    return pd.DataFrame(
        {
            "pair_id": [str(i) for i in range(10)],
            "group": [0] * 5 + [1] * 5,
            "metric": "faithfulness",
            "judge": "j",
            "method": "Baseline",
            "score_pos": 0.0,
            "score_neg": 0.0,
            "pref": pref,
        }
    )


def test_alignment_under_each_tie_policy():
    miss = rm.alignment(prefs_table(), tie_policy="miss", n_boot=200).iloc[0]
    assert (miss["n"], miss["aligned"], miss["ties"], miss["invalid"]) == (10, 5, 2, 1)
    assert miss["alignment"] == 0.5  # 5 / 10
    half = rm.alignment(prefs_table(), tie_policy="half", n_boot=200).iloc[0]
    assert half["alignment"] == 0.6  # (5 + 2 * 0.5) / 10
    assert half["exact_low"] == pytest.approx(0.26238, abs=1e-4)  # Clopper-Pearson of 6/10
    one_tie = rm.alignment(prefs_table().drop(index=8), tie_policy="half", n_boot=50).iloc[0]
    assert one_tie["aligned"] == 5.5  # 5 + 0.5 over 9 pairs
    assert math.isnan(one_tie["exact_low"])  # no exact interval for a fractional count
    rnd = rm.alignment(prefs_table(), tie_policy="random", seed=1, n_boot=200).iloc[0]
    assert rnd["alignment"] in (0.5, 0.6, 0.7)  # 5 + 0, 1 or 2 coin wins, never the invalid
    again = rm.alignment(prefs_table(), tie_policy="random", seed=1, n_boot=200).iloc[0]
    assert again["alignment"] == rnd["alignment"]  # seeded
    # Clopper-Pearson for 5/10 at 95 %: [0.1871, 0.8129]
    assert miss["exact_low"] == pytest.approx(0.18709, abs=1e-4)
    assert miss["exact_high"] == pytest.approx(0.81291, abs=1e-4)
    assert miss["wilson_low"] < 0.5 < miss["wilson_high"]
    # sign test on decided pairs: 5 pos vs 2 neg, p = 2 * P(X >= 5 | 7, 0.5) = 2 * 29/128
    assert miss["p_value"] == pytest.approx(58 / 128)
    assert miss["boot_low"] <= 0.5 <= miss["boot_high"]
    every = rm.alignment_by_tie_policy(prefs_table(), n_boot=50)
    assert list(every["tie_policy"]) == ["miss", "half", "random"]
    with pytest.raises(ValueError, match="tie_policy"):
        rm.alignment(prefs_table(), tie_policy="drop")


def test_table1_layout_and_forest_plot():
    aligned = rm.alignment(prefs_table(), n_boot=50)
    t = rm.table1(aligned)
    mine = t[t["source"] == "yours"].iloc[0]
    assert mine["Faithfulness"].startswith("50.0 [") and mine["Faithfulness"].endswith("n=10")
    assert mine["Answer Relevancy"] == ""
    paper = t[
        (t["source"] == "paper · Romanian")
        & (t["judge"] == "Gemini 2.5 Pro")
        & (t["method"] == "Ragas")
    ].iloc[0]
    # spec 004 §2.5: 96 % at n = 100 -> Wilson [90.2, 98.4]
    assert paper["Faithfulness"] == "96.0 [90–98] n=100"
    ax = plots_faithfulness.alignment_forest(aligned)
    assert ax.get_xlim() == (0.0, 100.0)
    assert "(n=10)" in ax.get_yticklabels()[0].get_text()


# ---------------------------------------------------------------- template runs on pair items


def test_template_preferences_from_pair_items():
    items = fb_items()
    pairs = rm.faithbench_pairs(items)
    table = rm.pair_items(items, pairs)
    assert set(table["benchmark"]) == {"fb_pairs"} and set(table["task"]) == {"pairwise"}
    rows = []
    for pid, (c0, c1) in {
        "1>3": ("pos", "pos"),
        "2>3": ("pos", "neg"),
        "4>6": ("neg", "neg"),
    }.items():
        for order, chosen in ((0, c0), (1, c1)):
            rows.append((pid, "j.cmp", "ragas.compare", "", order, None, chosen))
    for pid, sp, sn in (("1>3", "9", "2"), ("2>3", "5", "5")):
        rows.append((pid, "j.dir", "ragas.direct", "candidate=pos", 0, sp, None))
        rows.append((pid, "j.dir", "ragas.direct", "candidate=neg", 0, sn, None))
    j = pd.DataFrame(
        rows, columns=["item_id", "judge", "prompt", "condition", "order", "verdict", "chosen"]
    ).assign(valid=True)
    prefs = rm.template_preferences(j, table)
    got = {(r.judge, r.pair_id): (r.method, r.pref) for r in prefs.itertuples()}
    assert got[("j.cmp", "1>3")] == ("Ranking", "pos")
    assert got[("j.cmp", "2>3")] == ("Ranking", "tie")  # the orders disagree
    assert got[("j.cmp", "4>6")] == ("Ranking", "neg")
    assert got[("j.dir", "1>3")] == ("Baseline", "pos")
    assert got[("j.dir", "2>3")] == ("Baseline", "tie")
    first = rm.template_preferences(j, table, orders="1").set_index(["judge", "pair_id"])
    assert first.loc[("j.cmp", "2>3"), "pref"] == "neg"


def test_sample_runs_offline_methods():
    loaded = catalog.load_source("sample:faithbench")
    pairs = rm.faithbench_pairs(loaded.items)
    scores = rm.faithbench_scores(loaded.items, loaded.judgments)
    assert set(scores["judge"]) >= {"offline-lexical", "offline-decomposition"}
    aligned = rm.alignment(rm.pointwise_preferences(scores, pairs), n_boot=50)
    assert (aligned["n"] == len(pairs)).all()
    assert aligned["alignment"].between(0, 1).all()
