"""A judge is resolved once: template or baseline, and the conditions a run uses."""

from __future__ import annotations

import pytest

from judgelab.judges import spec as spec_mod
from judgelab.judges import templates
from judgelab.judges.baselines import BASELINES
from judgelab.judges.resolved import Resolved


def _remote(**extra):
    data = {"endpoint": "openai-compatible", "model": "m", "template": "nfl.single"}
    return spec_mod.from_dict({**data, "api_key_env": "K", **extra})


def test_conditions_given_else_spec_else_template_default():
    assert Resolved.of(_remote()).conditions == ("reference=none",)  # the template's default
    spec = _remote(conditions=["reference=human"])
    assert Resolved.of(spec).conditions == ("reference=human",)
    given = ["reference=wrong", "reference=none", "reference=wrong"]
    assert Resolved.of(spec, given).conditions == ("reference=wrong", "reference=none")


def test_existing_conditions_the_template_takes_are_appended():
    judge = Resolved.of(
        _remote(),
        ["reference=human"],
        existing=["reference=self", "context=with", "reference=human"],
    )
    # context=with is not a condition nfl.single takes: left out, never an error.
    assert judge.conditions == ("reference=human", "reference=self")
    assert judge.template is templates.get("nfl.single") and judge.baseline is None


def test_a_requested_condition_the_template_does_not_take_is_an_error():
    with pytest.raises(ValueError, match="does not take condition key 'context'"):
        Resolved.of(_remote(), ["context=with"])


def test_offline_baselines_use_their_own_conditions_and_ignore_the_table():
    spec = spec_mod.from_dict({"endpoint": "offline", "model": "reference_similarity"})
    judge = Resolved.of(spec, existing=["reference=self"])
    assert judge.conditions == ("reference=human",)
    assert judge.baseline is BASELINES["reference_similarity"] and judge.template is None
    assert Resolved.of(spec, ["reference=wrong"]).conditions == ("reference=wrong",)
