"""FaithEval grading (spec 003 §2.1), accuracy tables and the answering template end to end."""

import json

import pandas as pd
import pytest

from judgelab.analyses.faithfulness import faitheval as faithfulness
from judgelab.analyses.faithfulness import plots as plots_faithfulness
from judgelab.data import catalog
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
        # the letter mode reads a bare letter only from a short answer, so it finds none
        ("Irony aside, it is A.", None, "B", "B"),
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


def _graded():
    # dataset X: 3 of 4 correct (strict), dataset Y: 1 of 1; non-strict adds one in X
    rows = [("X", True, True)] * 3 + [("X", False, True)] + [("Y", True, True)]
    return pd.DataFrame(
        [
            {
                "label": "m",
                "task": "unanswerable",
                "context_kind": "modified",
                "source_dataset": d,
                "strict": s,
                "nonstrict": n,
            }
            for d, s, n in rows
        ]
    )


def test_accuracy_and_macro_vs_micro_average():
    acc = faithfulness.accuracy(_graded()).set_index(["source_dataset", "mode"])
    assert acc.loc[("X", "strict"), "accuracy"] == 0.75  # 3 / 4
    assert acc.loc[("X", "nonstrict"), "accuracy"] == 1.0  # 4 / 4
    assert acc.loc[("X", "strict"), "ci_low"] < 0.75 < acc.loc[("X", "strict"), "ci_high"]
    macro = faithfulness.task_average(_graded(), n_boot=200).set_index("mode")
    micro = faithfulness.task_average(_graded(), avg="micro", n_boot=200).set_index("mode")
    assert macro.loc["strict", "accuracy"] == pytest.approx((0.75 + 1.0) / 2)  # 0.875
    assert micro.loc["strict", "accuracy"] == pytest.approx(4 / 5)  # 0.8
    assert macro.loc["strict", "n"] == 5 and macro.loc["strict", "n_datasets"] == 2
    lo, hi = macro.loc["strict", ["ci_low", "ci_high"]]
    assert 0.5 <= lo <= 0.875 <= hi <= 1.0  # Y is always 1, X resamples in [0, 1]: ≥ 0.5


def test_paper_table_layout_has_paper_rows():
    t = faithfulness.paper_table(_graded().assign(source_dataset="SQuAD"), task="unanswerable")
    mine = t[t["source"] == "yours"].iloc[0]
    assert mine["SQuAD S"] == pytest.approx(4 / 5) and mine["AVG N"] == pytest.approx(1.0)
    assert pd.isna(mine["BioASQ S"])
    claude = t[(t["source"] == "paper") & (t["model"] == "Claude 3.5 Sonnet")].iloc[0]
    assert claude["AVG S"] == 0.621 and claude["AVG N"] == 0.630  # spec 003 Table 4


def test_original_vs_modified_and_plot():
    g = pd.concat([_graded(), _graded().assign(context_kind="original", strict=True)])
    av = faithfulness.task_average(g, n_boot=50)
    data = faithfulness.original_vs_modified(av, task="unanswerable")
    assert data["context"].iloc[0] == "Original Context"
    mine = data[data["source"] == "yours"].set_index("context")
    assert mine.loc["Original Context", "accuracy"] == 100.0
    paper = data[(data["source"] == "paper") & (data["model"] == "gpt-4o")].set_index("context")
    assert paper.loc["Unanswerable Context", "accuracy"] == 59.7  # spec 003 Figure 4
    ax = plots_faithfulness.accuracy_bars(data)
    assert ax.get_ylabel() == "Accuracy (%)"
    assert len(ax.patches) == 2 * data["model"].nunique()
    assert any("(n=5)" in t.get_text() for t in ax.get_xticklabels())
    with pytest.raises(KeyError):
        plots_faithfulness.accuracy_bars(data.drop(columns="context"))


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
    items = catalog.schema.new_items(items.to_dict("records"))
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


def test_sample_fallback_and_run_plan():
    loaded = faithfulness.load_answers(["faitheval_unanswerable"])
    assert (
        loaded.is_sample
        and loaded.source == "sample:faitheval"
        and "judgelab judge" in (loaded.reason)
    )
    plan = faithfulness.run_plan(
        ["faitheval_unanswerable"], judge="gpt-4o-mini-faitheval", items=loaded.items
    )
    row = plan.iloc[0]
    assert row["command"].startswith("judgelab judge --judge gpt-4o-mini-faitheval")
    assert row["planned"] == 18  # 9 unanswerable + 9 original-context sample items
    assert row["est_cost_usd"] > 0
    with pytest.raises(ValueError, match="faitheval"):
        faithfulness.run_plan(["x"], judge="gpt-4o-mini-ragas-direct", items=loaded.items)
