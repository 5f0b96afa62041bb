"""Notebook 14 (judge report card) on the real default judges (needs the real-data mirror)."""

import argparse
from pathlib import Path

import pandas as pd
import pytest

from judgelab.cli import card as cli_card
from judgelab.core import paths
from judgelab.reporting import card, notebook, pipeline

ROOT = Path(__file__).resolve().parents[2]
NB = "14_judge_report_card"


@pytest.mark.realdata
def test_comparison_card_on_every_default_judge(mirror):
    # The default parameters but 200 bootstrap draws: `make figures` runs the full default.
    result = pipeline.run_notebook(
        NB, params_file=ROOT / "params" / NB / "default.yaml", overrides={"n_boot": 200}
    )
    assert result.ok, result.error
    assert notebook.SAMPLE_BANNER not in Path(result.ipynb).read_text(encoding="utf-8")
    out = paths.figures() / NB / "default"
    table = pd.read_csv(out / "comparison.csv")
    assert len(table) == 38
    assert table["source"].value_counts().to_dict() == {
        "llmbar": 12,
        "position_bias_analyzer": 9,
        "umass_llm_eval_triviaqa": 9,
        "faithbench": 8,
    }
    m = pd.read_csv(out / "measures.csv", keep_default_na=False, na_values=[""])
    ok = m[(m["status"] == "ok") & m["ci_low"].notna()]
    assert (ok["ci_low"] <= ok["value"] + 1e-9).all() and (
        ok["value"] <= ok["ci_high"] + 1e-9
    ).all()
    head = m[m["headline"]].set_index(["source", "judge", "measure"]).sort_index()
    # every LLMBar judge is carded on the same 419 items of the five default splits
    ca = head.xs("ca", level="measure").loc["llmbar"]
    assert (ca["n"] == 419).all() and ca["value"].between(0, 1).all()
    # Position-Bias-Analyzer has no gold: accuracy says why, position preference remains
    pba = head.loc[("position_bias_analyzer", "gpt-4-0613.mtbench-pair")]
    assert pba.loc["ca", "status"] == "n/a" and "no gold" in pba.loc["ca", "note"]
    assert pba.loc["pos_a_rate", "status"] == "ok"
    # UMass GPT-4 is more lenient with GPT-4 answers (No Free Labels Fig. 4): FPR gap > 0
    gpt4 = head.loc[("umass_llm_eval_triviaqa", "GPT-4.umass")]
    assert gpt4.loc["self_gap", "value"] > 0 and gpt4.loc["self_gap", "ci_low"] > 0
    assert gpt4.loc["kappa_human", "value"] > 0.6
    # FaithBench items carry their source document: the context trend applies
    fb = head.loc[("faithbench", "gpt-4-turbo.faithbench")]
    assert fb.loc["context_trend", "status"] == "ok" and fb.loc["context_trend", "n"] == 750
    assert fb.loc["ca", "status"] == "n/a" and "pointwise" in fb.loc["ca", "note"]


@pytest.mark.realdata
def test_card_command_prints_the_html(mirror, capsys):
    parser = argparse.ArgumentParser()
    cli_card.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["card", "llmbar:GPT-4.Vanilla", "-p", "n_boot=200"])
    assert args.func(args) == 0
    html = Path(capsys.readouterr().out.strip())
    assert html.name == "llmbar__GPT-4.Vanilla.html" and html.exists()
    lights = pd.read_csv(paths.figures() / NB / "llmbar__GPT-4.Vanilla" / "traffic_lights.csv")
    assert set(lights["judge"]) == {"GPT-4.Vanilla"} and len(lights) == len(card.LIGHTS)
