"""Self vs others and answerability (`analyses.correctness.self_preference`)."""

import pandas as pd
import pytest

from judgelab.analyses import correctness


def test_self_vs_others_difference_and_paired_bootstrap(table_of):
    rows = []
    # 4 questions; judge J's own answers (m1) all human-Incorrect and it says Correct on 3 of 4
    # others (m2) human-Incorrect, judged Correct on 1 of 4: FPR self 3/4, others 1/4, diff 1/2
    pairs = [("Correct", "Correct"), ("Correct", "Incorrect")]
    pairs += [("Correct", "Incorrect"), ("Incorrect", "Incorrect")]
    for i, (vs, vo) in enumerate(pairs):
        rows += [("J", f"q{i}", "m1", "Incorrect", vs), ("J", f"q{i}", "m2", "Incorrect", vo)]
    t = correctness.mark_self(
        table_of(rows),
        judge_family={"J": "fam"},
        candidate_family={"m1": "fam", "m*": "o"},
        level="family",
    )
    assert t["candidate_is_judge"].tolist() == [True, False] * 4  # exact name beats the glob
    few = {"min_own": 1, "min_own_clusters": 1}  # 4 own negatives: below the defaults
    out = correctness.self_vs_others(t, metrics=("fpr",), n_boot=500, seed=1, **few).iloc[0]
    assert (out["self"], out["others"], out["diff"]) == (0.75, 0.25, 0.5)
    assert (out["n_self"], out["n_others"], out["n_clusters"]) == (4, 4, 4)
    assert (out["n_clusters_self"], out["n_clusters_both"], out["declined"]) == (4, 4, "")
    assert out["diff_low"] <= 0.5 <= out["diff_high"]
    # paired resampling: a question where self says Correct never removes the others' row
    assert 0 <= out["p_value"] <= 1
    again = correctness.self_vs_others(t, metrics=("fpr",), n_boot=500, seed=1, **few).iloc[0]
    assert again["diff_low"] == out["diff_low"]  # seeded


def test_self_vs_others_drops_judges_without_self_rows(table_of):
    t = table_of(
        [("J", "q", "m2", "Correct", "Correct"), ("J", "r", "m2", "Incorrect", "Correct")]
    )
    t = correctness.mark_self(t, judge_candidate={"J": "m2"})
    t["candidate_is_judge"] = False
    assert correctness.self_vs_others(t, n_boot=10).empty


def test_answered_split_and_kappa_by_subset(table_of):
    rows = [
        # q1: judge's own answer (jm) is Correct -> every q1 row is answered_correctly
        ("J", "q1", "jm", "Correct", "Correct"), ("J", "q1", "x", "Incorrect", "Incorrect"),
        # q2: own answer Incorrect -> answered_incorrectly
        ("J", "q2", "jm", "Incorrect", "Correct"), ("J", "q2", "x", "Correct", "Incorrect"),
        # q3: judge did not answer -> excluded from both subsets (kept in overall)
        ("J", "q3", "x", "Correct", "Correct"),
    ]  # fmt: skip
    t = correctness.mark_answered(table_of(rows), judge_candidate={"J": "jm"})
    assert t["judge_answered"].iloc[:4].tolist() == [
        "correct",
        "correct",
        "incorrect",
        "incorrect",
    ]
    assert pd.isna(t["judge_answered"].iloc[4])
    t2 = correctness.mark_answered(
        table_of(rows), judge_candidate={"J": "jm"}, ambiguous="incorrect"
    )
    assert t2["judge_answered"].iloc[4] == "incorrect"
    k = correctness.kappa_by_answered(t, n_boot=50).query("metric == 'kappa'").set_index("subset")
    assert k.loc["answered_correctly", "value"] == pytest.approx(1.0)  # 2/2 agree, balanced
    assert k.loc["answered_incorrectly", "value"] == pytest.approx(-1.0)  # 0/2 agree, balanced
    # overall: p_o = 3/5; human C 3/5, judge C 3/5 -> p_e = .36+.16 = .52; (.6-.52)/.48
    assert k.loc["overall", "value"] == pytest.approx(0.08 / 0.48)
    assert k.loc["overall", "n"] == 5
