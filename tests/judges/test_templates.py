"""Templates build the papers' prompts for the right item, order and condition."""

from __future__ import annotations

import json

import pytest

from judgelab.core import schema
from judgelab.judges import spec as spec_mod
from judgelab.judges import table, templates
from judgelab.judges.templates import ItemView, NotApplicable, nfl

PAIR = {
    "benchmark": "b",
    "split": "faithfulness_qa",
    "item_id": "1",
    "task": "pairwise",
    "question": "When did the library move?",
    "context": "[1] The library moved in March 2019.",
    "response_pos": "In March 2019.",
    "response_neg": "In 2021, after the fire.",
    "reference": "March 2019",
    "gold": "pos",
    "meta": json.dumps({"references": {"wrong": "June 2020"}}),
}


def _msgs(tid, row, order=0, cond=""):
    t = templates.get(tid)
    return t.build(ItemView(row), order, templates.parse_condition(cond))


def test_registry_groups_every_paper():
    groups = templates.by_paper()
    assert set(groups) == {
        "contextualjudgebench",
        "nofreelabels",
        "contexteval",
        "faitheval",
        "ragas",
    }
    assert {"cjb.workflow", "cjb.criteria", "cjb.structured", "cjb.verify"} <= set(
        groups["contextualjudgebench"]
    )
    with pytest.raises(KeyError, match="unknown template 'x'"):
        templates.get("x")


def test_cjb_workflow_order_swaps_responses_and_context_comes_last():
    m0 = _msgs("cjb.workflow", PAIR, 0)[0]["content"]
    m1 = _msgs("cjb.workflow", PAIR, 1)[0]["content"]
    assert m0.startswith("You are a contextual judge.")
    a0 = m0.index("Response A:\n```\nIn March 2019.\n```")
    b0 = m0.index("Response B:\n```\nIn 2021, after the fire.\n```")
    assert a0 < b0 < m0.index("Context:\n```\n[1] The library")
    assert "Response A:\n```\nIn 2021, after the fire.\n```" in m1
    assert "prioritize evaluating responses based on completeness." in m0
    assert "**Result:** <A or B>" in m0


def test_cjb_criteria_from_split_and_not_applicable():
    m = _msgs("cjb.criteria", PAIR)[0]["content"]
    assert "(1) You should prioritize evaluating on faithfulness. A response is faithful" in m
    assert "Instruction:\n```\nWhen did" in m
    with pytest.raises(NotApplicable, match="criterion"):
        _msgs("cjb.criteria", {**PAIR, "split": "other"})
    s = _msgs("cjb.structured", PAIR)[0]["content"]
    assert "**Response A reasoning:**" in s and "**Response B:** <yes/no" in s


def test_cjb_verify_prompt():
    row = {
        **PAIR,
        "task": "pointwise",
        "split": "conciseness_qa",
        "response": "B is shorter and still complete.",
        "meta": json.dumps({"judgment": "Response B"}),
    }
    m = _msgs("cjb.verify", row)[0]["content"]
    assert "<evaluation explanation>: B is shorter and still complete." in m
    assert "<evaluation outcome>: Response B" in m
    assert "<criteria>: Conciseness: The chosen response is more concise" in m


def test_nfl_maps_swapped_appendix_titles_by_content():
    # single/noref/t2 is the text printed under A.8 (a single prompt with [[Correct]]).
    sys4, user4 = nfl.PROMPTS["single/noref/t2"]
    assert "[[Correct]]" in sys4 and "Assistant B" not in user4
    # pairwise/noref/t2 is the text printed under A.4 (two conversations, [[A]]/[[B]]).
    sys8, user8 = nfl.PROMPTS["pairwise/noref/t2"]
    assert "[[A]]" in sys8 and "Assistant B's Conversation" in user8
    # The four with-reference prompts (P1, P2, P5, P6) say the reference is always correct.
    with_ref = [k for k, (s, u) in nfl.PROMPTS.items() if "always correct." in s + u]
    assert sorted(with_ref) == [
        "pairwise/ref/t1",
        "pairwise/ref/t2",
        "single/ref/t1",
        "single/ref/t2",
    ]


def test_nfl_single_turn1_with_and_without_reference():
    row = {**PAIR, "task": "pointwise", "response": "March 2019.", "gold": "Correct"}
    noref = _msgs("nfl.single", row, cond="reference=none")
    assert noref[0]["content"] == "You are a helpful assistant."
    assert "[The Start of Reference Answer]" not in noref[1]["content"]
    human = _msgs("nfl.single", row, cond="reference=human")[1]["content"]
    assert "[The Start of Reference Answer]\nMarch 2019\n[The End of Reference Answer]" in human
    wrong = _msgs("nfl.single", row, cond="reference=wrong")[1]["content"]
    assert "June 2020" in wrong
    with pytest.raises(NotApplicable, match="'random' reference"):
        _msgs("nfl.single", row, cond="reference=random")


