"""Fixtures of the batch back-end tests: a key in the environment, items, a spec maker."""

from __future__ import annotations

import pytest

from judgelab.data import catalog
from judgelab.judges import spec as spec_mod
from judgelab.testing.judge_cli import loopback_spec_dict

KEY = "sk-" + "batch-SECRET-0123456789abcdef"


@pytest.fixture()
def key_env(monkeypatch):
    """The test key in $JL_BATCH_KEY (the only place it exists)."""
    monkeypatch.setenv("JL_BATCH_KEY", KEY)
    return KEY


@pytest.fixture()
def cjb():
    """The bundled sample: 16 pairwise items, 32 requests with both orders."""
    return catalog.load_items("sample:contextualjudgebench")


@pytest.fixture()
def make_spec():
    """Return a maker of remote judge specs aimed at a URL, keyed by $JL_BATCH_KEY."""

    def make(url: str, **keys):
        env = keys.pop("api_key_env", "JL_BATCH_KEY")
        return spec_mod.from_dict(loopback_spec_dict(url, api_key_env=env, **keys))

    return make
