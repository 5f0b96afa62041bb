"""Finding tables by name, and the real-data → sample fallback every notebook relies on."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.data import catalog, fetch
from judgelab.reporting import notebook


def test_sample_source_is_marked_sample():
    loaded = catalog.load_source("sample:contextualjudgebench")
    assert loaded.is_sample and loaded.reason == ""
    assert len(loaded.items) == 16
    assert notebook.is_illustrative(loaded.items)
    assert notebook.SAMPLE_BANNER in notebook.banner_html(loaded.source, loaded.items)


def test_real_source_through_the_mirror(tiny_registry, monkeypatch):
    monkeypatch.setenv("JUDGELAB_MIRROR", str(tiny_registry))
    loaded = catalog.load_source("tinypairs", fallback="sample:contextualjudgebench")
    assert not loaded.is_sample and loaded.source == "tinypairs"
    assert list(loaded.items["benchmark"].unique()) == ["tinypairs"]
    # GPT-4 judged item 1 twice: not swapped "A" = the gold output_1 → pos; swapped "A" → neg.
    gpt4 = loaded.judgments[
        (loaded.judgments["judge"] == "GPT-4") & (loaded.judgments["item_id"] == "1")
    ]
    assert sorted(gpt4["chosen"]) == ["neg", "pos"]
    assert "Data source: tinypairs" in notebook.banner_html(loaded.source, loaded.items)


def test_offline_without_mirror_falls_back_with_reason(tiny_registry, monkeypatch):
    monkeypatch.delenv("JUDGELAB_MIRROR", raising=False)
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    loaded = catalog.load_source("tinypairs", fallback="sample:contextualjudgebench")
    assert loaded.is_sample and loaded.source == "sample:contextualjudgebench"
    assert "JUDGELAB_OFFLINE" in loaded.reason and "tinypairs" in loaded.reason
    html = notebook.banner_html(loaded.source, loaded.items, reason=loaded.reason)
    assert notebook.SAMPLE_BANNER in html and "JUDGELAB_OFFLINE" in html


def test_without_fallback_the_error_surfaces(tiny_registry, monkeypatch):
    monkeypatch.delenv("JUDGELAB_MIRROR", raising=False)
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    with pytest.raises(fetch.FetchError, match=r"JUDGELAB_OFFLINE"):
        catalog.load_source("tinypairs")


def test_unknown_sample_lists_known_sets():
    with pytest.raises(catalog.SourceNotFound, match=r"known samples: \[.*contextualjudgebench"):
        catalog.load_items("sample:nope")


def test_source_without_judgments_falls_back_when_judgments_are_needed(tmp_path, monkeypatch):
    reg, mirror = tmp_path / "reg", tmp_path / "mirror"
    reg.mkdir()
    (mirror / "q").mkdir(parents=True)
    (mirror / "q" / "queries.jsonl").write_text(
        '{"query": "Is coffee good?", "source": "kiwi", "example_id": "k1"}\n'
    )
    (reg / "itemsonly.yaml").write_text(
        "name: itemsonly\nkind: benchmark\ntitle: Queries only\nlicence: MIT\n"
        "homepage: https://example.org\norigin: {type: url, base: 'http://127.0.0.1:9/'}\n"
        "mirror_dir: q\nimporter: 'judgelab.data.importers.seeds:import_contexteval'\n"
        "files:\n  - {path: queries.jsonl}\n"
    )
    monkeypatch.setenv("JUDGELAB_SOURCES", str(reg))
    monkeypatch.setenv("JUDGELAB_MIRROR", str(mirror))
    plain = catalog.load_source("itemsonly", fallback="sample:contextualjudgebench")
    assert not plain.is_sample and plain.judgments is None  # items are what was asked for
    needed = catalog.load_source(
        "itemsonly", fallback="sample:contextualjudgebench", need_judgments=True
    )
    assert needed.is_sample and needed.source == "sample:contextualjudgebench"
    assert "has no judgments yet" in needed.reason and len(needed.judgments) > 0
    # Judge ids named for the requested source are dropped on the fallback.
    assert catalog.source_specific(needed, ["GPT-4"], []) == []
    assert catalog.source_specific(plain, ["GPT-4"], []) == ["GPT-4"]


def test_load_or_none_is_none_only_for_a_missing_table():
    assert catalog.load_or_none(catalog.load_judgments, "sample:no-such-set") is None
    assert catalog.load_or_none(catalog.load_items, "no_such_benchmark") is None
    items = catalog.load_or_none(catalog.load_items, "sample:contextualjudgebench")
    assert items is not None and len(items) == 16
    with pytest.raises(AttributeError):  # any other error still raises
        catalog.load_or_none(catalog.load_items, 3)


def test_loading_some_judges_reads_only_tables_that_may_hold_them(tiny_registry, monkeypatch):
    from judgelab.core import paths, tables

    full = catalog.load_source("tinypairs")
    other = full.judgments[full.judgments["judge"] == "GPT-4"].assign(judge="Other")
    runner_table = paths.judgments() / "tinypairs" / "Other.parquet"
    tables.write_judgments(other.drop(columns=["cluster"]), runner_table)
    read = []
    real = tables.read_judgments
    monkeypatch.setattr(tables, "read_judgments", lambda f: read.append(f) or real(f))
    every = catalog.load_source("tinypairs")
    assert runner_table in read and "Other" in set(every.judgments["judge"])
    read.clear()
    some = catalog.load_source("tinypairs", judges=["GPT-4"])
    assert runner_table not in read and read  # its footer shows only "Other"
    expected = every.judgments[every.judgments["judge"] == "GPT-4"].reset_index(drop=True)
    pd.testing.assert_frame_equal(some.judgments, expected)
    read.clear()
    assert set(catalog.load_source("tinypairs", judges=["Other"]).judgments["judge"]) == {"Other"}
    assert runner_table in read
