"""The lazy polars path gives the numbers of item_outcomes → pairwise_rates (same seed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest

from judgelab.analyses import pairwise
from judgelab.analyses.pairwise import rates as rates_mod
from judgelab.analyses.pairwise import scan
from judgelab.analyses.pairwise.scan_units import PatternUnits
from judgelab.core import estimates, stats, wild
from judgelab.core.scan import judgment_files, scan_judgments
from judgelab.errors import TableError


def judgments(
    seed: int = 0, sizes=(("big", 1200), ("small", 30)), clusters=True, cluster_of=None
) -> pd.DataFrame:
    """Real-shaped judgments: ties, invalid outputs, a missing second order, no-gold items."""
    rng = np.random.default_rng(seed)
    rows = []
    for split, n in sizes:
        for judge in ("j-a", "j-b"):
            for i in range(n):
                gold = i % 7 != 0  # some items have no gold label
                cl = None if i % 11 == 0 else ("" if i % 13 == 0 else f"src-{i // 4}")
                cl = cl if cluster_of is None else cluster_of(i)
                for order in (0, 1):
                    if order == 1 and i % 17 == 0:
                        continue  # second order missing
                    u = rng.random()
                    chosen = (
                        "pos" if u < 0.55 else "neg" if u < 0.8 else "tie" if u < 0.9 else None
                    )
                    if chosen is not None and rng.random() < 0.03:
                        chosen = "bogus"
                    valid = chosen is not None and rng.random() > 0.02
                    if i % 19 == 0 and cluster_of is None:
                        cl = f"alt-{order}"  # orders disagree: the first row's cluster counts
                    correct = (chosen == "pos") if gold else None
                    rows.append(
                        dict(
                            judge=judge,
                            benchmark="bench",
                            split=split,
                            item_id=f"it{i}",
                            sample=0,
                            order=order,
                            valid=valid,
                            chosen=chosen,
                            correct=correct,
                            cluster=cl,
                        )
                    )
    df = pd.DataFrame(rows)
    df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)  # orders interleaved
    df["correct"] = df["correct"].astype("boolean")
    df["sample"] = df["sample"].astype("int32")
    df["order"] = df["order"].astype("int8")
    return df if clusters else df.drop(columns=["cluster"])


def today(df: pd.DataFrame, **kw) -> pd.DataFrame:
    policy = kw.pop("invalid_policy", "repo")
    cluster = kw.get("cluster", "cluster")
    return pairwise.pairwise_rates(
        pairwise.item_outcomes(df, invalid_policy=policy, cluster=cluster), **kw
    )


def assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for col in want.columns:
        g, w = got[col].to_numpy(), want[col].to_numpy()
        if col in ("judge", "benchmark", "split", "aggregation", "metric", "method", "reason"):
            assert g.astype(str).tolist() == w.astype(str).tolist(), col
        else:
            np.testing.assert_array_equal(g.astype(float), w.astype(float), err_msg=col)


def test_value_columns_are_those_of_pairwise_rates():
    out = pairwise.item_outcomes(judgments(sizes=(("s", 20),)))
    _, names = rates_mod._value_matrix(out)
    assert tuple(names) == scan.VALUE_COLUMNS


@pytest.mark.parametrize("inference", ["wild", "bootstrap"])
@pytest.mark.parametrize("cluster", ["cluster", None])
def test_same_numbers_and_intervals_as_today(cluster, inference):
    df = judgments()
    kw = dict(n_boot=200, seed=3, cluster=cluster, inference=inference)
    want = today(df, **kw)
    got = scan.scan_rates(pl.from_pandas(df).lazy(), **kw)
    assert_same(got, want)  # exact: point estimates, intervals, p-values
    assert {"split", "pooled", "mean_of_splits"} <= set(got["aggregation"])
    assert got["n_incomplete"].max() > 0 and got["value"].notna().all() is not None
    if inference == "wild":  # the engine's rows: effective clusters beside every number
        assert got["method"].str.startswith(("wild cluster", "Wilson")).all()
        assert (got["n_eff_clusters"] <= got["n_clusters"] + 1e-9).all()


def test_units_keep_the_pandas_order_whatever_their_labels():
    """The scan sorts unit labels itself: mixed case, digits and non-ASCII labels must come
    in `np.unique`'s order, or the wild bootstrap's weights would fall on other units."""
    names = ["b", "B", "é", "a10", "a9", "Z", "ß", "日本", "e", "_x"]
    df = judgments(seed=4, sizes=(("s", 200),), cluster_of=lambda i: names[i % len(names)])
    kw = dict(n_boot=200, seed=2, cluster="cluster")
    assert_same(scan.scan_rates(pl.from_pandas(df).lazy(), **kw), today(df, **kw))


def test_rel3_33_scan_shares_the_engine_beyond_the_wild_limit(monkeypatch):
    """Cells whose B × G is too large for the wild arrays get the CR1 t(G−1) Wald row, the
    same from the scan's distinct item rows as from the pandas rows."""

    df = judgments(seed=12, clusters=False)
    kw = dict(n_boot=100, seed=5, metrics=["ca", "pos_a_rate_decisive", "run_gap"])
    monkeypatch.setattr(wild, "MAX_CELLS", 100 * 500)  # the 1200-item split is "large"
    want = today(df, **kw)
    got = scan.scan_rates(pl.from_pandas(df).lazy(), **kw)
    assert_same(got, want)
    big = want[want["split"] == "big"]
    assert (big["method"] == estimates.WALD).all()
    assert (want.loc[want["split"] == "small", "method"] != estimates.WALD).all()
    row = big[big["metric"] == "pos_a_rate_decisive"].iloc[0]
    inside = row["ci_low"] <= 0.5 <= row["ci_high"]
    assert inside == (row["p_value"] >= 0.05)


