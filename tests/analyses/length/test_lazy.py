"""The length family's lazy path (issue 38 item 1): the same tables as the pandas path.

Two simulated benchmarks' judgments (unequal clusters, effects varying by cluster) for three
judges, with what real tables hold: invalid verdicts, judgments without gold, ties in
length, items without a cluster, an item judged in one order only. They are written to
parquet and read back twice — into pandas, and as the lazy scan a large source gives
(`catalog.lazy.scan`) — and every public function that gains the lazy path must return the
same table for the same seed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length
from judgelab.analyses.length import lazy
from judgelab.data.catalog import core as catalog_core
from judgelab.data.catalog import lazy as catalog_lazy
from judgelab.simulate import length as sim
from judgelab.simulate.base import scenario

N_BOOT = 199


def _judgments(seed: int, split: str, bias: float):
    design = replace(scenario("unequal/varying/G8/n48").design(), n_clusters=9, per_cluster=7)
    s = sim.pairwise_lengths(np.random.default_rng(seed), design, bias=bias)
    items, judgments = s.items.copy(), s.judgments.copy()
    items["split"] = split
    judgments["split"] = split
    return items, judgments


def _pointwise_items() -> pd.DataFrame:
    """Twelve graded answers (a 1–10 score), in three clusters of unequal size."""
    n = 12
    return pd.DataFrame(
        {
            "benchmark": "sim", "split": "graded", "item_id": [f"g{i}" for i in range(n)],
            "task": "pointwise", "response": ["word " * (5 + 7 * i) for i in range(n)],
            "gold": "Correct", "cluster": [f"doc-{min(i // 3, 2)}" for i in range(n)],
            "len_context": 0.0, "len_pos": np.nan, "len_neg": np.nan,
            "len_response": [5.0 + 7 * i for i in range(n)], "len_unit": "words",
        }
    )  # fmt: skip


def _pointwise(items: pd.DataFrame, rng) -> list[pd.DataFrame]:
    """Each judge grades each answer once: a numeric verdict (some unparseable), `correct`."""
    template = _pointwise_items()
    out = []
    for name in ["judge-a", "judge-b", "judge-c"]:
        score = rng.integers(1, 11, len(template))
        verdict = [str(s) if s != 3 else "n/a" for s in score]
        out.append(
            pd.DataFrame(
                {
                    "benchmark": "sim", "split": "graded", "item_id": template["item_id"],
                    "judge": name, "model": name, "order": 0, "sample": 0,
                    "verdict": verdict, "output": verdict, "valid": True, "chosen": None,
                    "correct": score >= 6,
                }
            )
        )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    rng = np.random.default_rng(7)
    i1, j1 = _judgments(3, "test", 0.6)
    i2, j2 = _judgments(4, "dev", -0.3)
    items = pd.concat([i1, i2], ignore_index=True)
    items.loc[[2, 40], "len_neg"] = items.loc[[2, 40], "len_pos"]  # ties in length
    items.loc[[5, 6, 70], "cluster"] = None  # items without a cluster: their own unit
    base = pd.concat([j1, j2], ignore_index=True).drop(columns=["cluster"])
    judges = []
    for k, name in enumerate(["judge-a", "judge-b", "judge-c"]):
        j = base.copy()
        j["judge"] = name
        flip = rng.random(len(j)) < 0.15 * k
        j.loc[flip, "chosen"] = j.loc[flip, "chosen"].map({"pos": "neg", "neg": "pos"})
        bad = rng.random(len(j)) < 0.04
        j.loc[bad, ["chosen", "valid"]] = [None, False]
        if k == 1:
            j.loc[j["split"] == "dev", "correct"] = pd.NA  # no gold for this judge's dev rows
        judges.append(j)
    judgments = pd.concat([*judges, *_pointwise(items, rng)], ignore_index=True)
    judgments = judgments.drop(index=judgments.index[(judgments["item_id"] == "c0003-i1")][:1])
    items = pd.concat([items, _pointwise_items()], ignore_index=True)
    path = tmp_path_factory.mktemp("lazy-length") / "judgments.parquet"
    judgments.to_parquet(path)
    eager = catalog_core.with_clusters(pd.read_parquet(path), items)
    scan = catalog_lazy.scan([path], items, None)
    return items, eager, scan


def _same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want) > 0
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True),
        want.reset_index(drop=True),
        check_dtype=False,
        check_categorical=False,
        rtol=1e-9,
    )


def _both(tables, build):
    items, eager, scan = tables
    return build(items, eager), build(items, scan)


def test_the_tables_are_the_pandas_tables(tables):
    items, eager, scan = tables
    for fn in (length.pairwise_verdicts, length.item_table):
        want = fn(items, eager)
        got = fn(items, scan)
        assert lazy.is_lazy(got) and not lazy.is_lazy(want)
        got = lazy.collect(got)
        keys = ["judge", "benchmark", "split", "item_id", "sample"]
        keys += ["order"] if "order" in want else []
        got = got.sort_values(keys).reset_index(drop=True)
        want = want.sort_values(keys).reset_index(drop=True)
        for c in want.columns:  # nullable / categorical dtypes differ; the values may not
            a, b = want[c].astype(object), got[c].astype(object)
            assert ((a == b) | (a.isna() & b.isna())).all(), c


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"abs_diff_edges": [0, 16, 64, 256], "conditions": ("all",)},
        {"by": ["judge", "split"], "conditions": ("all", "balanced")},
        {"cluster": None},
    ],
)
def test_picks_longer(tables, kw):
    want, got = _both(
        tables,
        lambda i, j: length.picks_longer(length.pairwise_verdicts(i, j), n_boot=N_BOOT, **kw),
    )
    _same(got, want)


def test_picks_longer_percentile_bootstrap_reads_the_table(tables):
    want, got = _both(
        tables,
        lambda i, j: length.picks_longer(
            length.pairwise_verdicts(i, j), n_boot=N_BOOT, inference="bootstrap"
        ),
    )
    _same(got, want)


@pytest.mark.parametrize("kw", [{}, {"by": "value", "edges": [0, 50, 150, 400]}])
def test_accuracy_by_length(tables, kw):
    want, got = _both(
        tables,
        lambda i, j: length.accuracy_by_length(length.item_table(i, j), n_boot=N_BOOT, **kw),
    )
    _same(got, want)


@pytest.mark.parametrize("mode", ["cumulative", "disjoint"])
def test_accuracy_by_diff_bucket(tables, mode):
    want, got = _both(
        tables,
        lambda i, j: length.accuracy_by_diff_bucket(
            length.item_table(i, j), thresholds=[1, 16, 64], mode=mode, n_boot=N_BOOT
        ),
    )
    _same(got, want)


@pytest.mark.parametrize("transform", ["log_ratio", "linear"])
def test_length_regression(tables, transform):
    want, got = _both(
        tables,
        lambda i, j: length.length_regression(
            length.pairwise_verdicts(i, j), transform=transform, n_boot=N_BOOT
        ),
    )
    _same(got, want)
    assert want["wild_p"].notna().any()  # the score bootstrap ran (not beyond its limit)


def test_length_sensitivity_and_score_reason(tables):
    want, got = _both(
        tables, lambda i, j: length.length_sensitivity(length.pairwise_verdicts(i, j))
    )
    _same(got, want)
    reasons = _both(tables, lambda i, j: length.score_reason(length.item_table(i, j)))
    assert reasons[0] is None and reasons[1] is None  # the graded answers have scores


def test_score_sections_read_the_scored_rows(tables):
    for fn in (
        lambda t: length.score_length_regression(t, n_boot=N_BOOT),
        lambda t: length.accuracy_by_length(t, metrics_=("score",), n_boot=N_BOOT),
    ):
        want, got = _both(tables, lambda i, j, fn=fn: fn(length.item_table(i, j)))
        _same(got, want)


def test_item_counts(tables):
    want, got = _both(tables, lambda i, j: length.item_counts(length.item_table(i, j)))
    _same(got, want)
