"""Loaders of the prompting analyses: verifier decisions files and sample sets."""

from __future__ import annotations

import json

import pytest

from judgelab.analyses import prompting
from judgelab.data import catalog


def test_read_decisions_errors(tmp_path):
    bad = tmp_path / "d.jsonl"
    bad.write_text(json.dumps({"benchmark": "b", "split": "s"}) + "\n")
    with pytest.raises(KeyError, match="missing column"):
        catalog.prompting.read_decisions(bad)


def test_sample_verification_set_loads():
    ver = catalog.prompting.load_verification("sample:judge_strategies")
    assert ver.is_sample and len(ver.decisions) > 0
    table = prompting.verified_accuracy(ver.judgments, ver.decisions, n_boot=20)
    assert (table["vca"] <= table["ca"]).all() and (table["voa"] <= table["oa"]).all()
