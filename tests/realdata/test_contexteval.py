"""Contextualized Evaluations on the real queries and attributes (needs the real-data mirror)."""

import pytest

from judgelab.analyses import contexteval as ce
from judgelab.data import catalog
from judgelab.judges import chain


@pytest.mark.realdata
def test_real_query_counts_and_attribute_catalogue(mirror):
    loaded = catalog.load_source("contexteval")
    assert not loaded.is_sample
    counts = ce.query_counts(loaded.items).set_index("split")["n"]
    # spec 002 §1.1: Chatbot Arena 2500, AlpacaEval 645, MTBench 57, ExpertQA 300, KIWI 78.
    assert counts["total"] == 3580
    assert sorted(counts.drop("total").tolist()) == [57, 78, 300, 645, 2500]
    attributes, origin = catalog.contexteval.load_attributes("contexteval")
    assert origin.startswith("released file")
    cat = ce.attribute_catalogue(attributes).set_index("attribute")
    assert len(cat) == 12 and cat["n_values"].sum() == 52
    assert set(ce.WEIRD_MAP) <= set(cat.index)  # every mapped attribute exists in the file
    for attr, values in ce.WEIRD_MAP.items():
        assert set(values) <= set(cat.loc[attr, "values"].split(", "))


@pytest.mark.realdata
def test_chain_items_on_real_queries(mirror):
    loaded = catalog.load_source("contexteval")
    attributes, _ = catalog.contexteval.load_attributes("contexteval")
    selected = chain.select_pairs(loaded.items, attributes, max_queries_per_attr=1000, seed=4)
    assert len(selected) == 12 * 1000
    items = chain.filter_items(loaded.items.head(5), attributes)
    assert len(items) == 5 * 12 and items["context"].str.startswith("Q: ").all()
