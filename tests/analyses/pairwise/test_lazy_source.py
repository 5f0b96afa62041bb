"""The lazy path of a large source (issue 38 item 1): same numbers as the pandas path.

A generated file-imported source (`bench.notebooks.make_home`) is loaded twice: as pandas
(`catalog.LAZY_ROWS` above its rows) and as a lazy polars scan (the threshold forced to 0).
Every public function that gains the lazy path must give the same table for the same seed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from judgelab.analyses import pairwise
from judgelab.analyses.pairwise.lazy import LazyOutcomes
from judgelab.data import catalog
from judgelab.data.catalog import core
from judgelab.reporting import explore

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.notebooks import make_home  # noqa: E402


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    path = tmp_path_factory.mktemp("lazy-home")
    return make_home(path, 3000)


def _load(monkeypatch, home, lazy: bool, **select):
    for key, value in home.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(core, "LAZY_ROWS", 0 if lazy else 10**12)
    loaded = catalog.load_source("synthetic", allow_lazy=True)
    return loaded, catalog.select(loaded, **select)


def test_the_choice_follows_the_row_threshold(monkeypatch, home):
    _, small = _load(monkeypatch, home, lazy=False)
    loaded, large = _load(monkeypatch, home, lazy=True)
    assert isinstance(small, pd.DataFrame) and isinstance(large, pl.LazyFrame)
    assert isinstance(loaded.judgments, pl.LazyFrame)
    assert large.select(pl.len()).collect().item() == len(small)
    assert isinstance(pairwise.item_outcomes(large), LazyOutcomes)
    # a caller that did not allow it (a notebook whose analyses take pandas) gets pandas
    assert isinstance(catalog.load_source("synthetic").judgments, pd.DataFrame)


@pytest.mark.parametrize(("inference", "rows_per_pass"), [("wild", None), ("bootstrap", 500)])
def test_rates_and_coverage_equal_the_pandas_path(monkeypatch, home, inference, rows_per_pass):
    from judgelab.analyses.pairwise import lazy as lazy_mod

    if rows_per_pass:  # read a judge at a time
        monkeypatch.setattr(lazy_mod, "ROWS_PER_PASS", rows_per_pass)
    got = {}
    for lazy in (False, True):
        loaded, table = _load(monkeypatch, home, lazy, judges=["judge-00", "judge-02"])
        out = pairwise.item_outcomes(table, cluster="cluster")
        rates = pairwise.pairwise_rates(
            out, n_boot=99, seed=3, cluster="cluster", inference=inference
        )
        got[lazy] = (rates, pairwise.coverage(out, loaded.items))
    pd.testing.assert_frame_equal(got[False][0], got[True][0])
    pd.testing.assert_frame_equal(got[False][1], got[True][1])
    pref = [pairwise.position_preference(got[lazy][0]) for lazy in (False, True)]
    pd.testing.assert_frame_equal(*pref)
    assert set(got[True][0]["judge"]) == {"judge-00", "judge-02"}


def test_coverage_splits_a_large_judge_by_item(monkeypatch, home):
    """A judge beyond `ROWS_PER_PASS` is counted in parts (an item in one): the same table."""
    from judgelab.analyses.pairwise import lazy as lazy_mod

    loaded, table = _load(monkeypatch, home, lazy=False)
    want = pairwise.coverage(pairwise.item_outcomes(table), loaded.items)
    parts = []
    real = lazy_mod.passes

    def spy(lf, carry, rows):
        parts.append(got := real(lf, carry, rows))
        return got

    monkeypatch.setattr(lazy_mod, "passes", spy)
    monkeypatch.setattr(lazy_mod, "ROWS_PER_PASS", 250)  # ~600 rows a judge: 3 parts
    loaded, table = _load(monkeypatch, home, lazy=True)
    got = pairwise.coverage(pairwise.item_outcomes(table), loaded.items)
    pd.testing.assert_frame_equal(want, got)
    assert len(parts) == 1 and len(parts[0]) == 3 * len(want["judge"].unique())


@pytest.mark.parametrize(
    "category", ["flipped", "consistently_wrong", "consistently_right", "invalid", "longer_worse"]
)
@pytest.mark.parametrize("judge", ["judge-01", None])
def test_cases_and_examples_equal_the_pandas_path(monkeypatch, home, category, judge):
    from judgelab.analyses.pairwise import lazy as lazy_mod

    monkeypatch.setattr(lazy_mod, "ROWS_PER_PASS", 500)  # paired a judge at a time
    got = {}
    for lazy in (False, True):
        loaded, table = _load(monkeypatch, home, lazy)
        found = explore.cases(table, loaded.items, category, judge=judge)
        got[lazy] = (found, explore.examples(found, 4, seed=2), explore.summary(found))
    for want, have in zip(got[False], got[True], strict=True):
        pd.testing.assert_frame_equal(want, have, check_dtype=False)
    assert len(got[True][0]) > 0


def test_a_large_judges_cases_are_paired_in_parts_in_order(monkeypatch, home):
    """A judge beyond `ROWS_PER_PASS` is paired in parts by item, merged back in key order."""
    from judgelab.analyses.pairwise import lazy as lazy_mod

    loaded, table = _load(monkeypatch, home, lazy=False)
    want = explore.cases(table, loaded.items, "flipped")
    parts = []
    real = lazy_mod.judge_passes

    def spy(lf, carry, rows):
        parts.extend(got := real(lf, carry, rows))
        return got

    monkeypatch.setattr(lazy_mod, "judge_passes", spy)
    monkeypatch.setattr(lazy_mod, "ROWS_PER_PASS", 250)  # ~600 rows a judge: 3 parts
    loaded, table = _load(monkeypatch, home, lazy=True)
    got = explore.cases(table, loaded.items, "flipped")
    pd.testing.assert_frame_equal(want, got, check_dtype=False)
    assert [len(p) for p in parts] == [3] * len(want["judge"].unique())


@pytest.mark.parametrize("category", ["flipped", "invalid", "longer_worse"])
def test_a_lazy_tables_examples_csv_is_the_pandas_paths(monkeypatch, home, tmp_path, category):
    """The cases' summary built in polars writes the very CSV the pandas summary writes."""
    from judgelab.reporting import explore_lazy, notebook

    monkeypatch.setenv("JUDGELAB_FIGURES", str(tmp_path))
    written = {}
    for lazy in (False, True):
        loaded, table = _load(monkeypatch, home, lazy)
        found = explore._found(table, loaded.items, category, {}, explore.SUMMARY_ITEMS)
        assert isinstance(found, explore_lazy.Cases) == lazy
        if lazy:  # in parts of 7 cases, and whole
            frame = found.summaries(explore.question_excerpts, size=7)
            whole = found.summaries(explore.question_excerpts)
            written["whole"] = notebook.save_table(whole, f"{category}_whole", notebook="nb")
        else:
            frame = explore.summary(found)
        written[lazy] = notebook.save_table(frame, f"{category}_{lazy}", notebook="nb")
    assert written[True].read_bytes() == written[False].read_bytes()
    assert written["whole"].read_bytes() == written[False].read_bytes()
    assert len(written[True].read_text().splitlines()) > 1