def test_clustered_cells_beyond_the_wild_limit_take_the_wald_row_in_label_order(monkeypatch):
    """Labelled units (clusters) beyond the limit: the Wald row from the units in label
    order, which both paths hold alike (no per-metric dedupe of the rows any more)."""

    df = judgments(
        seed=13, sizes=(("big", 1200), ("small", 30)), cluster_of=lambda i: f"c{i // 3}"
    )
    kw = dict(n_boot=100, seed=6, metrics=["ca", "pos_a_rate_decisive", "run_gap"])
    monkeypatch.setattr(wild, "MAX_CELLS", 100 * 300)  # the 400-cluster split is "large"
    want = today(df, **kw)
    assert_same(scan.scan_rates(pl.from_pandas(df).lazy(), **kw), want)
    assert (want.loc[want["split"] == "big", "method"] == estimates.WALD).all()
    assert (want.loc[want["split"] == "small", "method"] != estimates.WALD).all()


def test_clusters_of_one_item_resample_as_items_and_many_clusters_as_patterns():
    own = judgments(seed=7, cluster_of=lambda i: f"q{i}")
    kw = dict(n_boot=120, seed=9)
    assert_same(scan.scan_rates(pl.from_pandas(own).lazy(), **kw), today(own, **kw))
    # two items per cluster, verdicts pos/neg only: few distinct cluster sums (multinomial)
    pairs = judgments(seed=8, sizes=(("big", 2400),), cluster_of=lambda i: f"q{i // 2}")
    pairs = pairs[pairs["chosen"].isin(["pos", "neg"])].assign(valid=True, correct=True)
    pairs = pairs[pairs.groupby(["judge", "item_id"])["order"].transform("size") == 2]
    pairs["correct"] = (pairs["chosen"] == "pos").astype("boolean")
    got = scan.scan_rates(pl.from_pandas(pairs).lazy(), **kw)
    assert_same(got, today(pairs, **kw))
    assert got["n_clusters"].iloc[0] < got["n_items"].iloc[0]


def test_same_numbers_strict_policy_percentile_interval_without_cluster_column():
    df = judgments(seed=5, clusters=False)
    kw = dict(n_boot=150, seed=1, interval="percentile", invalid_policy="strict", level=0.9)
    got = scan.scan_rates(pl.from_pandas(df).lazy(), **kw)
    assert_same(got, today(df, **kw))


