"""Issue 19, items 10, 15, 16, 18, 19: YAML bombs, secret shapes, deep JSON, huge lines.

Each test names its item (`test_issue19_<n>_...`) and failed on a71824b:
- 10: a nine-level alias bomb in a params/spec/mapping/registry file hung the check after it;
- 15: a 401 body echoing the key past character 500 printed part of the key;
- 16: `hf_…`, `gsk_…`, `AIza…`, `Bearer …`, `user:pass@` and `?sig=`-style values passed
  the params check (and some the spec check) and were printed unscrubbed;
- 18: JSON nested ~100k deep raised a bare RecursionError;
- 19: a JSON-lines line of any size was read whole and parsed.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from judgelab.core import secrets, tables, yamlsafe
from judgelab.data import sources
from judgelab.data.importers import mapping_spec, records
from judgelab.data.importers.base import SourceFormatError
from judgelab.errors import JudgeSpecError, ParamsError, RegistryError, TableError
from judgelab.judges import clients
from judgelab.judges import spec as spec_mod
from judgelab.reporting import params

KEY = "sk-" + "proj-Zq8Xw2Lk9Vb4Nm7Rt1Yp5Hc3"  # 34 characters, as in the report
SPEC = {
    "endpoint": "openai-compatible",
    "model": "gpt-4o-mini",
    "template": "cjb.workflow",
    "api_key_env": "OPENAI_API_KEY",
}


BASELINE = "reference_similarity"


def _bomb() -> str:
    """The 'billion laughs' YAML: nine levels, each nine aliases of the one before."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def _refused_fast(call, error: type[Exception], path: Path) -> str:
    t0 = time.monotonic()
    with pytest.raises(error) as info:
        call()
    assert time.monotonic() - t0 < 5
    message = str(info.value)
    assert str(path) in message and "alias" in message and "line 1" in message
    return message


# --- 10: YAML bombs ------------------------------------------------------------------------


def test_issue19_10_yaml_bomb_in_params_is_refused(tmp_path):
    p = tmp_path / "bomb.yaml"
    p.write_text(_bomb())
    assert len(p.read_bytes()) < 600
    _refused_fast(lambda: params.load_params(p), ParamsError, p)


def test_issue19_10_yaml_bomb_in_spec_is_refused(tmp_path):
    p = tmp_path / "judge.yaml"
    p.write_text(_bomb())
    _refused_fast(lambda: spec_mod.load(p), JudgeSpecError, p)


def test_issue19_10_yaml_bomb_in_mapping_is_refused(tmp_path):
    p = tmp_path / "mapping.yaml"
    p.write_text(_bomb())
    _refused_fast(lambda: mapping_spec.load_mapping(p), SourceFormatError, p)


def test_issue19_10_yaml_bomb_in_registry_is_refused(tmp_path):
    p = tmp_path / "source.yaml"
    p.write_text(_bomb())
    _refused_fast(lambda: sources.parse_source(p), RegistryError, p)


def test_issue19_10_one_anchor_is_refused_and_plain_yaml_loads():
    with pytest.raises(yamlsafe.YamlError, match=r"x\.yaml, line 2: YAML anchors and aliases"):
        yamlsafe.load("a: 1\nb: &b {c: 2}\n", source="x.yaml")
    assert yamlsafe.load("a: [1, '*not an alias*', '&nor an anchor']\n") == {
        "a": [1, "*not an alias*", "&nor an anchor"]
    }


def test_issue19_10_override_with_an_alias_is_kept_as_a_string():
    got = params.parse_overrides(["files=*.jsonl", "xs=&a [1, 2]", "n=3"])
    assert got == {"files": "*.jsonl", "xs": "&a [1, 2]", "n": 3}


# --- 15: scrub, then clip -------------------------------------------------------------------


class _Echo401(BaseHTTPRequestHandler):
    body = b""

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


def _leaks(message: str, secret: str) -> list[str]:
    """Every 6-character piece of `secret` (past its public prefix) found in `message`."""
    return [secret[i : i + 6] for i in range(3, len(secret) - 5) if secret[i : i + 6] in message]


