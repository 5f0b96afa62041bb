"""The card-measure registry: registration, needs and their n/a rows, the judge's context."""

import math

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import registry
from judgelab.errors import ChoiceError


@pytest.fixture
def fresh(monkeypatch):
    """Register into an empty registry for the test (the real one is left as it was)."""
    monkeypatch.setattr(registry, "_REGISTRY", {})
    return registry


def tables(orders=(0, 1), correct=True):
    """Two pairwise items judged by `m.p` (and once by `x.p` in sample 1 only)."""
    items = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": ["1", "2"],
            "task": "pairwise",
            "question": ["q1", "q2"],
            "context": "",
            "response_pos": ["a b c", "a b"],
            "response_neg": ["a", "a b c d"],
            "response": None,
            "reference": None,
            "gold": "pos",
            "meta": "{}",
        }
    )
    rows = [
        {
            "benchmark": "b",
            "split": "s",
            "item_id": item,
            "judge": "m.p",
            "model": "m",
            "prompt": "p",
            "condition": "",
            "order": order,
            "sample": 0,
            "verdict": "A",
            "valid": True,
            "chosen": "pos" if order == 0 else "neg",
            "correct": (order == 0) if correct else None,
        }
        for item in ("1", "2")
        for order in orders
    ]
    rows.append({**rows[0], "judge": "x.p", "sample": 1})
    return items, pd.DataFrame(rows)


def test_measure_registers_a_record_and_returns_the_function(fresh):
    def f(ctx):
        return [fresh.row("all", value=1.0, n=3, headline=True)]

    g = fresh.measure(
        "m1", family="fam", label="M one", doc="what", needs=("pairwise",), direction="lower"
    )(f)
    assert g is f
    m = fresh.get("m1")
    assert (m.name, m.family, m.label, m.doc, m.needs, m.direction) == (
        "m1",
        "fam",
        "M one",
        "what",
        ("pairwise",),
        "lower",
    )
    assert [x.name for x in fresh.registered()] == ["m1"]
    assert fresh.registered(("other",)) == []
    with pytest.raises(ChoiceError, match="measure must be one of"):
        fresh.get("nope")


def test_measure_rejects_unknown_needs_directions_and_a_second_function(fresh):
    with pytest.raises(ChoiceError, match="need must be one of"):
        fresh.measure("a", family="f", label="A", doc="", needs=("telepathy",))
    with pytest.raises(ChoiceError, match="direction must be one of"):
        fresh.measure("a", family="f", label="A", doc="", direction="sideways")

    def one(ctx):
        return []

    def two(ctx):
        return []

    fresh.measure("a", family="f", label="A", doc="")(one)
    fresh.measure("a", family="f", label="A again", doc="")(one)  # a reload re-registers
    assert fresh.get("a").label == "A again"
    with pytest.raises(ValueError, match="registered twice"):
        fresh.measure("a", family="g", label="A", doc="")(two)


def test_unmet_needs_give_one_na_row_without_calling_the_measure(fresh):
    calls = []

    def f(ctx):
        calls.append(ctx.judge)
        return [fresh.row("all", value=0.5, n=2, headline=True)]

    fresh.measure("needs_gold", family="f", label="G", doc="", needs=("pairwise", "gold"))(f)
    fresh.measure(
        "pointwise_only",
        family="f",
        label="P",
        doc="",
        needs=("pointwise",),
        unmet={"pointwise": "custom reason"},
    )(f)
    items, judgments = tables(correct=False)
    ctx = fresh.CardContext.build(items, judgments, judge="m.p", source="toy")
    (row,) = fresh.get("needs_gold")(ctx)
    assert row["status"] == "n/a" and row["note"] == "no gold labels in this source"
    assert row["headline"] and row["n"] == 0 and row["scope"] == ""
    assert (row["source"], row["judge"], row["measure"]) == ("toy", "m.p", "needs_gold")
    assert math.isnan(row["value"]) and set(row) == set(fresh.COLUMNS)
    (row,) = fresh.get("pointwise_only")(ctx)
    assert row["note"] == "custom reason"
    assert calls == []
    items, judgments = tables()
    ctx = fresh.CardContext.build(items, judgments, judge="m.p", source="toy")
    (row,) = fresh.get("needs_gold")(ctx)
    assert calls == ["m.p"] and row["status"] == "ok" and row["value"] == 0.5
    assert row["measure"] == "needs_gold" and row["note"] == "" and math.isnan(row["p_value"])


