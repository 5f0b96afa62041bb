"""Reproduction report: peer recomputations, comparisons, the judge-run plan, integrity."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from judgelab.data import catalog, targets
from judgelab.reporting import reproduction

TOL = {"percent": 0.05, "fraction": 0.005, "count": 0, "chars": 1.0, "usd": 0.01, "seconds": 1.0}


def _judgments(rows: list[tuple]) -> pd.DataFrame:
    """Rows of (judge, split, item_id, order, chosen, correct)."""
    df = pd.DataFrame(rows, columns=["judge", "split", "item_id", "order", "chosen", "correct"])
    df["sample"] = 0
    df["valid"] = df["chosen"].notna()
    df["correct"] = df["correct"].astype("boolean")
    return df


def _cells(rows: list[tuple]) -> pd.DataFrame:
    """Rows of (table, row, column, value, unit, n)."""
    df = pd.DataFrame(rows, columns=["table", "row", "column", "value", "unit", "n"])
    df.insert(0, "paper", "peers")
    df["n"] = pd.array(df["n"], dtype="Int64")
    df["provenance"] = "REPO o/r@" + "0" * 40 + " f.csv"
    df["note"] = ""
    return df[list(targets.TARGET_COLUMNS)]


def _values(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(
        rows, columns=["table", "row", "column", "reproduced", "n_reproduced"]
    ).astype({"reproduced": float})


def test_llmbar_statistics_match_hand_arithmetic():
    j = _judgments(
        [
            ("J", "S", "1", 0, "pos", True),
            ("J", "S", "1", 1, "pos", True),
            ("J", "S", "2", 0, "pos", True),
            ("J", "S", "2", 1, "neg", False),
        ]
    )
    out = reproduction.llmbar_statistics_values(j).set_index("column")
    # order 0: 2/2 correct, order 1: 1/2 -> average 75; both correct: 1/2; same winner: 1/2
    assert out.loc["correct_average", "reproduced"] == 75.0
    assert out.loc["correct_both", "reproduced"] == 50.0
    assert out.loc["equal", "reproduced"] == 50.0
    assert set(out["row"]) == {"J | S"} and set(out["n_reproduced"]) == {2}


def test_llmbar_two_invalid_outputs_count_as_equal_but_incorrect():
    j = _judgments([("J", "S", "1", 0, None, False), ("J", "S", "1", 1, None, False)])
    out = reproduction.llmbar_statistics_values(j).set_index("column")["reproduced"]
    assert out["equal"] == 100.0 and out["correct_average"] == 0.0


def test_pandalm_agreement_counts_unparseable_as_disagreement():
    j = pd.DataFrame({"model": ["m"] * 4, "correct": [True, False, None, True]})
    out = reproduction.pandalm_agreement_values(j)
    assert out["reproduced"].tolist() == [0.5]  # 2 of 4; the null one disagrees
    with pytest.raises(KeyError, match="correct"):
        reproduction.pandalm_agreement_values(j.drop(columns="correct"))


def test_compare_values_assigns_each_status():
    cells = _cells(
        [
            ("t", "a", "x", 10.0, "percent", 100),
            ("t", "b", "x", 10.0, "percent", 100),
            ("t", "c", "x", 10.0, "percent", 100),
            ("t", "d", "x", 10.0, "percent", 100),
            ("u", "e", "x", 0.5, "fraction", None),
        ]
    )
    values = _values(
        [("t", "a", "x", 10.04, 100), ("t", "b", "x", 10.2, 100), ("t", "c", "x", 9, 40)]
    )
    out = reproduction.compare_values(values, cells, tolerance=TOL, unavailable={"u": "offline"})
    assert out["status"].tolist() == [
        "pass",  # |10.04 - 10| = 0.04 <= 0.05
        "fail",  # 0.2 > 0.05
        "partial run",  # 40 of 100 items
        "not computable",
        "source unavailable",
    ]
    assert out["difference"].iloc[1] == pytest.approx(0.2)
    assert "40 of 100" in out["explanation"].iloc[2]
    assert math.isnan(out["reproduced"].iloc[4]) and out["explanation"].iloc[4] == "offline"
    assert list(out.columns) == reproduction.REPORT_COLUMNS


def test_compare_values_rejects_missing_tolerance_and_duplicates():
    cells = _cells([("t", "a", "x", 1.0, "count", 3)])
    with pytest.raises(KeyError, match="no tolerance"):
        reproduction.compare_values(_values([]), cells, tolerance={"percent": 1})
    dup = _values([("t", "a", "x", 1, 3), ("t", "a", "x", 1, 3)])
    with pytest.raises(ValueError, match="repeat"):
        reproduction.compare_values(dup, cells, tolerance=TOL)


def test_cjb_table3_ca_per_split_and_pooled_average():
    j = _judgments(
        [
            ("j", "refusal_answerable", "1", 0, "pos", True),
            ("j", "refusal_answerable", "1", 1, "pos", True),
            ("j", "refusal_answerable", "2", 0, "pos", True),
            ("j", "refusal_answerable", "2", 1, "neg", False),
            ("j", "faithfulness_qa", "3", 0, "pos", True),
            ("j", "faithfulness_qa", "3", 1, "pos", True),
            ("other", "faithfulness_qa", "3", 0, "neg", False),
        ]
    )
    out = reproduction.cjb_table3_values(j, judge_rows={"j": "GPT-4o"}).set_index("column")
    assert out.loc["Refusal (Ans.)", "reproduced"] == 50.0  # 1 of 2 correct in both orders
    assert out.loc["Faithfulness (QA)", "reproduced"] == 100.0
    assert out.loc["Average", "reproduced"] == pytest.approx(200 / 3)  # pooled 2 of 3
    assert set(out["row"]) == {"GPT-4o"}


def test_paper_report_marks_unrun_judges_and_partial_runs():
    t3 = targets.load_targets("contextualjudgebench", "table3")
    row = t3["row"].iloc[0]
    empty = reproduction.paper_report(None, judge_rows={"j": row}, tolerance=TOL)
    assert len(empty) == 9 and set(empty["status"]) == {"needs a judge run"}
    j = _judgments(
        [
            ("j", "refusal_answerable", "1", 0, "pos", True),
            ("j", "refusal_answerable", "1", 1, "pos", True),
        ]
    )
    part = reproduction.paper_report(j, judge_rows={"j": row}, tolerance=TOL)
    # one of the 250 refusal_answerable pairs was judged: never a pass/fail on a partial run
    assert set(part["status"]) == {"partial run", "needs a judge run"}


def test_judge_run_plan_uses_paper_sizes_offline():
    all_targets = targets.load_targets()
    assert reproduction.paper_request_count(all_targets) == 4000  # 2000 pairs x 2 orders
    plan = reproduction.judge_run_plan(all_targets, judges=["gpt-4o-mini-workflow"], items=None)
    cjb = plan[(plan["paper"] == "contextualjudgebench") & (plan["table"] == "table3")].iloc[0]
    assert cjb["requests"] == 4000 and "paper sizes" in cjb["estimate"]
    assert cjb["judge"] == "gpt-4o-mini-workflow"
    assert ("contextualjudgebench", "table1") not in set(
        zip(plan["paper"], plan["table"], strict=True)
    )
    others = plan[plan["paper"] == "faitheval"]
    assert len(others) == 9 and others["requests"].isna().all()
    with pytest.raises(ValueError, match="# Pairs"):
        reproduction.paper_request_count(all_targets[all_targets["paper"] == "faitheval"])


def test_judge_run_plan_uses_dry_run_when_items_exist():
    items = catalog.load_items("sample:contextualjudgebench")
    plan = reproduction.judge_run_plan(
        targets.load_targets("contextualjudgebench"),
        judges=["gpt-4o-mini-workflow"],
        items=items,
    )
    row = plan[plan["table"] == "table3"].iloc[0]
    assert row["requests"] == 2 * len(items)  # both orders of every sample pair, none cached
    assert row["estimate"].startswith("judges.runner.dry_run")
    assert row["est_prompt_tokens"] > 0


def test_integrity_summary_counts_cells_and_flagged_discrepancies():
    t = pd.DataFrame({"paper": ["a", "a", "a", "b"], "table": ["t1", "t1", "t2", "t1"]})
    d = pd.DataFrame({"paper": ["a", "a", "b"], "check": ["c1", "", "c2"]})
    out = reproduction.integrity_summary(t, d).set_index("paper")
    assert out.loc["a"].tolist() == [2, 3, 2, 1, "c1"]
    assert out.loc["b"].tolist() == [1, 1, 1, 1, "c2"]


def test_peer_targets_load_separately_with_repository_provenance():
    peers = targets.load_targets(targets.PEERS)
    assert set(peers["paper"]) == {"peers"}
    assert set(reproduction.PEER_SOURCES) == set(peers["table"])
    assert peers["provenance"].str.match(targets.PEER_PROVENANCE.pattern).all()
    assert "peers" not in set(targets.load_targets()["paper"])
    assert (
        targets.lookup(
            "peers", "llmbar_statistics", "GPT-4.Vanilla_NoRules | Natural", "correct_average"
        )
        == 93.5
    )


def test_peer_targets_reject_spec_style_provenance(tmp_path):
    path = tmp_path / "peers" / "x.csv"
    path.parent.mkdir()
    header = ",".join(targets.TARGET_COLUMNS)
    path.write_text(f"{header}\npeers,x,r,c,1,count,,P spec000 §1 Table 1,\n", encoding="utf-8")
    with pytest.raises(targets.TargetError, match="line 2.*REPO"):
        targets.load_targets("peers", root=tmp_path)


def test_peer_report_offline_says_source_unavailable(monkeypatch):
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    sources = reproduction.load_peer_sources(["alpaca_eval", "llmbar", "pandalm"])
    assert all(isinstance(v, str) for v in sources.values())
    assert reproduction.sources_label(sources).count("unavailable") == 3
    report = reproduction.peer_report(sources, tolerance=TOL)
    assert report["reproduced"].isna().all()
    by_table = report.groupby("artefact")["status"].agg(set).to_dict()
    assert by_table["peers/alpaca_eval_evaluators"] == {"not computable"}
    assert by_table["peers/llmbar_statistics"] == {"source unavailable"}
    counts = reproduction.status_counts(report)
    assert counts.set_index("artefact").loc["peers/pandalm_agreement", "source unavailable"] == 2


def test_full_report_stacks_parts():
    cells = _cells([("t", "a", "x", 1.0, "count", None)])
    part = reproduction.compare_values(_values([("t", "a", "x", 1, 1)]), cells, tolerance=TOL)
    assert len(reproduction.full_report(part, part.iloc[0:0], part)) == 2
    assert list(reproduction.full_report().columns) == reproduction.REPORT_COLUMNS