@pytest.mark.parametrize("client", clients.CLIENTS)
def test_issue19_15_key_echoed_past_500_chars_is_scrubbed_then_clipped(client):
    # 450 + 29 characters before the key: clipping at 500 first kept 21 of its 34 characters.
    text = "x" * 450 + " Incorrect API key provided: " + KEY + ". See the docs."
    _Echo401.body = json.dumps({"error": {"message": text}}).encode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo401)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"

    async def go() -> None:
        async with clients.open_client(client, url, KEY, timeout_s=5, concurrency=1) as c:
            await c.complete({"model": "m", "messages": []})

    try:
        with pytest.raises(clients.FatalError) as info:
            asyncio.run(go())
    finally:
        server.shutdown()
        server.server_close()
    message = str(info.value)
    assert "401" in message and _leaks(message, KEY) == []


def test_issue19_15_error_message_scrubs_before_clipping():
    body = json.dumps({"error": {"message": "y" * 479 + KEY}})
    message = clients.error_message(body, KEY)
    assert _leaks(message, KEY) == [] and len(message) <= 500
    # A key of another shape (not ours) is scrubbed at the boundary too.
    other = "hf_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9"
    assert _leaks(clients.error_message("z" * 495 + other), other) == []


# --- 16: one secret detector ----------------------------------------------------------------

