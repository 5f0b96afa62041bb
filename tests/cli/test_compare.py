"""`judgelab compare A B --benchmark X` (issue 35 item 4): the judge-swap headline."""

from __future__ import annotations

import re

import pytest

from judgelab.analyses import stability
from judgelab.cli import main as cli
from judgelab.data import catalog

SAMPLE = "sample:contextualjudgebench"
A, B = "sample-judge-1-always-first", "sample-judge-3-mostly-right"


def test_i35_4_compare_prints_the_shift_of_two_sample_judges(capsys):
    assert cli.main(["compare", A, B, "--benchmark", SAMPLE]) == 0
    out = capsys.readouterr().out
    # the share changed, counted directly: sample 0 of both, valid, per item × order
    j = catalog.load_source(SAMPLE).judgments
    j = j[(j["sample"] == 0) & j["valid"] & j["judge"].isin([A, B])]
    wide = j.pivot_table(
        index=["item_id", "order"], columns="judge", values="chosen", aggfunc="first"
    ).dropna()
    expected = float((wide[A] != wide[B]).mean())
    line = next(x for x in out.splitlines() if x.strip().startswith("changed"))
    value, low, high = (float(x) for x in re.findall(r"-?\d+\.\d+", line)[:3])
    assert value == pytest.approx(expected, abs=5e-5)
    assert low <= value <= high
    assert f"n={len(wide)}" in line and "kappa" in out


def test_i35_4_headline_ranks_systems_with_tau():
    loaded = catalog.load_source("sample:nfl_correctness")
    rows = stability.headline(
        loaded.judgments, loaded.items, "GPT-4.umass", "Llama-7B.umass",
        system="meta.candidate_model", positive="Correct", n_boot=99, n_boot_wild=99,
    ).set_index("measure")  # fmt: skip
    assert {"changed", "agreement", "kappa", "tau"} <= set(rows.index)
    tau = rows.loc["tau"]
    assert -1 <= tau["ci_low"] <= tau["ci_high"] <= 1 and -1 <= tau["value"] <= 1
    assert tau["n"] == 4  # four exam-takers


def test_i35_4_compare_refuses_an_unknown_judge(capsys):
    assert cli.main(["compare", A, "nope", "--benchmark", SAMPLE]) == 2
    err = capsys.readouterr().err
    assert "'nope'" in err and SAMPLE in err and A in err
