"""Offline baselines on hand-computed examples, and their clear refusals."""

from __future__ import annotations

import pytest

from judgelab.core import schema, tables
from judgelab.data import catalog
from judgelab.judges import offline, runner
from judgelab.judges import spec as spec_mod


def _spec(name, **options):
    return spec_mod.from_dict({"endpoint": "offline", "model": name, "options": options})


def _pairs(*rows):
    base = {"benchmark": "toy", "split": "s", "task": "pairwise", "question": "Q?"}
    return schema.new_items([{**base, "item_id": str(i), **r} for i, r in enumerate(rows)])


def test_prefer_longer_both_orders_and_tie():
    items = _pairs(
        {"response_pos": "one two three", "response_neg": "one", "gold": "pos"},  # 3 vs 1 word
        {"response_pos": "a b", "response_neg": "c d", "gold": "pos"},  # 2 vs 2 words
        {"response_pos": "x", "response_neg": "x y"},  # no gold → correct is null
    )
    res = runner.run(items, _spec("prefer_longer"), progress=False, write_tables=False)
    j = res.judgments.set_index(["item_id", "order"])
    # Item 0: pos is longer → shown first (order 0) it is A, shown second (order 1) it is B.
    assert (j.loc[("0", 0), "verdict"], j.loc[("0", 1), "verdict"]) == ("A", "B")
    assert j.loc[("0", 0), "chosen"] == j.loc[("0", 1), "chosen"] == "pos"
    assert bool(j.loc[("0", 1), "correct"]) is True
    assert j.loc[("1", 0), "chosen"] == "tie" and bool(j.loc[("1", 0), "correct"]) is False
    assert j.loc[("2", 0), "chosen"] == "neg" and j["correct"].isna().sum() == 2
    assert j.loc[("0", 0), "output"] == "len(A)=3 len(B)=1 words -> A"
    assert (j["cost_usd"] == 0).all()
    assert res.judgments["judge"].unique().tolist() == ["offline-prefer_longer"]


def test_always_a_is_right_in_order_0_and_wrong_in_order_1():
    items = _pairs({"response_pos": "p", "response_neg": "n", "gold": "pos"})
    j = runner.run(items, _spec("always_a"), progress=False, write_tables=False).judgments
    assert j.sort_values("order")["chosen"].tolist() == ["pos", "neg"]
    assert j.sort_values("order")["correct"].tolist() == [True, False]


def test_lexical_grounding_scores_and_refusal():
    ctx = "The library moved to the civic building in March 2019."
    # pos content tokens: library, moved, march, 2019 → all 4 in context → 1.0
    # neg content tokens: library, moved, june, 2021 → 2 of 4 in context → 0.5
    items = _pairs(
        {
            "context": ctx,
            "response_pos": "The library moved in March 2019.",
            "response_neg": "The library moved in June 2021.",
            "gold": "pos",
        },
        # a refusal scores refusal_score=0.5; "moved June 2021" → moved in ctx: 1/3 ≈ 0.333
        {
            "context": ctx,
            "response_pos": "The context does not say, so I cannot answer.",
            "response_neg": "Moved June 2021.",
            "gold": "pos",
        },
    )
    assert offline.grounding("The library moved in June 2021.", ctx) == 0.5
    j = runner.run(items, _spec("lexical_grounding"), progress=False, write_tables=False).judgments
    j = j.set_index(["item_id", "order"])
    assert j.loc[("0", 0), "output"] == "grounding A=1.0000 (answer) B=0.5000 (answer) -> A"
    assert j.loc[("1", 1), "output"] == "grounding A=0.3333 (answer) B=0.5000 (refusal) -> B"
    assert j["chosen"].eq("pos").all()
    # With refusal_score=0.2 the 0.333-grounded answer beats the refusal.
    j2 = runner.run(
        items, _spec("lexical_grounding", refusal_score=0.2), progress=False, write_tables=False
    ).judgments
    assert j2[j2["item_id"] == "1"]["chosen"].eq("neg").all()


