"""Property tests (hypothesis): metric identities, un-swapping, request keys, table round-trips."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from judgelab.analyses import pairwise
from judgelab.core import schema, tables
from judgelab.data.importers.common import pairwise_outcome
from judgelab.judges import cache, table
from judgelab.judges import spec as spec_mod

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- metric identities

BOTH = ("pos", "neg")
WITH_TIES = ("pos", "neg", "tie")


@st.composite
def two_order_judgments(draw, choices=BOTH, invalid=False):
    """A judgments table: 1-2 judges x 1-25 gold=pos items x both orders."""
    rows = []
    for judge in draw(st.sampled_from([["j1"], ["j1", "j2"]])):
        n = draw(st.integers(1, 25))
        for i in range(n):
            split = draw(st.sampled_from(["s1", "s2"]))
            for order in (0, 1):
                options = list(choices) + ([None] if invalid else [])
                chosen = draw(st.sampled_from(options))
                rows.append(
                    {
                        "benchmark": "b",
                        "split": split,
                        "item_id": f"i{i}",
                        "judge": judge,
                        "order": order,
                        "valid": chosen is not None,
                        "chosen": chosen,
                        "correct": chosen == "pos",
                    }
                )
    return schema.new_judgments(rows)


def _rates(judgments: pd.DataFrame, policy: str = "repo") -> pd.DataFrame:
    outcomes = pairwise.item_outcomes(judgments, invalid_policy=policy)
    # The identities are on the point values and counts, which the interval method does not
    # touch; the percentile bootstrap keeps 40 examples at ~0.1 s each (the exact wild hull of
    # a few clusters took ~1.5 s per example).
    rates = pairwise.pairwise_rates(outcomes, n_boot=10, inference="bootstrap")
    rates = rates[rates["aggregation"] != pairwise.MEAN_OF_SPLITS]
    return rates.pivot_table(
        index=["judge", "split"], columns="metric", values=["value", "k", "n"]
    )


@SETTINGS
@given(two_order_judgments())
def test_oa_is_a1_plus_a2_minus_ca_and_cons_is_ca_plus_1_minus_oa(judgments):
    r = _rates(judgments)
    v, k = r["value"], r["k"]
    # On counts the identity is exact (inclusion-exclusion): |A1 ∪ A2| = |A1| + |A2| − |A1 ∩ A2|.
    np.testing.assert_array_equal(k["oa"], k["a1"] + k["a2"] - k["ca"])
    np.testing.assert_allclose(v["oa"], v["a1"] + v["a2"] - v["ca"], atol=1e-12)
    # Without invalids and ties, consistent = both right or both wrong.
    np.testing.assert_allclose(v["cons"], v["ca"] + 1 - v["oa"], atol=1e-12)
    # And A1 is the hand count: order-0 rows that chose pos over the items of the group.
    j0 = judgments[judgments["order"] == 0]
    for (judge, split), row in v.iterrows():
        part = j0[j0["judge"] == judge]
        if split != pairwise.POOLED:
            part = part[part["split"] == split]
        assert row["a1"] == pytest.approx((part["chosen"] == "pos").mean())


@SETTINGS
@given(two_order_judgments(choices=WITH_TIES, invalid=True), st.sampled_from(["repo", "strict"]))
def test_with_ties_and_invalids_oa_identity_holds_and_cons_is_bounded(judgments, policy):
    r = _rates(judgments, policy)
    v, k = r["value"], r["k"]
    np.testing.assert_array_equal(k["oa"], k["a1"] + k["a2"] - k["ca"])
    # A tie or an invalid verdict against a wrong choice is inconsistent yet "both wrong", so
    # consistency can only fall below CA + 1 − OA, never exceed it.
    assert (v["cons"] <= v["ca"] + 1 - v["oa"] + 1e-12).all()
    assert ((v[["a1", "a2", "ca", "oa", "cons"]] >= 0) & (v[["a1", "a2", "ca", "oa"]] <= 1)).all(
        axis=None
    )
    assert (v["ca"] <= v[["a1", "a2"]].min(axis=1) + 1e-12).all()
    assert (v["oa"] >= v[["a1", "a2"]].max(axis=1) - 1e-12).all()


# ---------------------------------------------------------------- un-swapping

SLOTS = st.sampled_from(["1", "2"])


@given(st.one_of(st.none(), st.just("tie"), SLOTS), SLOTS, SLOTS, st.sampled_from([None, "pos"]))
def test_pairwise_outcome_unswaps_like_the_runner(winner, pos_slot, first_slot, gold):
    out = pairwise_outcome(winner, pos_slot=pos_slot, first_slot=first_slot, gold=gold)
    # The importer's (order, verdict as shown) maps back to the same chosen response as the
    # runner's position_to_chosen: both un-swap the same way.
    assert table.position_to_chosen(out["verdict"], out["order"]) == out["chosen"]
    # Showing the other slot first flips order and the shown verdict, never what was chosen.
    other = "2" if first_slot == "1" else "1"
    flipped = pairwise_outcome(winner, pos_slot=pos_slot, first_slot=other, gold=gold)
    assert flipped["order"] == 1 - out["order"]
    assert flipped["chosen"] == out["chosen"] and flipped["correct"] == out["correct"]
    swap = {"A": "B", "B": "A", "tie": "tie", None: None}
    assert flipped["verdict"] == swap[out["verdict"]]
    if winner in ("1", "2"):
        assert out["chosen"] == ("pos" if winner == pos_slot else "neg")


WORDS = st.text(alphabet="abcdefghij klmnop", min_size=0, max_size=30)
REMOTE = spec_mod.from_dict(
    {
        "endpoint": "openai-compatible",
        "model": "m",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "JL_PROPS_KEY",
        "template": "cjb.workflow",
    }
)


@st.composite
def pairwise_items(draw):
    n = draw(st.integers(1, 6))
    return schema.new_items(
        [
            {
                "benchmark": "b",
                "split": "faithfulness_qa",
                "item_id": f"i{i}",
                "task": "pairwise",
                "question": f"Q {draw(WORDS)}",
                "context": draw(WORDS),
                # Markers make each response findable in the prompt whatever the text.
                "response_pos": f"@@POS{i}@@ {draw(WORDS)}",
                "response_neg": f"@@NEG{i}@@ {draw(WORDS)}",
                "gold": "pos",
            }
            for i in range(n)
        ]
    )


def _answer(content: str) -> dict:
    return {
        "content": content,
        "finish_reason": "stop",
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "latency_s": 0.0,
        "created_at": "2024-01-01T00:00:00+00:00",
    }


@SETTINGS
@given(pairwise_items())
def test_runner_tables_unswap_orders(items):
    plan = table.plan(items, REMOTE)
    assert len(plan.requests) == 2 * len(items)
    oracle, always_a = {}, {}
    for req in plan.requests:
        i = req.item_id[1:]
        text = "\n".join(m["content"] for m in req.request["messages"])
        pos_first = text.index(f"@@POS{i}@@") < text.index(f"@@NEG{i}@@")
        assert pos_first == (req.order == 0)  # order 0 shows response_pos as A
        oracle[req.key] = _answer(f"**Result:** {'A' if pos_first else 'B'}")
        always_a[req.key] = _answer("**Result:** A")
    # A judge that always finds the better response: pos in both orders, always correct.
    right = table.build(items, REMOTE, oracle, the_plan=plan).judgments
    assert (right["chosen"] == "pos").all() and right["correct"].all()
    # A judge that always answers A: pos when pos is shown first, neg otherwise.
    first = table.build(items, REMOTE, always_a, the_plan=plan).judgments
    assert (first["chosen"] == first["order"].map({0: "pos", 1: "neg"})).all()
    outcomes = pairwise.item_outcomes(first)
    assert (outcomes["category"] == "biased_first").all()


# ---------------------------------------------------------------- request keys

TEXT = st.text(max_size=40)
MESSAGES = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user"]), "content": TEXT}),
    min_size=1,
    max_size=4,
)
SAMPLING = st.fixed_dictionaries(
    {
        "temperature": st.floats(0, 2, allow_nan=False),
        "max_tokens": st.integers(1, 4096),
    },
    optional={"top_p": st.floats(0.01, 1.0), "seed": st.integers(0, 2**31)},
)
REQUESTS = st.builds(
    lambda model, messages, sampling: {"model": model, "messages": messages, **sampling},
    TEXT,
    MESSAGES,
    SAMPLING,
)


def _reorder(obj, rnd):
    """Return `obj` with every dict's keys in a random order (same content)."""
    if isinstance(obj, dict):
        keys = list(obj)
        rnd.shuffle(keys)
        return {k: _reorder(obj[k], rnd) for k in keys}
    if isinstance(obj, list):
        return [_reorder(v, rnd) for v in obj]
    return obj


