"""Strategy comparison against a baseline prompt (spec 000 §4.12) on hand examples."""

from __future__ import annotations

import pytest

from judgelab.analyses import prompting
from judgelab.core import schema


def test_strategy_comparison_orients_the_difference(model_rows):
    base = [("pos", "pos"), ("pos", "pos"), ("neg", "pos"), ("neg", "neg")]  # CA 2/4
    better = [("pos", "pos")] * 3 + [("neg", "neg")]  # CA 3/4
    worse = [("pos", "pos")] + [("neg", "neg")] * 3  # CA 1/4
    # judge ids sort as M.CoT < M.Vanilla < M.Zeta: the baseline is judge_2, then judge_1
    data = schema.new_judgments(
        model_rows("Vanilla", base) + model_rows("CoT", better) + model_rows("Zeta", worse)
    )
    cmp = prompting.strategy_comparison(data, baseline="Vanilla", n_boot=200)
    ca = cmp[(cmp["metric"] == "ca") & (cmp["split"] == "faithfulness_qa")].set_index("strategy")
    assert ca.loc["CoT", "diff"] == pytest.approx(3 / 4 - 2 / 4)
    assert ca.loc["Zeta", "diff"] == pytest.approx(1 / 4 - 2 / 4)
    assert ca.loc["Zeta", "ci_low"] <= ca.loc["Zeta", "diff"] <= ca.loc["Zeta", "ci_high"]
    assert ca.loc["CoT", "value_baseline"] == pytest.approx(0.5)
    cons = cmp[(cmp["metric"] == "cons") & (cmp["split"] == "faithfulness_qa")]
    # consistency: base 3/4 (item 2 splits), CoT and Zeta 4/4 -> +1/4 each
    assert cons.set_index("strategy")["diff"].to_dict() == pytest.approx(
        {"CoT": 0.25, "Zeta": 0.25}
    )
    summary = prompting.strategy_summary(cmp).set_index("strategy")
    assert summary.loc["CoT", "dca"] == pytest.approx(0.25) and summary.loc["CoT", "n"] == 4
    effect = prompting.strategy_effect_by_split(
        data, baseline="Vanilla", strategies=["CoT"], n_boot=50
    )
    assert effect["diff"].item() == pytest.approx(0.25) and effect["n_models"].item() == 1


def test_resolve_strategies_falls_back_with_a_note(model_rows):
    data = schema.new_judgments(
        model_rows("a", [("pos", "pos")]) + model_rows("b", [("pos", "pos")])
    )
    chosen = prompting.resolve_strategies(data, baseline="Vanilla", strategies=["CoT"])
    assert chosen.baseline == "a" and chosen.strategies == ["b"]
    assert "Vanilla" in chosen.note
