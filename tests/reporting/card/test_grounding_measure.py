"""The card's "pass rate with human labels" row: judge only, PPI++ with 100 labels, all humans."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.core import schema
from judgelab.reporting import card


def _tables(n: int = 300, seed: int = 3):
    rng = np.random.default_rng(seed)
    human = rng.random(n) < 0.6
    lenient = rng.random(n) < 0.3  # the judge passes 30 % of the failures too
    judge = human | lenient
    items = schema.new_items(
        [
            dict(benchmark="b", split="s", item_id=str(i), task="pointwise", question=f"q{i}",
                 response="r", gold="Correct" if h else "Incorrect", meta={})
            for i, h in enumerate(human)
        ]
    )  # fmt: skip
    judgments = schema.new_judgments(
        [
            dict(benchmark="b", split="s", item_id=str(i), judge="j.x",
                 verdict="Correct" if v else "Incorrect", valid=True, correct=bool(v == h))
            for i, (v, h) in enumerate(zip(judge, human, strict=True))
        ]
    )  # fmt: skip
    return items, judgments, human.mean(), judge.mean()


def test_grounded_pass_rate_rows():
    items, judgments, human_rate, judge_rate = _tables()
    m = card.collect_measures(items, judgments, judge="j.x", n_boot=50)
    g = m[m["measure"] == "pass_rate_grounded"].set_index("scope")
    assert list(g.index) == ["judge only", "PPI++, 100 human labels", "all human labels"]
    assert g.loc["judge only", "value"] == pytest.approx(judge_rate)
    assert g.loc["all human labels", "value"] == pytest.approx(human_rate)
    assert g.loc["PPI++, 100 human labels", "headline"]
    assert g.loc["PPI++, 100 human labels", "n"] == 100
    # the lenient judge's own interval misses the human value; the corrected one holds it
    assert g.loc["judge only", "ci_low"] > human_rate
    ppi = g.loc["PPI++, 100 human labels"]
    assert ppi["ci_low"] <= human_rate <= ppi["ci_high"]


def test_pairwise_judges_get_na():
    items, judgments, *_ = _tables(20)
    items = items.assign(task="pairwise", response_pos="a", response_neg="b", gold="pos")
    judgments = judgments.assign(verdict="A", chosen="pos", correct=True)
    m = card.collect_measures(pd.DataFrame(items), judgments, judge="j.x", n_boot=20)
    row = m[m["measure"] == "pass_rate_grounded"].iloc[0]
    assert row["status"] == "n/a"


def test_i36_6_transport_row_per_candidate_and_the_furthest_reaching_headline():
    """Leave-one-candidate-out transport of the judge's correction: the card's transport rows."""
    from judgelab.analyses.grounding import tables, transport

    rng = np.random.default_rng(5)
    recs_i, recs_j = [], []
    for k, lenient in enumerate((0.1, 0.1, 0.1, 0.45)):  # the last candidate is judged laxer
        human = rng.random(150) < 0.6
        judge = human | (rng.random(150) < lenient)
        for i, (h, v) in enumerate(zip(human, judge, strict=True)):
            key = dict(benchmark="b", split="s", item_id=f"{k}-{i}")
            recs_i.append(dict(**key, task="pointwise", question=f"q{i}", response="r",
                               gold="Correct" if h else "Incorrect",
                               meta={"candidate_model": f"m{k}"}, cluster=f"q{i}"))  # fmt: skip
            recs_j.append(dict(**key, judge="j.x", verdict="Correct" if v else "Incorrect",
                               valid=True, correct=bool(v == h)))  # fmt: skip
    items, judgments = schema.new_items(recs_i), schema.new_judgments(recs_j)
    m = card.collect_measures(items, judgments, judge="j.x", n_boot=50)
    t = m[m["measure"] == "transport_error"].set_index("scope")
    assert list(t.index) == ["m0", "m1", "m2", "m3"]
    assert (t["status"] == "ok").all() and (t["n"] == 150).all()
    assert t["headline"].sum() == 1 and t.loc["m3", "headline"]  # the laxer candidate
    assert t.loc["m3", "ci_low"] > 0.05  # error Δ_train − Δ_m3 ≈ 0.35 · 0.4: under-corrected
    table = tables.pointwise_table(judgments, items, positive="Correct",
                                   group="meta.candidate_model")  # fmt: skip
    audit = transport.audit(table, n_boot=399, seed=0).set_index("slice")
    assert t["value"].to_dict() == pytest.approx(audit["error"].to_dict())
