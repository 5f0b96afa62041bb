"""FaithEval grading (spec 003 §2.1): phrase lists, option matching, each condition, end to end."""

import json

import pandas as pd
import pytest

from judgelab.analyses import faithfulness
from judgelab.core import schema
from judgelab.judges import parsers, runner
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.openai_server import OpenAIServer


def item(iid, gold, *, task, kind="modified", dataset="SQuAD", context="ctx", **meta):
    return {
        "benchmark": "fe",
        "split": "test",
        "item_id": iid,
        "task": "qa",
        "question": "Where?",
        "context": context,
        "gold": gold,
        "meta": json.dumps(
            {"faitheval_task": task, "context_kind": kind, "subset": dataset, **meta}
        ),
    }


def answers(outputs, *, model="m"):
    return pd.DataFrame(
        [
            {
                "benchmark": "fe",
                "split": "test",
                "item_id": iid,
                "judge": f"{model}.fe",
                "model": model,
                "prompt": "faitheval.repo.strict",
                "sample": 0,
                "output": out,
            }
            for iid, out in outputs.items()
        ]
    )


# ---------------------------------------------------------------- normalisation and phrases


def test_normalisation_worked_examples():
    # underscore -> space, lower case, punctuation -> space, articles dropped, spaces squeezed
    assert parsers.faitheval_normalize("The_Answer: is 'UNKNOWN'!") == "answer is unknown"
    assert parsers.faitheval_normalize("A conflict — an issue") == "conflict — issue"
    assert parsers.faitheval_normalize("Theater") == "theater"  # "the" only as a word


@pytest.mark.parametrize(
    ("text", "strict", "nonstrict"),
    [
        ("Unknown.", "unknown", "unknown"),
        ("The answer is unknown", "unknown", "unknown"),
        ("I cannot tell.", None, "not"),  # "cannot" contains "not": the substring trap
        ("Nothing is said.", None, "not"),  # "nothing" contains "not"
        ("A knotty question", None, "not"),  # "knotty" too
        ("No answer is given", None, "no answer"),
        ("It is unclear", None, "unclear"),
        ("Paris", None, None),
        ("unknownst to all", "unknown", "unknown"),  # strict is a substring test as well
    ],
)
def test_unanswerable_phrase_lists(text, strict, nonstrict):
    assert parsers.faitheval_phrase(text, "unknown", mode="strict") == strict
    assert parsers.faitheval_phrase(text, "unknown", mode="nonstrict") == nonstrict


@pytest.mark.parametrize(
    ("text", "strict", "nonstrict"),
    [
        ("conflict", "conflict", "conflict"),
        ("The documents are conflicting.", "conflict", "conflict"),  # conflicting ⊃ conflict
        ("The sources are contradictory", None, "contradictory"),
        ("There are 2 answers", None, "2 answers"),
        ("Inconsistent evidence", None, "inconsistent"),
        ("London", None, None),
    ],
)
def test_inconsistent_phrase_lists(text, strict, nonstrict):
    assert parsers.faitheval_phrase(text, "conflict", mode="strict") == strict
    assert parsers.faitheval_phrase(text, "conflict", mode="nonstrict") == nonstrict


@pytest.mark.parametrize(
    ("text", "letter", "text_only", "both"),
    [
        ("(B) iron", "B", "B", "B"),
        ("B", "B", None, "B"),
        ("The answer is iron.", None, "B", "B"),
        ("I think wood", None, "A", "A"),
        # substring trap: normalised option text ⊂ normalised response, and "irony" ⊃ "iron";
        # the letter rule (spec 003 §2.1.4: the first standalone label) reads the "A" first
        ("Irony aside, it is A.", "A", "B", "A"),
        ("The answer is B.", "B", None, "B"),
        ("Answer: C", "C", None, "C"),
        ("A wooden thing", None, "A", "A"),  # the article "A" is no label; "wood" is text
    ],
)
def test_counterfactual_option_matching_modes(text, letter, text_only, both):
    opts = [("A", "wood"), ("B", "iron"), ("C", "glass")]
    assert parsers.faitheval_option(text, opts, match="letter") == letter
    assert parsers.faitheval_option(text, opts, match="text") == text_only
    assert parsers.faitheval_option(text, opts, match="letter_or_text") == both
    with pytest.raises(ValueError, match="match"):
        parsers.faitheval_option(text, opts, match="word")


# ---------------------------------------------------------------- grading


