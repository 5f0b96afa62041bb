"""13_reproduction_report on the real corpora (mirror): the peer numbers reproduce."""

import pandas as pd
import pytest

from judgelab.core import paths
from judgelab.reporting import pipeline

NB = "13_reproduction_report"


@pytest.mark.realdata
def test_reproduction_report_on_the_mirror(mirror):
    result = pipeline.run_notebook(
        NB, params_file=paths.project() / "params" / NB / "default.yaml"
    )
    assert result.ok, result.error
    html = open(result.html, encoding="utf-8").read()
    assert "alpaca_eval (loaded)" in html and "llmbar (loaded)" in html
    report = pd.read_csv(paths.figures() / NB / "default" / "reproduction.csv")
    by = report.set_index(["artefact", "row", "column"])
    # LLMBar statistics.json: all 54 numbers reproduce exactly (Acc., both, Agr.)
    llmbar = report[report["artefact"] == "peers/llmbar_statistics"]
    assert len(llmbar) == 54 and (llmbar["status"] == "pass").all()
    assert (llmbar["difference"].abs() < 1e-9).all()
    # AlpacaEval 2 leaderboard: raw and discrete win rates, counts and lengths reproduce
    lb = report[report["artefact"] == "peers/alpaca_eval_leaderboard"]
    exact = lb[lb["column"].isin(["win_rate", "discrete_win_rate", "n_wins", "n_draws"])]
    assert len(exact) == 16 and (exact["difference"].abs() < 1e-6).all()
    assert by.loc[("peers/alpaca_eval_leaderboard", "NullModel", "win_rate"), "reproduced"] == (
        pytest.approx(76.919792, abs=1e-6)
    )
    # ... but not the LC win rate: judgelab's GLM lacks AlpacaEval's instruction term
    lc = lb[lb["column"] == "length_controlled_winrate"]
    assert (lc["status"] == "fail").all() and lc["explanation"].str.contains("instruction").all()
    # PandaLM: 667/999 and 697/999 round to the printed 0.67 / 0.70
    pl = by.loc["peers/pandalm_agreement"]
    assert pl.loc[("pandalm-7b", "agreement with human majority"), "reproduced"] == (
        pytest.approx(667 / 999)
    )
    assert (pl["status"] == "pass").all()
    ev = report[report["artefact"] == "peers/alpaca_eval_evaluators"]
    assert (ev["status"] == "not computable").all()