def test_reads_parquet_folder_with_filters(tmp_path):
    df = judgments(seed=2)
    half = len(df) // 2
    (tmp_path / "bench").mkdir()
    df.iloc[:half].to_parquet(tmp_path / "bench" / "a.parquet")
    df.iloc[half:].to_parquet(tmp_path / "bench" / "b.parquet")
    (tmp_path / "bench" / ".a.parquet.tmp.parquet").write_bytes(b"half-written")
    assert len(judgment_files(tmp_path)) == 2
    kw = dict(n_boot=100, seed=0)
    got = scan.scan_rates(tmp_path, judges=["j-b"], splits=["big"], **kw)
    sub = df[(df["judge"] == "j-b") & (df["split"] == "big")].reset_index(drop=True)
    assert_same(got, today(sub, **kw))
    assert set(got["judge"]) == {"j-b"}


def test_unit_values_match_item_outcomes():
    df = judgments(seed=4, sizes=(("s", 60),))
    per = scan.unit_values(pl.from_pandas(df).lazy()).collect().sort("_first")
    out = pairwise.item_outcomes(df)
    assert per["item_id"].to_list() == out["item_id"].tolist()
    assert per["cluster"].to_list() == [None if pd.isna(v) else v for v in out["cluster"]]
    np.testing.assert_array_equal(per["complete"].to_numpy(), out["complete"].to_numpy())
    np.testing.assert_array_equal(
        per["picks_a"].to_numpy(), out["picks_a"].fillna(0).to_numpy(dtype=int)
    )


def test_pattern_units_draw_as_bootstrap_sums():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 2, size=(400, 3)).astype(float)
    pats, inv = np.unique(rows, axis=0, return_inverse=True)
    units = PatternUnits(pats[::-1], np.bincount(inv.ravel())[::-1])
    want = stats.bootstrap_sums(rows, n_boot=50, rng=stats.rng_for(1, "k"))
    np.testing.assert_array_equal(units.draw(50, stats.rng_for(1, "k")), want)
    sub = stats.bootstrap_sums(rows[:, [2, 0]], n_boot=20, rng=stats.rng_for(2))
    np.testing.assert_array_equal(units.draw(20, stats.rng_for(2), [2, 0]), sub)
    with pytest.raises(ValueError, match="pass the rows"):
        PatternUnits(rows[:10], np.ones(10))


def test_bad_inputs_are_named(tmp_path):
    df = judgments(sizes=(("s", 10),))
    with pytest.raises(
        ValueError, match=r"unknown judge\(s\) \['nope'\]; known: \['j-a', 'j-b'\]"
    ):
        scan.scan_rates(pl.from_pandas(df).lazy(), judges=["nope"], n_boot=10)
    dup = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="several judgments for judge="):
        scan.scan_rates(pl.from_pandas(dup).lazy(), n_boot=10)
    with pytest.raises(ValueError, match="order must be 0 or 1, found 2"):
        scan.scan_rates(pl.from_pandas(df.assign(order=df["order"] * 2)).lazy(), n_boot=10)
    with pytest.raises(KeyError, match="lack column"):
        scan.scan_rates(pl.from_pandas(df.drop(columns=["valid"])).lazy(), n_boot=10)
    with pytest.raises(TableError, match="no judgments parquet"):
        scan_judgments(tmp_path / "nothing-*.parquet")


@pytest.mark.parametrize("cluster", ["cluster", None])
def test_several_passes_add_up_to_one(cluster):
    df = judgments(seed=6)
    kw = dict(n_boot=100, seed=2, cluster=cluster)
    lf = pl.from_pandas(df).lazy()
    # 600 rows a pass: one pass per judge, each split by item hash when there are no clusters
    assert_same(scan.scan_rates(lf, rows_per_pass=600, **kw), today(df, **kw))


@pytest.mark.parametrize("across", ["split", "judge"])
def test_judge_batches_give_the_rows_of_one_batch(monkeypatch, across):
    """The wild path holds one batch of judges' unit arrays at a time; an aggregate over
    judges takes them all at once. Same rows, same order, as the pandas path."""
    seen = []
    from judgelab.analyses.pairwise import scan_wild

    real = scan_wild._judge_batches
    spy = lambda *a: seen.extend(got := real(*a)) or got  # noqa: E731
    monkeypatch.setattr(scan_wild, "_judge_batches", spy)
    df = judgments(seed=8)
    kw = dict(n_boot=100, seed=4, cluster="cluster", across=across)
    assert_same(scan.scan_rates(pl.from_pandas(df).lazy(), rows_per_pass=600, **kw),
                today(df, **kw))  # fmt: skip
    judges = [set(batch) for batch in seen]
    assert len(seen) == (2 if across == "split" else 1), judges
    assert all(len(j) == (1 if across == "split" else 2) for j in judges)


