"""A judge's card measures are computed once per inputs and read back after (issue 34, item 6)."""

import pandas as pd
import pytest

from judgelab.core import paths
from judgelab.reporting import card
from judgelab.reporting.card import measures as card_measures
from judgelab.reporting.card import stored

SAMPLE = "sample:contextualjudgebench"
KEYS = [f"{SAMPLE}:sample-judge-1-always-first", f"{SAMPLE}:sample-judge-3-mostly-right"]
OPTS = {"n_boot": 50, "seed": 0, "families": ("pairwise", "length")}  # a few measures: fast


@pytest.fixture
def computed(monkeypatch):
    """Count the judges whose measures are computed (not read back)."""
    seen: list[str] = []
    real = card_measures.run

    def counting(ctx):
        seen.append(ctx.judge)
        return real(ctx)

    monkeypatch.setattr(card_measures, "run", counting)
    return seen


def test_i34_6_card_measures_are_computed_once_per_inputs(computed, monkeypatch):
    both = card.collect(card.load_sources(KEYS), **OPTS)
    assert computed == ["sample-judge-1-always-first", "sample-judge-3-mostly-right"]
    assert len(list((paths.cache() / stored.FOLDER).glob("*.parquet"))) == 2
    # one judge's card afterwards (as make figures does): read back, the same rows
    one = card.collect(card.load_sources(KEYS[1:]), **OPTS)
    assert computed == ["sample-judge-1-always-first", "sample-judge-3-mostly-right"]
    mine = both[both["judge"] == "sample-judge-3-mostly-right"].reset_index(drop=True)
    pd.testing.assert_frame_equal(one, mine)
    # and they are the rows a card computes without the cache
    monkeypatch.setenv(stored.OFF_ENV, "0")
    fresh = card.collect(card.load_sources(KEYS[1:]), **OPTS)
    pd.testing.assert_frame_equal(one, fresh)
    assert computed[-1] == "sample-judge-3-mostly-right" and len(computed) == 3


def test_i34_6_card_measures_recompute_when_an_input_changes(computed, monkeypatch):
    sources = card.load_sources(KEYS[1:])
    card.collect(sources, **OPTS)
    card.collect(sources, **{**OPTS, "seed": 1})  # other options
    assert len(computed) == 2
    (cs,) = sources.values()
    changed = cs.loaded.judgments.copy()
    changed.loc[changed.index[0], "chosen"] = (
        "neg" if changed.loc[changed.index[0], "chosen"] == "pos" else "pos"
    )
    edited = {
        k: v._replace(loaded=v.loaded._replace(judgments=changed)) for k, v in sources.items()
    }
    card.collect(edited, **OPTS)  # other data
    assert len(computed) == 3
    monkeypatch.setattr(stored.freshness, "tree_hash", lambda root: "other code")
    card.collect(sources, **OPTS)  # other library code
    assert len(computed) == 4
    card.collect(sources, **OPTS)
    assert len(computed) == 4


def test_i34_6_an_unreadable_cached_card_is_computed_again(computed):
    sources = card.load_sources(KEYS[1:])
    first = card.collect(sources, **OPTS)
    (kept,) = (paths.cache() / stored.FOLDER).glob("*.parquet")
    kept.write_bytes(b"not parquet")
    again = card.collect(sources, **OPTS)
    assert len(computed) == 2
    pd.testing.assert_frame_equal(first, again)
