"""Judge specs: YAML/dict validation, literal-key rejection, ids, and the example specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgelab.core import paths
from judgelab.errors import UnsafeNameError
from judgelab.judges import spec as spec_mod
from judgelab.judges.spec import JudgeSpecError

BASE = {
    "endpoint": "openai-compatible",
    "model": "gpt-4o-mini",
    "template": "cjb.workflow",
    "api_key_env": "OPENAI_API_KEY",
}


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "judge.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_minimal_spec_defaults():
    s = spec_mod.from_dict(BASE)
    assert s.orders == (0, 1)  # pairwise items in both orders by default
    assert s.n == 1
    assert s.base_url == "https://api.openai.com/v1"
    assert s.sampling() == {"temperature": 0.0, "max_tokens": 1024}
    assert s.judge_id == "gpt-4o-mini__cjb.workflow"  # readable: model + template (issue 34)
    assert s.prompt_id == "cjb.workflow"


def test_judge_id_changes_with_sampling_params_only():
    a = spec_mod.from_dict(BASE)
    b = spec_mod.from_dict({**BASE, "temperature": 0.7})
    c = spec_mod.from_dict({**BASE, "concurrency": 64, "price_in": 1.0, "price_out": 2.0})
    assert a.judge_id != b.judge_id
    assert a.judge_id == c.judge_id  # run params and prices do not change the judge
    slashy = spec_mod.from_dict({**BASE, "model": "meta-llama/Llama-3.1-8B-Instruct"})
    assert "/" not in slashy.judge_id


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"api_key": "sk-" + "proj-abcdefghijklmnopqrstuvwxyz"}, "api_key"),
        ({"options": {"token": "abc123"}}, "options.token"),
        ({"model": "sk-" + "abcdefghijklmnop1234"}, "model"),
        ({"base_url": "https://user:pw@example.com/v1"}, "base_url"),
        ({"base_url": "https://example.com/v1?api-key=abc"}, "base_url"),
        ({"api_key_env": "sk-" + "abcdefghijklmnopqrstuvwx"}, "api_key_env"),
    ],
)
def test_literal_keys_are_rejected_with_env_var_advice(extra, key):
    with pytest.raises(JudgeSpecError) as info:
        spec_mod.from_dict({**BASE, **extra}, source="params/judges/x.yaml")
    msg = str(info.value)
    assert "params/judges/x.yaml" in msg
    assert f"key '{key}'" in msg
    assert "environment variable" in msg


def test_literal_key_in_yaml_file_names_the_file(tmp_path):
    p = _write(
        tmp_path,
        "endpoint: openai-compatible\nmodel: m\ntemplate: cjb.workflow\n"
        "api_key: sk-" + "live-1234567890abcdef\n",
    )
    with pytest.raises(JudgeSpecError, match=r"judge\.yaml, key 'api_key'.*environment variable"):
        spec_mod.load(p)


@pytest.mark.parametrize(
    ("extra", "key", "what"),
    [
        ({"concurrency": 0}, "concurrency", "at least 1"),
        ({"concurrency": -4}, "concurrency", "at least 1"),
        ({"temperature": 3}, "temperature", "between 0 and 2"),
        ({"top_p": 0}, "top_p", r"in \(0, 1\]"),
        ({"max_tokens": 2.5}, "max_tokens", "integer"),
        ({"n": 0}, "n", "at least 1"),
        ({"timeout_s": "fast"}, "timeout_s", "number"),
        ({"price_in": -1}, "price_in", "0 or more"),
        ({"orders": [2]}, "orders", "both"),
        ({"endpoint": "grpc"}, "endpoint", "openai-compatible"),
        ({"template": "cjb.nope"}, "template", "unknown template"),
        ({"temprature": 0.1}, "temprature", "unknown key"),
        ({"base_url": "localhost:8000"}, "base_url", "http"),
        ({"concurrency": True}, "concurrency", "number"),
        ({"id": "my judge/v1"}, "id", "judge id name .my judge/v1. must not contain a path"),
        ({"id": "jugé"}, "id", "judge id name .jugé."),
    ],
)
def test_bad_values_name_the_key(extra, key, what):
    with pytest.raises(JudgeSpecError, match=rf"key '{key}'.*{what}"):
        spec_mod.from_dict({**BASE, **extra}, source="s.yaml")


def test_missing_required_and_offline_rules(tmp_path):
    with pytest.raises(JudgeSpecError, match="key 'model': missing"):
        spec_mod.from_dict({"endpoint": "offline"})
    with pytest.raises(JudgeSpecError, match="key 'template': missing"):
        spec_mod.from_dict({"endpoint": "openai-compatible", "model": "m"})
    with pytest.raises(JudgeSpecError, match="unknown offline baseline"):
        spec_mod.from_dict({"endpoint": "offline", "model": "coin_flip"})
    with pytest.raises(JudgeSpecError, match="key 'options'.*unknown option"):
        spec_mod.from_dict({"endpoint": "offline", "model": "always_a", "options": {"x": 1}})
    with pytest.raises(JudgeSpecError, match="threshold"):
        spec_mod.from_dict(
            {"endpoint": "offline", "model": "reference_similarity", "options": {"threshold": 2}}
        )
    off = spec_mod.from_dict({"endpoint": "offline", "model": "prefer_longer"})
    assert off.judge_id == "offline-prefer_longer"
    assert off.prompt_id == "offline:prefer_longer"


def test_yaml_errors_name_the_file(tmp_path):
    with pytest.raises(JudgeSpecError, match="no such file"):
        spec_mod.load(tmp_path / "absent.yaml")
    with pytest.raises(JudgeSpecError, match="judge.yaml: empty file"):
        spec_mod.load(_write(tmp_path, ""))
    with pytest.raises(JudgeSpecError, match="judge.yaml: not valid YAML"):
        spec_mod.load(_write(tmp_path, "endpoint: [unclosed\n"))
    with pytest.raises(JudgeSpecError, match="expected a mapping"):
        spec_mod.load(_write(tmp_path, "- a\n- b\n"))


def test_api_key_comes_only_from_the_environment(monkeypatch):
    s = spec_mod.from_dict({**BASE, "api_key_env": "JL_TEST_KEY"})
    monkeypatch.delenv("JL_TEST_KEY", raising=False)
    with pytest.raises(JudgeSpecError, match="JL_TEST_KEY is not set"):
        s.api_key()
    monkeypatch.setenv("JL_TEST_KEY", "sk-test-123")
    assert s.api_key() == "sk-test-123"
    assert "sk-test-123" not in repr(s)
    assert spec_mod.from_dict({**BASE, "api_key_env": None}).api_key() == "EMPTY"


def test_every_example_spec_in_params_loads():
    files = sorted((paths.params() / "judges").glob("*.yaml"))
    assert len(files) >= 5
    specs = {f.stem: spec_mod.load(f) for f in files}
    assert any(s.is_offline for s in specs.values())
    assert any(s.base_url.startswith("https://api.openai.com") for s in specs.values())
    assert spec_mod.resolve("offline-prefer-longer").model == "prefer_longer"
    with pytest.raises(JudgeSpecError, match="no judge spec named 'nope'"):
        spec_mod.resolve("nope")


def test_i34_5_spec_without_id_gets_a_readable_id():
    assert spec_mod.from_dict(BASE).judge_id == "gpt-4o-mini__cjb.workflow"
    warm = spec_mod.from_dict({**BASE, "temperature": 0.7, "n": 3})
    assert warm.judge_id == "gpt-4o-mini__cjb.workflow__temperature=0.7__n=3"
    hf = spec_mod.from_dict({**BASE, "model": "meta-llama/Llama-3.1-8B-Instruct"})
    assert hf.judge_id == "Llama-3.1-8B-Instruct__cjb.workflow"
    local = spec_mod.from_dict({**BASE, "base_url": "http://127.0.0.1:8080/v1"})
    assert local.judge_id == "gpt-4o-mini__cjb.workflow__127.0.0.1:8080"
    with pytest.raises(UnsafeNameError, match=r"no `id:`.*judge name 'my model__cjb.workflow'"):
        _ = spec_mod.from_dict({**BASE, "model": "my model"}).judge_id