@given(REQUESTS, st.randoms(use_true_random=False))
def test_request_key_is_stable_under_dict_order(request, rnd):
    reordered = _reorder(request, rnd)
    assert cache.request_key(reordered) == cache.request_key(request)
    assert cache.request_key(dict(request)) == cache.request_key(request)


@st.composite
def changed(draw):
    """A request and a copy differing in exactly one thing that determines the answer."""
    req = draw(REQUESTS)
    new = {**req, "messages": [dict(m) for m in req["messages"]]}
    what = draw(st.sampled_from(["model", "content", "role", "add", "drop", "param", "new_param"]))
    if what == "model":
        new["model"] = draw(TEXT.filter(lambda t: t != req["model"]))
    elif what == "content":
        i = draw(st.integers(0, len(new["messages"]) - 1))
        old = new["messages"][i]["content"]
        new["messages"][i]["content"] = draw(TEXT.filter(lambda t: t != old))
    elif what == "role":
        i = draw(st.integers(0, len(new["messages"]) - 1))
        new["messages"][i]["role"] = {"user": "system", "system": "user"}[
            new["messages"][i]["role"]
        ]
    elif what == "add":
        new["messages"].append({"role": "user", "content": draw(TEXT)})
    elif what == "drop":
        assume(len(new["messages"]) > 1)
        new["messages"].pop(draw(st.integers(0, len(new["messages"]) - 1)))
    elif what == "param":
        key = draw(st.sampled_from(sorted(k for k in req if k not in ("model", "messages"))))
        new[key] = draw(SAMPLING.map(lambda s: s.get(key)).filter(lambda v: v != req[key]))
        assume(new[key] is not None)
    else:
        missing = [k for k in ("top_p", "seed") if k not in req]
        assume(missing)
        new[missing[0]] = 1
    return req, new