def test_reference_similarity_hand_computed():
    # token-F1 vs "a cat on a mat" (SQuAD tokens: cat on mat):
    #   "the cat sat on the mat" → cat sat on mat: overlap 3, P=3/4, R=3/3 → F1 = 6/7 ≈ 0.857
    #   "dogs bark"              → overlap 0 → F1 = 0
    items = _pairs(
        {
            "response_pos": "the cat sat on the mat",
            "response_neg": "dogs bark",
            "reference": "a cat on a mat",
            "gold": "pos",
        }
    )
    j = runner.run(
        items, _spec("reference_similarity"), progress=False, write_tables=False
    ).judgments
    assert j.iloc[0]["output"] == "token_f1 A=0.8571 B=0.0000 -> A"
    assert j["chosen"].eq("pos").all() and j["condition"].eq("reference=human").all()
    # ROUGE-L on rouge tokens: pred 6 tokens, ref 5; LCS(the cat on the mat / the cat on a mat)
    # = "the cat on mat" = 4 → P=4/6, R=4/5, F = 2PR/(P+R) = 0.7273.
    assert round(offline.rouge_l("the cat sat on the mat", "the cat on a mat"), 4) == 0.7273
    # Pointwise: thresholded.
    point = schema.new_items(
        [
            {
                "benchmark": "toy",
                "split": "s",
                "item_id": "p1",
                "task": "pointwise",
                "question": "Q",
                "response": "the cat sat on the mat",
                "reference": "a cat on a mat",
                "gold": "Correct",
            },
            {
                "benchmark": "toy",
                "split": "s",
                "item_id": "p2",
                "task": "pointwise",
                "question": "Q",
                "response": "dogs bark",
                "reference": "a cat on a mat",
                "gold": "Correct",
            },
        ]
    )
    jp = runner.run(
        point, _spec("reference_similarity", threshold=0.8), progress=False, write_tables=False
    ).judgments
    assert jp["verdict"].tolist() == ["Correct", "Incorrect"]  # 0.857 >= 0.8 > 0
    assert jp["correct"].tolist() == [True, False]


def test_refusals_on_benchmarks_they_do_not_apply_to():
    cjb = catalog.load_items("sample:contextualjudgebench")  # pairwise, no references
    with pytest.raises(offline.OfflineNotApplicable, match="needs a reference"):
        runner.run(cjb, _spec("reference_similarity"), progress=False, write_tables=False)
    point = schema.new_items(
        [
            {
                "benchmark": "p",
                "split": "s",
                "item_id": "1",
                "task": "qa",
                "question": "Q",
                "response": "r",
            }
        ]
    )
    with pytest.raises(offline.OfflineNotApplicable, match="judges \\['pairwise'\\] items"):
        runner.run(point, _spec("prefer_longer"), progress=False, write_tables=False)
    with pytest.raises(offline.OfflineNotApplicable, match="needs a context"):
        runner.run(point, _spec("lexical_grounding"), progress=False, write_tables=False)


def test_item_without_reference_is_kept_invalid_and_counted():
    items = _pairs(
        {"response_pos": "cat", "response_neg": "dog", "reference": "cat", "gold": "pos"},
        {"response_pos": "cat", "response_neg": "dog", "gold": "pos"},
    )
    res = runner.run(items, _spec("reference_similarity"), progress=False, write_tables=False)
    bad = res.judgments[res.judgments["item_id"] == "1"]
    assert len(bad) == 2 and not bad["valid"].any() and bad["correct"].eq(False).all()
    assert bad["output"].str.startswith("not applicable").all()
    assert res.summary.invalid == 2


def test_offline_run_writes_a_valid_table_on_the_sample():
    cjb = catalog.load_items("sample:contextualjudgebench")
    res = runner.run(cjb, _spec("prefer_longer"), progress=False)
    (path,) = res.paths
    assert path.name == "offline-prefer_longer.parquet"
    back = tables.read_judgments(path)
    assert len(back) == 2 * len(cjb)  # both orders
    assert back.equals(res.judgments)
