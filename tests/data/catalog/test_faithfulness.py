"""Loaders of the faithfulness notebooks: FaithEval answers, FaithBench pair items, their runs."""

import pandas as pd
import pytest

from judgelab.analyses import faithfulness
from judgelab.core import paths
from judgelab.data import catalog


def test_answers_fall_back_to_the_sample_and_say_what_to_run():
    loaded = catalog.faithfulness.load_answers(["faitheval_unanswerable"])
    assert (
        loaded.is_sample
        and loaded.source == "sample:faitheval"
        and "judgelab judge" in (loaded.reason)
    )
    assert loaded.requested == "faitheval_unanswerable"
    with pytest.raises(catalog.SourceNotFound, match="no FaithEval answers"):
        catalog.faithfulness.load_answers(["faitheval_unanswerable"], fallback=None)


def test_answers_of_a_sample_load_as_requested():
    loaded = catalog.faithfulness.load_answers(["sample:faitheval"])
    assert loaded.is_sample and loaded.reason == "" and len(loaded.judgments) > 0


def test_pair_items_round_trip():
    items = catalog.load_source("sample:faithbench").items
    table = faithfulness.pair_items(items, faithfulness.faithbench_pairs(items))
    assert (
        catalog.faithfulness.load_pair_judgments("faithbench_sample_pairs") is None
    )  # no run yet
    name = catalog.faithfulness.write_pair_items(table)
    assert (paths.items() / f"{name}.parquet").exists()
    assert catalog.faithfulness.benchmark_items([name, "absent"])["absent"] is None
    back = catalog.faithfulness.benchmark_items([name])[name]
    assert back["item_id"].tolist() == table["item_id"].tolist()
    with pytest.raises(ValueError, match="one benchmark"):
        catalog.faithfulness.write_pair_items(pd.concat([table, table.assign(benchmark="b")]))