def test_grade_answers_every_condition():
    choices = {"label": ["A", "B", "C"], "text": ["wood", "iron", "glass"]}
    items = pd.DataFrame(
        [
            item("u1", "unknown", task="unanswerable"),
            item("u2", "unknown", task="unanswerable"),
            item("i1", "conflict", task="inconsistent", dataset="NQ"),
            item("o1", "the Tarrow", task="unanswerable", kind="original", answers=["Tarrow"]),
            item("c1", "A", task="counterfactual", dataset=None, choices=choices),
            item("c2", "B", task="counterfactual", kind="none", context="", choices=choices),
        ]
    )
    outs = {
        "u1": "I cannot tell.",  # non-strict only ("not")
        "u2": "UNKNOWN",
        "i1": "Both are Incorrect, the text is contradictory",  # non-strict only
        "o1": "It is the Tarrow river.",
        "c1": "The answer is wood.",  # text match of the counterfactual option
        "c2": "(C) glass",  # wrong letter
    }
    g = faithfulness.grade_answers(answers(outs), items).set_index("item_id")
    assert g.loc[["u1", "u2", "i1", "o1", "c1", "c2"], "strict"].tolist() == [
        False,
        True,
        False,
        True,
        True,
        False,
    ]
    assert g.loc[["u1", "u2", "i1", "o1", "c1", "c2"], "nonstrict"].tolist() == [
        True,
        True,
        True,
        True,
        True,
        False,
    ]
    assert g.loc["u1", "phrase_nonstrict"] == "not"
    assert g.loc["i1", "phrase_nonstrict"] == "contradictory"
    assert g.loc["c1", "source_dataset"] == "ARC-Challenge"  # the default of counterfactual
    assert g.loc["c2", "context_kind"] == "none"
    # letter-only matching misses the text answer of c1
    letter = faithfulness.grade_answers(answers(outs), items, cf_match="letter")
    assert not letter.set_index("item_id").loc["c1", "strict"]


def test_grade_answers_errors():
    items = pd.DataFrame([item("u1", "unknown", task="unanswerable")])
    with pytest.raises(ValueError, match="not in the items table"):
        faithfulness.grade_answers(answers({"zz": "x"}), items)
    with pytest.raises(KeyError, match="output"):
        faithfulness.grade_answers(answers({"u1": "x"}).drop(columns="output"), items)
    with pytest.raises(ValueError, match="cf_match"):
        faithfulness.grade_answers(answers({"u1": "x"}), items, cf_match="word")
    bad = pd.DataFrame([item("u1", "Paris", task="")])
    bad["benchmark"] = "other"
    with pytest.raises(ValueError, match="cannot tell its FaithEval task"):
        faithfulness.item_conditions(bad)


# ---------------------------------------------------------------- answering template, end to end


def _answerer(body):
    prompt = body["messages"][-1]["content"]
    if "'unknown'" in prompt:
        return "I cannot tell from the context."  # non-strict only
    if "'conflict'" in prompt:
        return "conflict"
    return "B" if "B. iron" in prompt else "unknown"


def test_faitheval_template_against_local_server(tmp_path, monkeypatch):
    monkeypatch.setenv("JL_FE_KEY", "sk-" + "test-0123456789abcdef")
    choices = {"label": ["A", "B"], "text": ["wood", "iron"]}
    rows = [
        {**item("u1", "unknown", task="unanswerable"), "split": "test"},
        {**item("i1", "conflict", task="inconsistent"), "split": "test"},
        {**item("c1", "B", task="counterfactual", choices=choices), "split": "test"},
    ]
    items = pd.DataFrame(rows)
    items = schema.new_items(items.to_dict("records"))
    with OpenAIServer(responder=_answerer) as server:
        spec = spec_mod.from_dict(
            {
                "endpoint": "openai-compatible",
                "model": "test-model",
                "base_url": server.url,
                "api_key_env": "JL_FE_KEY",
                "template": "faitheval.repo.strict",
                "max_tokens": 64,
                "concurrency": 2,
                "timeout_s": 5,
            }
        )
        est = runner.dry_run(items, spec, cache=RequestCache(tmp_path / "c.sqlite"))
        assert (est.planned, est.to_request) == (3, 3)
        with RequestCache(tmp_path / "c.sqlite") as cache:
            result = runner.run(items, spec, cache=cache, progress=False, write_tables=False)
    assert result.summary.answered == 3
    g = faithfulness.grade_answers(result.judgments, items).set_index("item_id")
    # u1: "cannot" passes only the non-strict "not"; i1 strict; c1 names option B
    assert g["strict"].to_dict() == {"u1": False, "i1": True, "c1": True}
    assert g["nonstrict"].to_dict() == {"u1": True, "i1": True, "c1": True}
    # the template's own verdict agrees with the strict grade
    assert result.judgments.set_index("item_id")["correct"].to_dict() == {
        "u1": False,
        "i1": True,
        "c1": True,
    }
