"""05/06 on the real defaults (UMass TriviaQA, LLMBar, PandaLM) via the mirror."""

import pandas as pd
import pytest

from judgelab.core import paths
from judgelab.reporting import pipeline

ROOT = pipeline.paths.project() if hasattr(pipeline, "paths") else None


@pytest.mark.realdata
@pytest.mark.parametrize("nb", ["05_self_preference", "06_reference_quality"])
def test_notebook_on_real_defaults(nb, mirror):
    result = pipeline.run_notebook(  # 200 bootstrap draws: `make figures` runs the default
        nb, params_file=paths.project() / "params" / nb / "default.yaml", overrides={"n_boot": 200}
    )
    assert result.ok, result.error
    html = open(result.html, encoding="utf-8").read()
    assert "ILLUSTRATIVE SAMPLE DATA" not in html  # the real source was used, not the sample
    out = paths.figures() / nb / "default"
    if nb == "05_self_preference":
        rates = pd.read_csv(out / "rates.csv")
        assert rates["value"].dropna().between(-1, 1).all()
        assert set(rates["judge"]) >= {"GPT-4.umass", "Llama3-70B.umass", "EM.baseline"}
        gpt = rates[(rates.judge == "GPT-4.umass") & (rates.metric == "kappa")].iloc[0]
        assert gpt["n_clusters"] == 400 and gpt["ci_low"] <= gpt["value"] <= gpt["ci_high"]
        sv = pd.read_csv(out / "self_vs_others.csv")
        g = sv[(sv.judge == "GPT-4.umass") & (sv.metric == "fpr")].iloc[0]
        assert g["n_self"] == 35  # gpt-4t answers the humans marked Incorrect in V1
        assert g["n_self"] + g["n_others"] == 1089
        ans = pd.read_csv(out / "kappa_by_answered.csv")
        k = ans[(ans.judge == "GPT-4.umass") & (ans.metric == "kappa")].set_index("subset")
        assert (
            k.loc["answered_correctly", "n"] + k.loc["answered_incorrectly", "n"]
            == (k.loc["overall", "n"])
        )
    else:
        acc = pd.read_csv(out / "accuracy_by_condition.csv")
        assert set(acc["condition"]) == {
            "reference=none",
            "reference=self",
            "reference=self+metrics",
        }
        assert (acc["n_items"] == 419).all()  # Natural 100 + Adversarial 134+92+47+46
        sim = pd.read_csv(out / "similarity_kappa.csv")
        rnd = sim[sim.condition == "reference=random"]
        assert len(rnd) == 2 and (rnd["value"].abs() < 0.15).all()  # random references ~ chance
