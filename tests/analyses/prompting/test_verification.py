"""Criteria verification (spec 000 §4.4): verified accuracies and the verifier round trip."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgelab.analyses import prompting
from judgelab.core import schema
from judgelab.judges import runner
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.openai_server import OpenAIServer


@pytest.fixture()
def verification(row) -> tuple[pd.DataFrame, pd.DataFrame]:
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


def test_verified_accuracy_hand_example(verification):
    data, decisions = verification
    table = prompting.verified_accuracy(data, decisions, n_boot=100)
    got = table[table["group"] == "faithfulness"].iloc[0]
    # i1: c = (1, 1), d = (1, 0) -> u = (1, 0): CA 1, VCA 0, OA 1, VOA 1
    # i2: c = (1, 0), d = (1, −) -> u = (1, 0): CA 0, VCA 0, OA 1, VOA 1
    assert (got["ca"], got["vca"], got["oa"], got["voa"]) == (0.5, 0.0, 1.0, 1.0)
    assert (got["drop_ca"], got["drop_oa"], got["n"], got["n_correct_runs"]) == (0.5, 0.0, 2, 3)


def test_verified_accuracy_missing_decisions_policy(verification):
    data, decisions = verification
    with pytest.raises(ValueError, match="no verifier decision"):
        prompting.verified_accuracy(data, decisions.iloc[:2], n_boot=10)
    table = prompting.verified_accuracy(data, decisions.iloc[:2], missing="verified", n_boot=10)
    # i2's order-0 run now counts as verified: VOA stays 1; the missing run is counted
    assert table["voa"].iloc[0] == 1.0 and table["n_missing_decisions"].iloc[0] == 1


def test_verification_summary_mean_drop():
    table = pd.DataFrame(
        {"group": ["a", "b", "pooled"], "ca": [0.5, 0.7, 0.6], "vca": [0.3, 0.6, 0.0],
         "oa": [0.9, 0.8, 0.85], "voa": [0.8, 0.8, 0.0]}
    )  # fmt: skip
    summary = prompting.verification_summary(table).set_index("pair")
    # pooled row left out: CA drops .2 and .1 -> .15; OA drops .1 and 0 -> .05
    assert summary.loc["CA→VCA", "mean_drop"] == pytest.approx(0.15)
    assert summary.loc["OA→VOA", "mean_drop"] == pytest.approx(0.05)


def test_verifier_runs_through_the_judge_runner(tmp_path, row):
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


def _clustered(row, n_clusters: int = 12, per: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judge J: every item of a cluster judged alike (clusters alternate right / wrong)."""
    rows, decisions = [], []
    for c in range(n_clusters):
        chosen = "pos" if c % 3 else "neg"
        for i in range(per):
            item = f"c{c}-i{i}"
            for order in (0, 1):
                rows.append({**row("J", "p", item, order, chosen), "cluster": f"b|src-{c}"})
                decisions.append(
                    {"benchmark": "b", "split": "faithfulness_qa", "item_id": item,
                     "judge": "J", "order": order, "sample": 0, "verified": True}
                )  # fmt: skip
    data = schema.new_judgments(pd.DataFrame(rows).drop(columns="cluster"))
    data["cluster"] = [r["cluster"] for r in rows]
    return data, pd.DataFrame(decisions)


def test_verified_accuracy_resamples_clusters(row):
    data, decisions = _clustered(row)
    clus = prompting.verified_accuracy(data, decisions, n_boot=400)
    items = prompting.verified_accuracy(data, decisions, cluster=None, n_boot=400)
    for table in (clus, items):
        got = table[table["group"] == "faithfulness"].iloc[0]
        assert got["ca"] == pytest.approx(8 / 12) and got["n"] == 60
    width = {
        k: float((t["ca_high"] - t["ca_low"]).iloc[0]) for k, t in (("c", clus), ("i", items))
    }
    # 12 clusters of 5 identical items: the cluster interval is about √5 times the item one
    assert width["c"] > 1.7 * width["i"]
    pooled = clus[clus["group"] == "pooled"].iloc[0]
    assert pooled["ca_low"] == pytest.approx(clus["ca_low"].iloc[0])


def test_inf2_2_verified_accuracy_wild_rows_carry_effective_clusters(row):
    data, decisions = _clustered(row)
    wild = prompting.verified_accuracy(data, decisions)
    old = prompting.verified_accuracy(data, decisions, interval="percentile", n_boot=400)
    got = wild[wild["group"] == "faithfulness"].iloc[0]
    assert got["method"].startswith("wild cluster bootstrap") and got["n_clusters"] == 12
    assert got["few_clusters"] and got["n_eff_clusters"] == pytest.approx(12)
    assert got["ca_low"] < got["ca"] < got["ca_high"]
    assert wild["ca"].tolist() == pytest.approx(old["ca"].tolist())
    assert old["method"].str.startswith("percentile").all()
