"""Strategy comparison and criteria verification (spec 000 §4.4, §4.12) on hand examples."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgelab.analyses.prompting import strategies as prompting
from judgelab.core import schema
from judgelab.judges import runner
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.openai_server import OpenAIServer


def row(judge, prompt, item, order, chosen, *, split="faithfulness_qa", output=None) -> dict:
    return {
        "benchmark": "b",
        "split": split,
        "item_id": item,
        "judge": judge,
        "model": judge.split(".")[0],
        "prompt": prompt,
        "order": order,
        "output": output,
        "valid": True,
        "chosen": chosen,
        "correct": chosen == "pos",
    }


def model_rows(prompt: str, pairs: list[tuple[str, str]]) -> list[dict]:
    """Model M under `prompt`: item k judged pairs[k] = (order 0, order 1)."""
    return [
        row(f"M.{prompt}", prompt, f"i{k}", o, c)
        for k, pair in enumerate(pairs)
        for o, c in enumerate(pair)
    ]


def test_strategy_comparison_orients_the_difference():
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


def test_resolve_strategies_falls_back_with_a_note():
    data = schema.new_judgments(
        model_rows("a", [("pos", "pos")]) + model_rows("b", [("pos", "pos")])
    )
    chosen = prompting.resolve_strategies(data, baseline="Vanilla", strategies=["CoT"])
    assert chosen.baseline == "a" and chosen.strategies == ["b"]
    assert "Vanilla" in chosen.note


def verification_fixture() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [
        row("J", "p", "i1", 0, "pos"),
        row("J", "p", "i1", 1, "pos"),
        row("J", "p", "i2", 0, "pos"),
        row("J", "p", "i2", 1, "neg"),
    ]
    decisions = pd.DataFrame(
        [
            {"benchmark": "b", "split": "faithfulness_qa", "item_id": "i1", "judge": "J",
             "order": 0, "sample": 0, "verified": True},
            {"benchmark": "b", "split": "faithfulness_qa", "item_id": "i1", "judge": "J",
             "order": 1, "sample": 0, "verified": False},
            {"benchmark": "b", "split": "faithfulness_qa", "item_id": "i2", "judge": "J",
             "order": 0, "sample": 0, "verified": True},
        ]
    )  # fmt: skip
    return schema.new_judgments(rows), decisions


def test_verified_accuracy_hand_example():
    data, decisions = verification_fixture()
    table = prompting.verified_accuracy(data, decisions, n_boot=100)
    got = table[table["group"] == "faithfulness"].iloc[0]
    # i1: c = (1, 1), d = (1, 0) -> u = (1, 0): CA 1, VCA 0, OA 1, VOA 1
    # i2: c = (1, 0), d = (1, −) -> u = (1, 0): CA 0, VCA 0, OA 1, VOA 1
    assert (got["ca"], got["vca"], got["oa"], got["voa"]) == (0.5, 0.0, 1.0, 1.0)
    assert (got["drop_ca"], got["drop_oa"], got["n"], got["n_correct_runs"]) == (0.5, 0.0, 2, 3)


def test_verified_accuracy_missing_decisions_policy():
    data, decisions = verification_fixture()
    with pytest.raises(ValueError, match="no verifier decision"):
        prompting.verified_accuracy(data, decisions.iloc[:2], n_boot=10)
    table = prompting.verified_accuracy(data, decisions.iloc[:2], missing="verified", n_boot=10)
    # i2's order-0 run now counts as verified: VOA stays 1; the missing run is counted
    assert table["voa"].iloc[0] == 1.0 and table["n_missing_decisions"].iloc[0] == 1


def test_fit_coefficients_hand_example():
    # x = 1 2 3, y = 1 3 2: slope Σdxdy/Σdx² = 1/2, intercept 2 − 2·½ = 1,
    # origin slope Σxy/Σx² = 13/14, r = 1/√(2·2) = ½, R² = ¼
    fit = prompting.fit_coefficients(pd.DataFrame({"x": [1, 2, 3], "y": [1, 3, 2]}), x="x", y="y")
    got = fit.iloc[0]
    assert got["ols_slope"] == pytest.approx(0.5) and got["ols_intercept"] == pytest.approx(1.0)
    assert got["origin_slope"] == pytest.approx(13 / 14)
    assert got["pearson_r"] == pytest.approx(0.5) and got["r2"] == pytest.approx(0.25)


def test_verification_summary_mean_drop():
    table = pd.DataFrame(
        {"group": ["a", "b", "pooled"], "ca": [0.5, 0.7, 0.6], "vca": [0.3, 0.6, 0.0],
         "oa": [0.9, 0.8, 0.85], "voa": [0.8, 0.8, 0.0]}
    )  # fmt: skip
    summary = prompting.verification_summary(table).set_index("pair")
    # pooled row left out: CA drops .2 and .1 -> .15; OA drops .1 and 0 -> .05
    assert summary.loc["CA→VCA", "mean_drop"] == pytest.approx(0.15)
    assert summary.loc["OA→VOA", "mean_drop"] == pytest.approx(0.05)


def test_read_decisions_errors(tmp_path):
    bad = tmp_path / "d.jsonl"
    bad.write_text(json.dumps({"benchmark": "b", "split": "s"}) + "\n")
    with pytest.raises(KeyError, match="missing column"):
        prompting.read_decisions(bad)


def test_sample_verification_set_loads():
    ver = prompting.load_verification("sample:judge_strategies")
    assert ver.is_sample and len(ver.decisions) > 0
    table = prompting.verified_accuracy(ver.judgments, ver.decisions, n_boot=20)
    assert (table["vca"] <= table["ca"]).all() and (table["voa"] <= table["oa"]).all()


def test_verifier_runs_through_the_judge_runner(tmp_path):
    """Verification items -> `cjb.verify` on the local OpenAI-compatible server -> decisions."""
    data = schema.new_judgments(
        [
            row("J", "p", "i1", 0, "pos", output="A is more faithful to the context."),
            row("J", "p", "i1", 1, "pos", output="B is longer."),
            row("J", "p", "i2", 0, "neg", output="B is better."),  # incorrect: not sent
            row("J", "p", "i2", 1, "pos", output="B is more faithful."),
        ]
    )
    items = prompting.verification_items(data)
    assert len(items) == 3
    assert json.loads(items["meta"].iloc[0])["judgment"] == "Response A"

    def responder(body: dict) -> str:
        text = body["messages"][-1]["content"]
        critique = text.split("<evaluation explanation>:")[-1].split("<evaluation outcome>")[0]
        return "<explanation>: ok\n<decision>: " + ("Yes" if "faithful" in critique else "No")

    with OpenAIServer(responder=responder) as server:
        spec = spec_mod.from_dict(
            {"endpoint": "openai-compatible", "model": "test-model", "template": "cjb.verify",
             "base_url": server.url, "api_key_env": None, "concurrency": 2, "max_retries": 1}
        )  # fmt: skip
        result = runner.run(
            items, spec, cache=RequestCache(tmp_path / "c.sqlite"), progress=False,
            write_tables=False,
        )  # fmt: skip
    decisions = prompting.decisions_from_verifier(result.judgments, items)
    got = decisions.set_index(["item_id", "order"])["verified"].to_dict()
    assert got == {("i1", 0): True, ("i1", 1): False, ("i2", 1): True}
    table = prompting.verified_accuracy(data, decisions, n_boot=20)
    row_f = table[table["group"] == "faithfulness"].iloc[0]
    # i1: u = (1, 0) -> VCA 0, VOA 1; i2: c = (0, 1), u = (0, 1) -> VOA 1
    assert (row_f["ca"], row_f["vca"], row_f["voa"]) == (0.5, 0.0, 1.0)
