"""Ragas formulas (spec 004 §2.4), the offline baselines and the scores of every summary."""

import math

import pytest

from judgelab.analyses import faithfulness
from judgelab.data import catalog

# ---------------------------------------------------------------- formulas on a hand-computed item

CONTEXT = "The mill closed in 1990. The town bought it in 1995. It is now a museum."
ANSWER = "The mill closed in 1990. Aliens bought it. It is now a museum."


def test_ragas_formulas_on_a_hand_computed_item():
    # F: 2 of 3 statements verified -> 2/3
    assert faithfulness.faithfulness_score(2, 3) == pytest.approx(2 / 3)
    # AR: cosines 0.9, 0.6, 0.3 -> mean 0.6; one noncommittal answer zeroes it when asked
    assert faithfulness.answer_relevance_score([0.9, 0.6, 0.3]) == pytest.approx(0.6)
    assert (
        faithfulness.answer_relevance_score([0.9, 0.6, 0.3], noncommittal=[0, 1, 0], zeroing=True)
        == 0
    )
    assert faithfulness.answer_relevance_score([-0.2, 0.4]) == pytest.approx(
        0.1
    )  # raw, may be negative
    assert math.isnan(faithfulness.answer_relevance_score([]))
    # CR: 1 essential of 3 context sentences; capped at 1; empty context 0
    assert faithfulness.context_relevance_score(1, 3) == pytest.approx(1 / 3)
    assert faithfulness.context_relevance_score(5, 3) == 1.0
    assert faithfulness.context_relevance_score(0, 0) == 0.0


def test_empty_statement_policy():
    assert math.isnan(faithfulness.faithfulness_score(0, 0))
    assert faithfulness.faithfulness_score(0, 0, empty_policy="zero") == 0.0
    assert faithfulness.faithfulness_score(0, 0, empty_policy="one") == 1.0
    with pytest.raises(ValueError):
        faithfulness.faithfulness_score(3, 2)
    with pytest.raises(ValueError, match="empty_policy"):
        faithfulness.faithfulness_score(1, 2, empty_policy="drop")


def test_offline_decomposition_on_the_item():
    # statements: "The mill closed in 1990." -> {mill, closed, 1990} all in context (1.0)
    # "Aliens bought it." -> {aliens, bought}: bought only -> 1/2 = 0.5 >= 0.5 supported
    # "It is now a museum." -> {now, museum}: both -> 1.0
    assert faithfulness.decompose_faithfulness(ANSWER, CONTEXT) == (3, 3, 1.0)
    # a stricter support threshold rejects the half-grounded statement: 2/3
    v, s, f = faithfulness.decompose_faithfulness(ANSWER, CONTEXT, support=0.6)
    assert (v, s) == (2, 3) and f == pytest.approx(2 / 3)
    # CR: question {mill, close}; only sentence 1 holds "mill" (1/2 = 0.5) -> 1 of 3
    n, total, cr = faithfulness.decompose_context_relevance("When did the mill close?", CONTEXT)
    assert (n, total) == (1, 3) and cr == pytest.approx(1 / 3)
    # AR stand-in: bag-of-words cosine; refusals zeroed
    assert faithfulness.bow_cosine("red apple pie", "apple pie recipe") == pytest.approx(2 / 3)
    assert (
        faithfulness.lexical_answer_relevance("When did the mill close?", "I cannot answer that.")
        == 0
    )


def test_sample_runs_offline_methods():
    loaded = catalog.load_source("sample:faithbench")
    pairs = faithfulness.faithbench_pairs(loaded.items)
    scores = faithfulness.faithbench_scores(loaded.items, loaded.judgments)
    assert set(scores["judge"]) >= {"offline-lexical", "offline-decomposition"}
    aligned = faithfulness.alignment(faithfulness.pointwise_preferences(scores, pairs), n_boot=50)
    assert (aligned["n"] == len(pairs)).all()
    assert aligned["alignment"].between(0, 1).all()