SHAPES = {
    "hf": ("hf_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9", "hf_Ab1Cd2Ef3G"),
    "groq": ("gsk_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9", "Ab1Cd2Ef3Gh4"),
    "google": ("AIza" + "SyAb1Cd2Ef3Gh4Ij5Kl6Mn7Op8", "SyAb1Cd2Ef3Gh4"),
    "bearer": ("Authorization: Bearer " + "q7W2e9R4t1Y6u3I8", "q7W2e9R4t1Y6"),
    "url": ("https://alice:" + "s3cr3tPassw0rd@example.org/v1", "s3cr3tPassw0rd"),
    "access_token": ("https://h.example/v1?access_token=" + "tok987654321", "tok987654321"),
    "auth": ("https://h.example/v1?x=1&auth=" + "auth98765432", "auth98765432"),
    "sig": ("https://blob.example/f?sv=2020&sig=" + "SiGnAtUrE1234%3D", "SiGnAtUrE1234"),
    "key": ("https://h.example/v1?key=" + "k3y9876543210", "k3y9876543210"),
    "token": ("https://h.example/v1?token=" + "t0k3n98765432", "t0k3n98765432"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_issue19_16_params_refuse_every_secret_shape(shape):
    value, _ = SHAPES[shape]
    with pytest.raises(ParamsError, match="secret"):
        params.check_secrets({"source_url": value}, "params/00_data_overview/x.yaml")
    with pytest.raises(ParamsError, match="secret"):
        params.check_secrets({"files": [{"url": value}]}, "p.yaml")


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_issue19_16_specs_refuse_every_secret_shape(shape):
    value, _ = SHAPES[shape]
    with pytest.raises(JudgeSpecError, match="literal API key"):
        spec_mod.from_dict({"endpoint": "offline", "model": BASELINE, "options": {"n": value}})


def test_issue19_16_spec_base_url_with_a_signed_query_is_refused():
    for query in ("access_token=abc123", "auth=abc123", "sig=abc123"):
        with pytest.raises(JudgeSpecError, match="base_url"):
            spec_mod.from_dict({**SPEC, "base_url": f"https://h.example/v1?{query}"})


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_issue19_16_error_messages_scrub_every_secret_shape(shape):
    value, secret_part = SHAPES[shape]
    body = json.dumps({"error": {"message": f"rejected {value} (see docs)"}})
    message = clients.error_message(body)
    assert secret_part not in message and "***" in message and "(see docs)" in message
    with pytest.raises(clients.FatalError) as info:
        clients.raise_for_status(401, body, {})
    assert secret_part not in str(info.value)


def test_issue19_16_ordinary_values_are_not_secrets():
    ordinary = [
        "https://huggingface.co/datasets/princeton-nlp/LLMBar",
        "https://api.openai.com/v1",
        "http://127.0.0.1:8000/v1",
        "data/items/llmbar.parquet",
        "task-specific risk-adjusted sk-learn",
        "https://h.example/search?q=monkey&page=2",
        "gpt-4o-mini__cjb.workflow__1a2b3c4d",
        "Bearer",
    ]
    for value in ordinary:
        assert secrets.find(value) is None, value
        assert secrets.scrub(value) == value
    params.check_secrets({"items_file": ordinary[0], "judges": ordinary[-2:]}, "p.yaml")
    spec_mod.from_dict({**SPEC, "base_url": "http://127.0.0.1:8000/v1"})


# --- 18: deep JSON --------------------------------------------------------------------------

DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_issue19_18_deep_jsonl_names_file_and_line(tmp_path):
    p = tmp_path / "deep.jsonl"
    p.write_text('{"ok": 1}\n' + DEEP + "\n")
    for call in (
        lambda: tables.read_jsonl(p),
        lambda: tables.parse_jsonl(p.read_text(), source=str(p)),
    ):
        with pytest.raises(tables.JsonlError, match=r"deep\.jsonl, line 2: .*nested too deeply"):
            call()


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_issue19_18_deep_json_import_names_the_file(tmp_path, suffix):
    p = tmp_path / f"deep{suffix}"
    p.write_text(DEEP if suffix == ".jsonl" else "[" + DEEP + "]")
    with pytest.raises(SourceFormatError, match=rf"deep\{suffix}.*nested too deeply"):
        records.read_records(p)


# --- 19: size guards ------------------------------------------------------------------------


def test_issue19_19_line_limit_default_and_env(monkeypatch):
    monkeypatch.delenv(tables.MAX_LINE_BYTES_ENV, raising=False)
    assert tables.max_line_bytes() == 64 * 2**20
    monkeypatch.setenv(tables.MAX_LINE_BYTES_ENV, "1000")
    assert tables.max_line_bytes() == 1000
    monkeypatch.setenv(tables.MAX_LINE_BYTES_ENV, "lots")
    with pytest.raises(TableError, match="JUDGELAB_MAX_LINE_BYTES"):
        tables.max_line_bytes()


def test_issue19_19_long_line_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setenv(tables.MAX_LINE_BYTES_ENV, "1000")
    p = tmp_path / "big.jsonl"
    # Line 3 is both too long and not JSON: the size is what is reported, so it was not parsed.
    p.write_text('{"a": 1}\n{"b": "' + "é" * 300 + '"}\n{"c": "' + "x" * 5000 + "\n")
    pattern = r"big\.jsonl, line 3: line longer than 1,000 bytes.*JUDGELAB_MAX_LINE_BYTES"
    with pytest.raises(tables.LineTooLong, match=pattern):
        tables.read_jsonl(p)
    with pytest.raises(tables.LineTooLong, match=pattern):
        tables.parse_jsonl(p.read_text(), source=str(p))
    with pytest.raises(SourceFormatError, match="line 3: line longer than 1,000 bytes"):
        records.read_records(p)
    monkeypatch.setenv(tables.MAX_LINE_BYTES_ENV, "10000")
    with pytest.raises(tables.JsonlError, match="line 3: malformed JSON"):
        tables.read_jsonl(p)


def test_issue19_19_a_huge_line_is_never_read_whole(tmp_path, monkeypatch):
    monkeypatch.setenv(tables.MAX_LINE_BYTES_ENV, str(64 * 1024))
    p = tmp_path / "huge.jsonl"
    p.write_text('{"a": 1}\n{"text": "' + "x" * 20_000_000 + '"}\n')
    tracemalloc.start()
    try:
        with pytest.raises(tables.LineTooLong, match="line 2"):
            tables.read_jsonl(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # the 20 MB line was never held in memory


def test_issue19_19_streamed_read_matches_the_text_parser(tmp_path):
    p = tmp_path / "mixed.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n{"b": "\xc3\xa9"}\n{"c": 3}')
    assert tables.read_jsonl(p) == [
        r for _, r in tables.parse_jsonl(tables.read_utf8(p), source="x")
    ]
    p.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(tables.NotUTF8) as streamed:
        tables.read_jsonl(p)
    with pytest.raises(tables.NotUTF8) as whole:
        tables.read_utf8(p)
    assert str(streamed.value) == str(whole.value)