@given(changed())
def test_request_key_changes_with_any_change(pair):
    a, b = pair
    assume(a != b)
    assert cache.request_key(a) != cache.request_key(b)


SPEC_CHANGES = {
    "model": "m2",
    "temperature": 0.5,
    "max_tokens": 17,
    "top_p": 0.9,
    "seed": 3,
    "base_url": "http://127.0.0.1:10/v1",
    "template": "cjb.structured",
}


@pytest.mark.parametrize("field", sorted(SPEC_CHANGES))
def test_every_spec_field_that_shapes_a_request_changes_its_key(field):
    items = schema.new_items(
        [
            {
                "benchmark": "b",
                "split": "faithfulness_qa",
                "item_id": "1",
                "task": "pairwise",
                "question": "q",
                "context": "c",
                "response_pos": "p",
                "response_neg": "n",
            }
        ]
    )
    base = table.plan(items, REMOTE).keys
    other = dataclasses.replace(REMOTE, **{field: SPEC_CHANGES[field]})
    assert set(table.plan(items, other).keys).isdisjoint(base)
    # What never shapes the answer never changes the key: the key's variable, the run's
    # concurrency, timeout and retries.
    same = dataclasses.replace(
        REMOTE, api_key_env="OTHER_KEY", concurrency=3, timeout_s=9.0, max_retries=1
    )
    assert table.plan(items, same).keys == base


