"""`core.scan.bare`: a large source's scan without its clusters' join, for queries that
read no cluster (the join costs every query a pass over all rows)."""

from __future__ import annotations

import gc

import pandas as pd
import polars as pl
import pytest

from judgelab.core import scan


def _frames():
    judgments = pl.DataFrame(
        {
            "benchmark": ["b"] * 6,
            "split": ["s", "s", "t", "t", "s", "t"],
            "item_id": ["1", "2", "1", "3", "1", "9"],
            "judge": ["j1", "j1", "j1", "j2", "j2", "j2"],
            "order": [0, 1, 0, 1, 0, 1],
        }
    ).lazy()
    items = pl.DataFrame(
        {
            "benchmark": ["b", "b", "b"],
            "split": ["s", "s", "t"],
            "item_id": ["1", "2", "1"],
            "cluster": ["doc-a", None, "doc-a"],
        }
    ).lazy()
    return judgments, items


def test_bare_is_the_joined_table_without_cluster_in_the_same_row_order():
    judgments, items = _frames()
    joined = scan.attach_clusters(judgments, items)
    want = joined.collect().drop("cluster")
    got = scan.bare(joined)
    assert "cluster" not in got.collect_schema().names()
    pd.testing.assert_frame_equal(got.collect().to_pandas(), want.to_pandas())
    assert "join" not in got.explain().lower() and "join" in joined.explain().lower()


def test_filtered_keeps_the_bare_scan_filtered_alike_and_others_are_their_own():
    judgments, items = _frames()
    joined = scan.attach_clusters(judgments, items)
    only = scan.filtered(joined, pl.col("judge") == "j2")
    want = only.collect().drop("cluster").to_pandas()
    pd.testing.assert_frame_equal(scan.bare(only).collect().to_pandas(), want)
    plain = judgments.filter(pl.col("judge") == "j1")
    again = scan.filtered(plain, pl.col("order") == 0)
    assert scan.bare(plain) is plain and scan.bare(again) is again
    assert scan.bare(only.select("judge")) is not scan.bare(only)  # a derived frame: itself


def test_a_dropped_frame_forgets_its_bare_scan():
    judgments, items = _frames()
    joined = scan.attach_clusters(judgments, items)
    key = id(joined)
    assert key in scan._BARE
    del joined
    gc.collect()
    assert key not in scan._BARE


@pytest.mark.parametrize("column", ["judge", "split"])
def test_bare_counts_equal_the_joined_counts(column):
    judgments, items = _frames()
    joined = scan.attach_clusters(judgments, items)
    count = pl.col(column).value_counts(sort=True)
    assert scan.bare(joined).select(count).collect().equals(joined.select(count).collect())