class _Written(dict):
    """A notebook's `out` that keeps the tables it is given."""

    def table(self, frame, name):
        parts = [frame] if isinstance(frame, pd.DataFrame | pl.DataFrame) else list(frame)
        parts = [p.to_pandas() if isinstance(p, pl.DataFrame) else p for p in parts]
        self[name] = pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("category", ["flipped", "longer_worse"])
def test_section_writes_and_shows_the_same_cases_as_the_pandas_path(monkeypatch, home, category):
    """A lazy table's cases leave out item texts and raw outputs; the shown few get both."""
    from judgelab.reporting import explore_lazy

    monkeypatch.setattr(explore_lazy, "SUMMARY_ROWS", 7)  # summarised in several parts
    got = {}
    for lazy in (False, True):
        loaded, table = _load(monkeypatch, home, lazy)
        written, shown = _Written(), []
        monkeypatch.setattr(explore, "show", shown.append)
        explore.section(written, table, loaded.items, category, n=3, seed=4)
        got[lazy] = (written["examples"], shown[0])
    pd.testing.assert_frame_equal(got[False][0], got[True][0], check_dtype=False)
    want, have = got[False][1], got[True][1]
    assert {"output_0", "output_1", "response_pos"} <= set(have.columns) and len(have) == 3
    pd.testing.assert_frame_equal(want, have[list(want.columns)], check_dtype=False)