# ---------------------------------------------------------------- schema round-trips

OPT_TEXT = st.one_of(st.none(), st.text(max_size=30))
OPT_COUNT = st.one_of(st.none(), st.integers(0, 2**40))
OPT_FLOAT = st.one_of(st.none(), st.floats(0, 1e9, allow_nan=False))
TIMES = st.one_of(
    st.none(),
    st.datetimes(datetime(1990, 1, 1), datetime(2100, 1, 1), timezones=st.just(UTC)),
)


@st.composite
def judgment_rows(draw):
    n = draw(st.integers(0, 12))
    rows = []
    for k in range(n):
        valid = draw(st.booleans())
        rows.append(
            {
                "benchmark": draw(st.sampled_from(["b", "bé", "b b"])),
                "split": draw(st.text(min_size=1, max_size=8)),
                "item_id": f"{k}-{draw(st.text(max_size=8))}",
                "judge": draw(st.text(min_size=1, max_size=10)),
                "model": draw(OPT_TEXT),
                "prompt": draw(OPT_TEXT),
                "condition": draw(st.sampled_from(["", "reference=human", "context=with"])),
                "order": draw(st.sampled_from([0, 1])),
                "sample": draw(st.integers(0, 5)),
                "output": draw(OPT_TEXT),
                "verdict": draw(OPT_TEXT),
                "valid": valid,
                "chosen": draw(st.sampled_from(["pos", "neg", "tie", None])) if valid else None,
                "correct": draw(st.sampled_from([True, False, None])),
                "prompt_tokens": draw(OPT_COUNT),
                "completion_tokens": draw(OPT_COUNT),
                "latency_s": draw(OPT_FLOAT),
                "cost_usd": draw(OPT_FLOAT),
                "request_key": draw(OPT_TEXT),
                "created_at": draw(TIMES),
            }
        )
    return rows


def _roundtrip(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    with tempfile.TemporaryDirectory() as d:
        path = tables.write(df, Path(d) / "t.parquet", kind)
        back = tables.read(path, kind)
        assert [p.name for p in Path(d).iterdir()] == ["t.parquet"]  # no temp file left
    return back


@SETTINGS
@given(judgment_rows())
def test_judgments_roundtrip(rows):
    df = schema.new_judgments(rows) if rows else schema.empty(schema.JUDGMENTS)
    back = _roundtrip(df, "judgments")
    pd.testing.assert_frame_equal(back, df)
    schema.validate_judgments(back)


@st.composite
def item_rows(draw):
    n = draw(st.integers(1, 10))
    return [
        {
            "benchmark": "b",
            "split": draw(st.sampled_from(["s", "t"])),
            "item_id": f"{k}{draw(st.text(max_size=6))}",
            "task": draw(st.sampled_from(schema.TASKS)),
            "question": draw(OPT_TEXT),
            "context": draw(OPT_TEXT),
            "response_pos": draw(OPT_TEXT),
            "response_neg": draw(OPT_TEXT),
            "response": draw(OPT_TEXT),
            "reference": draw(OPT_TEXT),
            "gold": draw(OPT_TEXT),
            "meta": draw(
                st.dictionaries(
                    st.text(max_size=5),
                    st.one_of(st.none(), st.integers(), st.text(max_size=5), st.booleans()),
                    max_size=3,
                )
            ),
            "len_context": draw(OPT_FLOAT),
        }
        for k in range(n)
    ]


@SETTINGS
@given(item_rows())
def test_items_roundtrip(rows):
    df = schema.new_items(rows)
    back = _roundtrip(df, "items")
    pd.testing.assert_frame_equal(back, df)
    assert [json.loads(m) for m in back["meta"]] == [r["meta"] for r in rows]
