"""Length bins, length-difference buckets and accuracy per bin."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length
from judgelab.errors import ChoiceError


def test_diff_buckets_boundaries_and_nesting():
    d = [-128, -127, -64, -1, 0, 1, 64, 127, 128]
    table = pd.DataFrame({"len_diff": d})
    out = length.diff_buckets(table, thresholds=[1, 64, 128])
    got = {b: sorted(g["len_diff"]) for b, g in out.groupby("bucket", observed=True)}
    # d <= -x and d >= x, boundary included
    assert got["N(128+)"] == [-128]
    assert got["N(64+)"] == [-128, -127, -64]
    assert got["N(1+)"] == [-128, -127, -64, -1]
    assert got["d = 0"] == [0]
    assert got["P(1+)"] == [1, 64, 127, 128]
    assert got["P(64+)"] == [64, 127, 128]
    assert got["P(128+)"] == [128]
    assert set(got["N(128+)"]) <= set(got["N(64+)"]) <= set(got["N(1+)"])
    assert set(got["P(128+)"]) <= set(got["P(64+)"]) <= set(got["P(1+)"])
    assert list(out["bucket"].cat.categories) == [
        "N(128+)",
        "N(64+)",
        "N(1+)",
        "d = 0",
        "P(1+)",
        "P(64+)",
        "P(128+)",
    ]


def test_diff_buckets_disjoint_each_row_once():
    table = pd.DataFrame({"len_diff": [-128, -127, -64, -1, 0, 1, 64, 127, 128]})
    out = length.diff_buckets(table, thresholds=[1, 64, 128], mode="disjoint")
    got = {b: sorted(g["len_diff"]) for b, g in out.groupby("bucket", observed=True)}
    assert got["N(64+)"] == [-127, -64]  # -128 < d <= -64
    assert got["P(1+)"] == [1]  # 1 <= d < 64
    assert sorted(out["len_diff"]) == sorted(table["len_diff"])  # every row exactly once


def test_diff_buckets_rejects_zero_threshold_and_bad_mode():
    with pytest.raises(ValueError, match="> 0"):
        length.diff_buckets(pd.DataFrame({"len_diff": [0]}), thresholds=[0, 16])
    with pytest.raises(ValueError, match="mode"):
        length.diff_buckets(pd.DataFrame({"len_diff": [0]}), mode="overlap")
    with pytest.raises(KeyError):
        length.diff_buckets(pd.DataFrame({"x": [0]}))


def test_percentile_bins_cover_every_row_once(rng):
    values = pd.Series(rng.integers(0, 30, size=500).astype(float))  # many ties
    bins = length.bin_lengths(values, edges=[0, 20, 40, 60, 80, 100])
    assert bins.notna().all()
    assert bins.value_counts().sum() == 500


def test_percentile_bins_hand_values():
    # percentile 50 of 1..10 = 5.5: bins [1, 5.5] and (5.5, 10]
    bins = length.bin_lengths(pd.Series(np.arange(1, 11.0)), edges=[0, 50, 100])
    assert bins.value_counts(sort=False).tolist() == [5, 5]
    # the label names the largest length in the bin: 5 (rounding the cut 5.5 gave "≤6",
    # a length of the second bin)
    assert list(bins.cat.categories) == ["P0–50 (≤5)", "P50–100 (≤10)"]


def test_percentile_bin_labels_never_name_a_length_of_the_next_bin():
    # 1..10 at percentiles 20/40/60/80 = 2.8, 4.6, 6.4, 8.2: bins {1,2} {3,4} {5,6} {7,8}
    # {9,10}; rounding the cuts labelled them ≤3, ≤5, ≤6, ≤8 (3 and 5 sit in the next bin)
    x = pd.Series(np.arange(1, 11.0))
    bins = length.bin_lengths(x, edges=[0, 20, 40, 60, 80, 100])
    assert list(bins.cat.categories) == [
        "P0–20 (≤2)",
        "P20–40 (≤4)",
        "P40–60 (≤6)",
        "P60–80 (≤8)",
        "P80–100 (≤10)",
    ]
    # mean lengths of pairs are halves: 1, 1.5, 2, 2.5 -> median 1.75: {1, 1.5} {2, 2.5}
    halves = length.bin_lengths(pd.Series([1.0, 1.5, 2, 2.5]), edges=[0, 50, 100])
    assert list(halves.cat.categories) == ["P0–50 (≤1.5)", "P50–100 (≤2.5)"]
    for label, top in zip(bins.cat.categories, [2, 4, 6, 8, 10], strict=True):
        assert x[bins == label].max() == top


def test_value_bins_left_closed_last_open():
    bins = length.bin_lengths(pd.Series([0, 15, 16, 63, 64, 300.0]), edges=[0, 16, 64], by="value")
    assert bins.astype(str).tolist() == [
        "[0, 16)",
        "[0, 16)",
        "[16, 64)",
        "[16, 64)",
        "≥64",
        "≥64",
    ]


def test_bin_lengths_rejects_unknown_kind():
    with pytest.raises(
        ChoiceError, match=r"by must be one of \('percentile', 'value'\), got 'rank'"
    ):
        length.bin_lengths(pd.Series([1.0]), edges=[0, 100], by="rank")


def test_accuracy_by_diff_bucket_hand_values():
    table = pd.DataFrame(
        {
            "judge": "j",
            "benchmark": "b",
            "split": "s",
            "item_id": ["1", "2", "3", "4"],
            "len_diff": [-20.0, -2.0, 0.0, 40.0],
            "correct": [0.0, 1.0, 1.0, 1.0],
            "len_unit": "words",
        }
    )
    out = length.accuracy_by_diff_bucket(table, thresholds=[1, 16], n_boot=50)
    got = out.set_index(out["bucket"].astype(str))
    assert got.loc["N(16+)", "value"] == 0.0 and got.loc["N(16+)", "n"] == 1
    assert got.loc["N(1+)", "value"] == 0.5 and got.loc["N(1+)", "n"] == 2
    assert got.loc["d = 0", "n"] == 1 and got.loc["P(16+)", "value"] == 1.0
    assert out["len_unit"].unique().tolist() == ["words"]
