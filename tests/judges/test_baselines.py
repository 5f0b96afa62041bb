"""The offline baselines' declarations: names, options and their checks."""

from __future__ import annotations

import pytest

from judgelab.judges import offline
from judgelab.judges.baselines import BASELINES


def test_every_declared_baseline_has_a_rule():
    assert (
        set(BASELINES)
        == set(offline.RULES)
        == {
            "prefer_longer",
            "always_a",
            "lexical_grounding",
            "reference_similarity",
        }
    )


def test_options_merge_with_defaults_and_bad_ones_are_refused():
    sim = BASELINES["reference_similarity"]
    assert sim.check_options({"threshold": 0.8}) == {"metric": "token_f1", "threshold": 0.8}
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['unit'\]"):
        sim.check_options({"unit": "words"})
    with pytest.raises(ValueError, match=r"metric must be one of \('rougeL', 'token_f1'\)"):
        sim.check_options({"metric": "bleu"})
    with pytest.raises(ValueError, match=r"threshold 2 must be a number in \[0, 1\]"):
        sim.check_options({"threshold": 2})
    with pytest.raises(ValueError, match="refusal_score"):
        BASELINES["lexical_grounding"].check_options({"refusal_score": -1})