def test_clusters_joined_from_the_items_table():
    from judgelab.core import clusters
    from judgelab.core.scan import attach_clusters

    df = judgments(seed=11, clusters=False)
    keys = df[["benchmark", "split", "item_id"]].drop_duplicates().reset_index(drop=True)
    n = len(keys)
    values = [None if i % 5 == 0 else ("" if i % 7 == 0 else f"doc-{i // 3}") for i in range(n)]
    items = keys.assign(cluster=pd.array(values, dtype="string")).iloc[: n - 9]  # some absent
    kw = dict(n_boot=100, seed=4)
    want = today(clusters.attach(df, items), **kw)
    lazy = attach_clusters(pl.from_pandas(df).lazy(), pl.from_pandas(items).lazy())
    got = scan.scan_rates(lazy, **kw)
    assert_same(got, want)
    assert (got["n_clusters"] < got["n_items"]).any()  # documents shared by items


@pytest.mark.parametrize("collide", [False, True])
def test_the_clusters_join_on_key_hashes_is_the_join_on_the_keys(monkeypatch, collide):
    """Items keyed by two hashes of their keys get the clusters the text keys give them:
    absent items and a null key match no item; colliding hashes fall back to the keys."""
    from judgelab.core import scan as core_scan

    df = judgments(seed=12, clusters=False)
    keys = df[["benchmark", "split", "item_id"]].drop_duplicates().reset_index(drop=True)
    items = keys.assign(cluster=[f"doc-{i // 4}" for i in range(len(keys))]).iloc[:-7]
    df.loc[df.index[:5], "split"] = None  # keys of no item (a null key): their own unit
    lazy = pl.from_pandas(df).lazy()
    plain = core_scan._joined_units(
        lazy.with_columns(pl.col(k).cast(pl.String) for k in ("benchmark", "split", "item_id")),
        pl.from_pandas(items).lazy(),
    ).collect()  # the join on the text keys
    if collide:  # every item's hashes alike: the items cannot be told apart by them
        monkeypatch.setattr(core_scan, "_SEEDS", (0, 0))
        monkeypatch.setattr(pl.Expr, "hash", lambda self, seed=0: pl.lit(1, pl.UInt64))
    hashed = core_scan._by_key_hashes(pl.from_pandas(items))
    assert (core_scan.KEY_HASHES[0] in hashed.columns) is not collide
    got = core_scan.attach_clusters(lazy, pl.from_pandas(items).lazy()).collect()
    assert got["cluster"].to_list() == plain["cluster"].to_list()
    assert got.columns == plain.columns
    assert got["cluster"].n_unique() > len(items) // 4  # absent items: each its own unit


def test_the_scans_distinct_moments_spread_to_every_moment_column():
    """Flag columns' squares and products are the columns themselves: only count columns
    get their own sums, and the spread gives back `units.moment_columns` exactly."""
    from judgelab.analyses.pairwise import units
    from judgelab.analyses.pairwise.rate_metrics import _layout
    from judgelab.analyses.pairwise.scan_values import COUNT_COLUMNS

    lay = _layout(list(scan.VALUE_COLUMNS))
    per = scan.unit_values(pl.from_pandas(judgments(seed=3)).lazy()).collect()
    values = per.select(scan.VALUE_COLUMNS).to_numpy().astype(np.float64)
    exprs, spread = scan._moment_exprs(lay)
    got = per.select(e.alias(f"_m{i}") for i, e in enumerate(exprs)).to_numpy()[:, spread]
    np.testing.assert_array_equal(got, units.moment_columns(values, lay.num, lay.den))
    assert len(exprs) < got.shape[1] and COUNT_COLUMNS <= set(scan.VALUE_COLUMNS)
