"""Resampling units (`core.clusters`): rules, derivation, attaching to judgments, codes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgelab.core import clusters


def _items(**cols) -> pd.DataFrame:
    n = len(next(iter(cols.values())))
    base = {"benchmark": ["b"] * n, "split": ["s"] * n, "item_id": [str(i) for i in range(n)]}
    return pd.DataFrame({**base, **cols})


@pytest.mark.parametrize("rule", ["item", "question", "context", "meta.source_id"])
def test_known_rules_pass(rule):
    assert clusters.check_rule(rule) == rule


@pytest.mark.parametrize("rule", ["doc", "meta.", "Question", "", "meta"])
def test_unknown_rules_name_the_choices(rule):
    with pytest.raises(ValueError, match=r"unknown cluster rule .*meta\.<key>"):
        clusters.check_rule(rule)


def test_item_rule_makes_every_item_its_own_unit():
    got = clusters.derive(_items(question=["q", "q", "q"]), "item")
    assert got.tolist() == ["b|s|item|0", "b|s|item|1", "b|s|item|2"]
    assert got.name == "cluster"


def test_question_and_context_group_equal_texts_and_fall_back_on_empty():
    it = _items(question=["q1", "q1", "q2", None], context=["d", "", "d", "d"])
    q = clusters.derive(it, "question")
    assert q.tolist() == ["b|question|q1", "b|question|q1", "b|question|q2", "b|s|item|3"]
    c = clusters.derive(it, "context")
    assert c.tolist() == ["b|context|d", "b|s|item|1", "b|context|d", "b|context|d"]


def test_a_missing_text_column_falls_back_to_the_item_not_one_cluster():
    got = clusters.derive(_items(question=["a", "b"]), "context")
    assert got.nunique() == 2


def test_meta_rule_reads_the_key_and_falls_back_per_item():
    meta = [
        json.dumps({"doc": 7}),
        json.dumps({"doc": 7}),
        json.dumps({"other": 1}),
        "not json",
        None,
        json.dumps({"doc": ""}),
    ]
    got = clusters.derive(_items(meta=meta), "meta.doc").tolist()
    assert got[:2] == ["b|meta|7", "b|meta|7"]
    assert got[2:] == ["b|s|item|2", "b|s|item|3", "b|s|item|4", "b|s|item|5"]


def test_same_text_is_one_cluster_across_splits_but_two_across_benchmarks():
    it = pd.DataFrame(
        {
            "benchmark": ["a", "a", "b"],
            "split": ["x", "y", "x"],
            "item_id": ["1", "1", "1"],
            "question": ["same", "same", "same"],
        }
    )
    got = clusters.derive(it, "question")
    # one query judged in two settings (ContextEval's splits) is one unit
    assert got.tolist() == ["a|question|same", "a|question|same", "b|question|same"]


def test_attach_copies_the_items_cluster_and_falls_back_for_missing_items():
    items = _items(question=["q", "q"]).assign(cluster=["c1", None])
    judg = pd.DataFrame(
        {
            "benchmark": ["b", "b", "b", "b"],
            "split": ["s"] * 4,
            "item_id": ["0", "0", "1", "9"],
            "judge": ["j", "k", "j", "j"],
            "cluster": ["stale"] * 4,
        }
    )
    out = clusters.attach(judg, items)
    assert out["cluster"].tolist() == ["c1", "c1", "b|s|item|1", "b|s|item|9"]
    assert len(out) == len(judg) and list(out.columns).count("cluster") == 1
    assert judg["cluster"].tolist() == ["stale"] * 4  # input untouched


def test_attach_without_an_items_cluster_column_gives_item_units():
    items = _items(question=["q", "q"])
    judg = pd.DataFrame({"benchmark": ["b"], "split": ["s"], "item_id": ["1"]})
    assert clusters.attach(judg, items)["cluster"].tolist() == ["b|s|item|1"]


def test_codes_use_the_column_then_the_item_then_the_row():
    df = pd.DataFrame({"item_id": ["1", "2", "3"], "cluster": ["a", "a", None]})
    c = clusters.codes(df)
    assert c[0] == c[1] != c[2]
    assert len(set(clusters.codes(df, None))) == 3  # legacy: items independent
    assert clusters.codes(pd.DataFrame({"x": [1, 2]})).tolist() == [0, 1]
    assert clusters.count(df) == 2 and clusters.count(df, None) == 3


def test_sum_by_builds_per_cluster_sums():
    got = clusters.sum_by(np.array([1.0, 2.0, 3.0]), np.array([1, 0, 1]))
    assert got.tolist() == [2.0, 4.0]
    assert clusters.sum_by(np.zeros((0, 2)), np.zeros(0, dtype=int)).shape == (0, 2)


def test_sum_by_large_input_adds_in_row_order_like_np_add_at(monkeypatch):
    rng = np.random.default_rng(3)
    values = rng.normal(size=(5_000, 7)) * 10.0 ** rng.integers(-8, 8, size=(5_000, 7))
    values[3, 2], values[40, 0] = np.nan, np.inf
    unit = rng.integers(0, 300, 5_000)
    want = np.zeros((300, 7))
    np.add.at(want, unit, values)
    monkeypatch.setattr(clusters, "SPARSE_FROM", 0)
    got = clusters.sum_by(values, unit)
    np.testing.assert_array_equal(got, want)  # bitwise: the same additions in the same order
    np.testing.assert_array_equal(clusters.sum_by(np.asfortranarray(values), unit), want)
    assert clusters.sum_by(values[:, 0], unit).shape == (300,)


def test_codes_and_count_of_an_empty_frame():
    empty = pd.DataFrame({"benchmark": [], "split": [], "item_id": []})
    assert clusters.codes(empty).tolist() == [] and clusters.count(empty) == 0
    assert clusters.codes(empty.assign(cluster=[])).tolist() == []


@pytest.mark.parametrize(
    "values",
    [
        np.array([5, 0, 5, 9, 2, 2]),
        np.array([10**9, 3, 10**9]),  # too sparse for a bincount
        np.array([-1, 4, -1]),
        np.array(["b", "a", "b"], dtype=object),
        np.array([0.5, 0.5, 2.0]),
        np.array([], dtype=np.int64),
    ],
)
def test_distinct_counts_and_sorted_codes_equal_np_unique(values):
    uniq, inverse = np.unique(values, return_inverse=True)
    assert clusters.n_distinct(values) == len(uniq)
    np.testing.assert_array_equal(clusters.sorted_codes(values), inverse.ravel())
