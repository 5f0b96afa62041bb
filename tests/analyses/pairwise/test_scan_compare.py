"""Notebook 01's lazy path (issue 38 item 1): judge comparisons and single-order rates.

Three judges on real-shaped judgments (`test_scan.judgments`: ties, invalid and unparseable
outputs, items without gold, a missing second order, items without a cluster or with an
empty one, orders that disagree on the cluster, rows shuffled), plus a third judge that skips
some items and some second orders: `compare_judges`, `compare_reason` and
`single_order_rates` of the lazy scan must equal the pandas path for the same seed.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import polars as pl
import pytest

from judgelab.analyses import pairwise
from judgelab.analyses.pairwise import lazy as lazy_mod
from judgelab.analyses.pairwise import scan_compare
from judgelab.analyses.pairwise.lazy import LazyOutcomes

from .test_scan import judgments


def _three_judges(seed: int = 5) -> pd.DataFrame:
    df = judgments(seed, sizes=(("big", 400), ("small", 40)))
    rng = np.random.default_rng(seed)
    third = df[df["judge"] == "j-b"].copy()
    third["judge"] = "j-c"
    flip = rng.random(len(third)) < 0.3
    third.loc[flip, "chosen"] = third.loc[flip, "chosen"].map({"pos": "neg", "neg": "pos"})
    third["correct"] = (
        (third["chosen"] == "pos").astype("boolean").where(df.loc[third.index, "correct"].notna())
    )
    item = third["item_id"].str[2:].astype(int)
    third = third[(item % 9 != 4) & ~((item % 10 == 3) & (third["order"] == 1))]
    out = pd.concat([df, third]).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return out


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return _three_judges()


def _both(df: pd.DataFrame, cluster: str | None):
    eager = pairwise.item_outcomes(df, cluster=cluster)
    lazy = pairwise.item_outcomes(pl.from_pandas(df).lazy(), cluster=cluster)
    assert isinstance(lazy, LazyOutcomes)
    return eager, lazy


@pytest.mark.parametrize("cluster", ["cluster", None])
@pytest.mark.parametrize("metric", ["ca", "a1", "oa", "cons"])
def test_compare_judges_equals_the_pandas_path(table, metric, cluster):
    eager, lazy = _both(table, cluster)
    for missing in ("exclude", "wrong"):
        for inference in ("wild", "bootstrap"):
            kw = dict(metric=metric, n_boot=99, seed=4, cluster=cluster, missing=missing)
            want = pairwise.compare_judges(eager, inference=inference, **kw)
            got = pairwise.compare_judges(lazy, inference=inference, **kw)
            pd.testing.assert_frame_equal(got, want, check_dtype=False)
            assert len(want) == 3 * 3  # three pairs x (two splits + pooled)
            assert want["missing_1"].sum() + want["missing_2"].sum() > 0


def test_the_items_are_read_once_for_every_comparison(table, monkeypatch):
    _, lazy = _both(table, "cluster")
    calls = []
    real = scan_compare.unit_values
    monkeypatch.setattr(
        scan_compare, "unit_values", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    assert pairwise.compare_reason(lazy) is None
    for metric in ("ca", "cons"):
        pairwise.compare_judges(lazy, metric=metric, n_boot=19)
    single = pairwise.single_order_rates(lazy.judgments, n_boot=19)  # the same scan
    assert len(calls) == 1 and len(single) > 0
    pairwise.single_order_rates(pl.from_pandas(table).lazy(), n_boot=19)  # another scan
    assert len(calls) == 2


def test_judge_by_judge_passes_give_the_same_comparison(table, monkeypatch):
    monkeypatch.setattr(scan_compare, "ROWS_PER_PASS", 500)
    for cluster in ("cluster", None):  # per judge; without clusters also split by item hash
        eager, lazy = _both(table, cluster)
        want = pairwise.compare_judges(eager, n_boot=99, seed=1, cluster=cluster)
        got = pairwise.compare_judges(lazy, n_boot=99, seed=1, cluster=cluster)
        pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_compare_reason_equals_the_pandas_path(table):
    one = table[table["judge"] == "j-a"]
    apart = table[(table["judge"] == "j-a") & (table["order"] == 0)]
    apart = pd.concat([apart, table[table["judge"] == "j-b"]])
    for df in (table, one, apart):
        eager, lazy = _both(df, "cluster")
        assert pairwise.compare_reason(lazy) == pairwise.compare_reason(eager)
    assert "only one judge (j-a)" in pairwise.compare_reason(_both(one, None)[1])


def test_duplicate_orders_raise_the_pandas_message(table):
    dup = pd.concat([table, table.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="several judgments") as want:
        pairwise.item_outcomes(dup)
    with pytest.raises(ValueError, match="several judgments") as got:
        pairwise.compare_judges(pairwise.item_outcomes(pl.from_pandas(dup).lazy()))
    plain = re.sub(r"np\.\w+\(([^)]*)\)", r"\1", str(want.value))  # numpy scalars' reprs
    assert str(got.value) == plain


@pytest.mark.parametrize("cluster", ["cluster", None])
def test_single_order_rates_equal_the_pandas_path(table, cluster):
    kw = dict(cluster=cluster, n_boot=99, seed=2)
    want = pairwise.single_order_rates(table, **kw)
    got = pairwise.single_order_rates(pl.from_pandas(table).lazy(), **kw)
    assert len(want) > 0
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_a_complete_scan_has_no_single_order_rows(table):
    complete = table[table["judge"] == "j-a"]
    item = complete["item_id"].str[2:].astype(int)
    complete = complete[item % 17 != 0]  # the items whose second order is missing
    lf = pl.from_pandas(complete).lazy()
    assert scan_compare.single_rows(lf, ["judge", "benchmark", "split"], ["judge"]).empty
    got = pairwise.single_order_rates(lf, n_boot=19)
    want = pairwise.single_order_rates(complete, n_boot=19)
    assert got.empty and want.empty and list(got.columns) == list(want.columns)


def test_coverage_counts_from_the_units_a_comparison_read(table):
    items = table[["benchmark", "split", "item_id"]].drop_duplicates()
    items = pd.concat([items.iloc[5:], items.iloc[:2].assign(item_id=["new-1", "new-2"])])
    eager, lazy = _both(table, "cluster")
    want = pairwise.coverage(eager, items)
    assert lazy_mod.cached(lazy.judgments, lazy.groups) is None
    before = pairwise.coverage(lazy, items)  # the scan's own group-by
    pairwise.compare_reason(lazy)
    assert lazy_mod.cached(lazy.judgments, lazy.groups) is not None
    after = pairwise.coverage(lazy, items)  # the comparison's units
    pd.testing.assert_frame_equal(before, want)
    pd.testing.assert_frame_equal(after, want)
    assert want["n_missing"].sum() > 0 and want["n_unknown"].sum() > 0
    assert want["n_incomplete"].sum() > 0
