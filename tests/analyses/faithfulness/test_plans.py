"""Run plans: the `judgelab judge` commands behind the family's model runs (dry-run numbers)."""

import pytest

from judgelab.analyses import faithfulness
from judgelab.data import catalog
from judgelab.errors import SourceNotFound


def test_sample_fallback_and_run_plan():
    loaded = catalog.faithfulness.load_answers(["faitheval_unanswerable"])
    benchmarks = catalog.faithfulness.benchmark_items(["faitheval_unanswerable"])
    assert benchmarks == {"faitheval_unanswerable": None}  # not imported
    plan = faithfulness.faitheval_plan(
        benchmarks, judge="gpt-4o-mini-faitheval", items=loaded.items
    )
    row = plan.iloc[0]
    assert row["command"].startswith("judgelab judge --judge gpt-4o-mini-faitheval")
    assert row["items_used"].startswith("sample (not imported")
    assert row["planned"] == 18  # 9 unanswerable + 9 original-context sample items
    assert row["est_cost_usd"] > 0
    with pytest.raises(ValueError, match="faitheval"):
        faithfulness.faitheval_plan({"x": None}, judge="gpt-4o-mini-ragas-direct")
    with pytest.raises(SourceNotFound, match="judgelab data import x"):
        faithfulness.faitheval_plan({"x": None}, judge="gpt-4o-mini-faitheval")


def test_ragas_plan_on_pair_items(fb_items):
    table = faithfulness.pair_items(fb_items, faithfulness.faithbench_pairs(fb_items))
    plan = faithfulness.ragas_plan(
        table, judges=["gpt-4o-mini-ragas-direct", "gpt-4o-mini-ragas-compare"]
    )
    assert plan["method"].tolist() == ["Baseline", "Ranking"]
    assert plan["command"].str.endswith("--benchmark fb_pairs").all()
    assert (plan["planned"] == 2 * len(table)).all()  # two candidates or two orders per pair
    with pytest.raises(ValueError, match="ragas"):
        faithfulness.ragas_plan(table, judges=["gpt-4o-mini-faitheval"])