def test_nfl_pairwise_turn2_uses_both_turns_and_order():
    meta = {
        "turn": 2,
        "question_1": "Q1?",
        "response_pos_1": "pos turn 1",
        "response_neg_1": "neg turn 1",
        "reference_1": "ref turn 1",
    }
    row = {**PAIR, "meta": json.dumps(meta)}
    sys_, text = (m["content"] for m in _msgs("nfl.pairwise", row, 1, "reference=human"))
    assert "second user question" in sys_
    assert "### Reference answer:\nref turn 1" in text
    assert "### Reference answer:\nMarch 2019" in text
    a_block = text[
        text.index("<|The Start of Assistant A") : text.index("<|The Start of Assistant B")
    ]
    assert "neg turn 1" in a_block and "In 2021, after the fire." in a_block  # order 1: neg is A
    assert text.count("\n\n\n") == 2  # FastChat layout between conversation blocks


def test_ce_templates():
    t = templates.get("ce.pairwise")
    with_ctx = _msgs("ce.pairwise", PAIR, 0, "context=with")[0]["content"]
    without = _msgs("ce.pairwise", PAIR, 1, "context=without")[0]["content"]
    assert "Context: [1] The library moved" in with_ctx
    assert "Context:" not in without and without.endswith("Response 2: In March 2019.\nJudgement:")
    assert t.parse('**output: {"judgement": "Response 2"}**', ItemView(PAIR), {}).verdict == "B"
    with pytest.raises(ValueError, match=r"condition context must be one of .*, got 'maybe'"):
        t.check_condition("context=maybe")
    attr = {
        **PAIR,
        "task": "pointwise",
        "question": "Plan a trip",
        "context": "Q: What is your age group? A: ['Children', 'Seniors']",
        "response": "Visit the museum.",
    }
    m = _msgs("ce.default_relevance", attr)[0]["content"]
    assert "**output: {'Children': {'relevance': _}, 'Seniors': {'relevance': _}}**" in m
    gen = _msgs("ce.response", attr, cond="context=without")[0]["content"]
    assert gen.endswith("Query: Plan a trip\nResponse:")


def test_faitheval_prompts_and_matching():
    un = {
        "benchmark": "faitheval",
        "split": "unanswerable",
        "item_id": "u1",
        "task": "qa",
        "question": "Who founded the lab?",
        "context": "The lab opened in 1990.",
        "gold": "unknown",
        "meta": "{}",
    }
    repo = _msgs("faitheval.repo.strict", un)[0]["content"]
    assert "the answer should be 'unknown'." in repo
    assert repo.endswith(
        "Context: The lab opened in 1990.\nQuestion: Who founded the lab?\nAnswer:"
    )
    paper = _msgs("faitheval.paper.nonstrict", un)[0]["content"]
    assert 'the answer should be "unknown".' in paper
    strict, loose = (
        templates.get("faitheval.repo.strict"),
        templates.get("faitheval.repo.nonstrict"),
    )
    assert strict.parse("I cannot tell", ItemView(un), {}).verdict == "i cannot tell"
    assert loose.parse("I cannot tell", ItemView(un), {}).verdict == "unknown"
    cf = {
        **un,
        "split": "counterfactual",
        "gold": "B",
        "meta": json.dumps({"options": {"label": ["A", "B"], "text": ["gravity", "magnetism"]}}),
    }
    assert "\nA. gravity\nB. magnetism" in _msgs("faitheval.repo.strict", cf)[0]["content"]
    assert strict.parse("Magnetism.", ItemView(cf), {}).verdict == "B"


def test_expand_pairs_and_not_applicable_are_planned(monkeypatch):
    monkeypatch.setenv("K", "x")
    items = schema.new_items(
        [
            PAIR,
            {**PAIR, "item_id": "2", "reference": None, "meta": "{}"},
            {**PAIR, "item_id": "3", "task": "pointwise", "response": "r", "gold": "Correct"},
        ]
    )
    s = spec_mod.from_dict(
        {
            "endpoint": "openai-compatible",
            "model": "m",
            "template": "nfl.single",
            "api_key_env": "K",
        }
    )
    p = table.plan(items, s, conditions=["reference=human"])
    # item 1 (pairwise): candidate=pos and candidate=neg; item 2: no reference (skipped twice);
    # item 3 (pointwise): one request. Single templates ignore order: order 0 only.
    conds = [(r.item_id, r.condition, r.order) for r in p.requests]
    assert conds == [
        ("1", "reference=human,candidate=pos", 0),
        ("1", "reference=human,candidate=neg", 0),
        ("3", "reference=human", 0),
    ]
    assert [(k.item_id, k.condition) for k in p.skipped] == [
        ("2", "reference=human,candidate=pos"),
        ("2", "reference=human,candidate=neg"),
    ]
    with pytest.raises(ValueError, match="does not take condition key 'context'"):
        table.plan(items, s, conditions=["context=with"])