def test_unknown_judge_names_the_known_ones(monkeypatch, home):
    for key, value in home.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(core, "LAZY_ROWS", 0)
    loaded = catalog.load_source("synthetic", allow_lazy=True)
    with pytest.raises(ValueError, match=r"unknown judge\(s\) \['nobody'\].*judge-00"):
        catalog.select(loaded, judges=["nobody"])


def test_load_source_keeps_only_the_requested_judges_lazily(monkeypatch, home):
    for key, value in home.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(core, "LAZY_ROWS", 0)
    loaded = catalog.load_source("synthetic", judges=["judge-03"], allow_lazy=True)
    judges = loaded.judgments.select(pl.col("judge").unique()).collect()["judge"].to_list()
    assert judges == ["judge-03"]
    assert "cluster" in loaded.judgments.collect_schema().names()


@pytest.mark.parametrize("inference", ["wild", "bootstrap"])
def test_judge_by_judge_passes_give_the_same_rates(monkeypatch, home, inference):
    from judgelab.analyses.pairwise import lazy, scan, scan_wild

    _, table = _load(monkeypatch, home, lazy=True)
    out = pairwise.item_outcomes(table, cluster="cluster")
    kw = {"n_boot": 49, "seed": 1, "cluster": "cluster", "inference": inference}
    whole = pairwise.pairwise_rates(out, **kw)
    calls = []
    for module, name in ((scan, "_batches"), (scan_wild, "_judge_batches")):
        real = getattr(module, name)  # the bootstrap's batches, the clustered wild path's

        def spy(*args, real=real):
            calls.append(got := real(*args))
            return got

        monkeypatch.setattr(module, name, spy)
    monkeypatch.setattr(lazy, "ROWS_PER_PASS", 700)  # a judge's rows (~600) per pass
    pd.testing.assert_frame_equal(whole, pairwise.pairwise_rates(out, **kw))
    assert max(len(c) for c in calls) > 1  # several batches were collected


def test_browse_lists_the_judges_and_splits_of_a_lazy_table(monkeypatch, home):
    from judgelab.core import scan

    _, small = _load(monkeypatch, home, lazy=False)
    _, large = _load(monkeypatch, home, lazy=True)
    for col in ("judge", "split"):
        assert scan.values(large, col) == sorted(small[col].astype(str).unique())


def test_a_second_rates_call_on_the_same_outcomes_reuses_the_scan(monkeypatch, home):
    from judgelab.analyses.pairwise import scan

    calls = []  # reductions of the scan: the clustered wild path's own, or `_reduce`
    for name in ("_reduce", "_wild_fused"):
        real = getattr(scan, name)
        monkeypatch.setattr(scan, name, lambda *a, real=real: calls.append(a) or real(*a))
    _, large = _load(monkeypatch, home, lazy=True, judges=["judge-01"])
    opts = {"n_boot": 99, "seed": 1, "cluster": "cluster"}
    out = pairwise.item_outcomes(large, cluster="cluster")
    wild = pairwise.pairwise_rates(out, **opts)
    boot = pairwise.pairwise_rates(out, inference="bootstrap", **opts)
    assert len(calls) == 1  # one reduction of the scan, two analyses
    for inference, first in (("wild", wild), ("bootstrap", boot)):
        fresh = pairwise.item_outcomes(large, cluster="cluster")
        pd.testing.assert_frame_equal(
            first, pairwise.pairwise_rates(fresh, inference=inference, **opts)
        )
    assert len(calls) == 3  # new outcomes: read again