def test_a_measure_may_return_a_frame(fresh):
    fresh.measure("framed", family="f", label="F", doc="")(
        lambda ctx: pd.DataFrame({"scope": ["x"], "value": [0.25], "n": [4]})
    )
    items, judgments = tables()
    ctx = fresh.CardContext.build(items, judgments, judge="m.p")
    (row,) = fresh.get("framed")(ctx)
    assert row["value"] == 0.25 and row["status"] == "ok" and row["headline"] is False


def test_context_facts_greedy_rows_lengths_and_cache():
    items, judgments = tables()
    ctx = registry.CardContext.build(items, judgments, judge="m.p", source="toy")
    assert ctx.pairwise and ctx.both_orders and ctx.has_gold
    assert set(ctx.judgments["judge"]) == {"m.p"}  # x.p judged only in sample 1
    assert len(ctx.own) == 4 and (ctx.lens["len_unit"] == "words").all()
    assert ctx.lens["len_pos"].tolist() == [3.0, 2.0]
    assert ctx.boot == {"n_boot": 1000, "seed": 0, "level": 0.95}
    built = []
    assert ctx.cached("k", lambda: built.append(1) or "v") == "v"
    assert ctx.cached("k", lambda: built.append(1) or "w") == "v" and built == [1]
    items, judgments = tables(orders=(0,), correct=False)
    one = registry.CardContext.build(items, judgments, judge="m.p")
    assert one.pairwise and not one.both_orders and not one.has_gold
    with pytest.raises(ValueError, match="no judgments"):
        registry.CardContext.build(items, judgments, judge="x.p")
    with pytest.raises(KeyError, match="card"):
        registry.CardContext.build(items, judgments.drop(columns="split"), judge="m.p")


def test_options_normalise_missing_mappings():
    opts = registry.CardOptions(label_map=None, n_boot=10, families=["length"])
    assert opts.label_map == {} and opts.judge_family == {}
    assert opts.families == ("length",)
    assert opts.boot == {"n_boot": 10, "seed": 0, "level": 0.95}


def test_rows_mark_the_headline_and_undefined_values():
    frame = pd.DataFrame(
        {
            "scope": ["a", "pooled"],
            "value": [np.nan, 0.4],
            "ci_low": [np.nan, 0.3],
            "ci_high": [np.nan, 0.5],
            "n": [0, 10],
        }
    )
    a, pooled = registry.rows(frame, headline="pooled")
    assert a["status"] == "n/a" and a["note"] == "undefined here (no units or no gold)"
    assert not a["headline"] and pooled["headline"] and pooled["status"] == "ok"
    assert pooled["n"] == 10 and math.isnan(pooled["p_value"]) and pooled["note"] == ""
    assert registry.na("why") == [
        {"scope": "", "headline": True, "status": "n/a", "note": "why", "n": 0}
    ]


def test_family_measures_register_under_their_family():
    from judgelab.analyses.correctness import measures as _c  # noqa: F401
    from judgelab.analyses.juries import measures as _j  # noqa: F401
    from judgelab.analyses.length import measures as _l  # noqa: F401
    from judgelab.analyses.pairwise import measures as _p  # noqa: F401

    expected = {
        "ca": "pairwise",
        "consistency": "pairwise",
        "pos_a_rate": "pairwise",
        "p_longer": "length",
        "length_coef": "length",
        "context_trend": "length",
        "kappa_human": "correctness",
        "self_gap": "correctness",
        "answered_gap": "correctness",
        "alpha_peers": "juries",
    }
    assert {name: registry.get(name).family for name in expected} == expected
    items, judgments = tables()
    ctx = registry.CardContext.build(items, judgments, judge="m.p", options=None)
    ctx = registry.CardContext.build(
        items, judgments, judge="m.p", options=registry.CardOptions(n_boot=20)
    )
    # both items: pos in order 0, neg in order 1 -> never consistent
    pooled = [r for r in registry.get("consistency")(ctx) if r["headline"]]
    assert pooled[0]["value"] == 0.0 and pooled[0]["n"] == 2
    (fpr,) = registry.get("fpr")(ctx)
    assert fpr["note"] == "pairwise judgments: no Correct/Incorrect grading"
