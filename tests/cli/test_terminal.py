"""Issue 32 items 13 and 14: what `judgelab` prints is escaped; refused writes are one line.

Item 13 before: a server's error text reached the terminal raw (`FAILED ... \x1b]0;pwned\x07`),
as did escapes inside an imported file quoted by an import error. Item 14 before: a read-only
home gave an `OSError` traceback from `import-file`, `judge` and `run`; a full disk gave one
from `import-file` (pyarrow's "Error writing bytes to file") and `batch ingest`.
"""

from __future__ import annotations

import errno
import http.server
import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from judgelab.cli import terminal
from judgelab.testing.filesystems import fill, tmpfs
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import write_loopback_spec
from judgelab.testing.openai_server import OpenAIServer

ESC = "\x1b]0;pwned\x07\x1b[2J\u202e"
KEY = "sk-" + "terminal-SECRET-0123456789abcdef"

JSONL = (
    '{"id": "q1", "q": "Say hi", "r": ["Hello!", "Go away."], "label": 1, "v": "A"}\n'
    '{"id": "q2", "q": "2+2?", "r": ["5", "4"], "label": 2, "v": "A"}\n'
)
MAPPING = """\
benchmark: term_demo
judge: my-judge
item_id: id
question: q
response_1: r[0]
response_2: r[1]
gold: label
verdict: v
"""


def _judgelab(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "JUDGELAB_HOME": str(home), **env}
    full.pop("JUDGELAB_MIRROR", None)
    return subprocess.run(
        [sys.executable, "-m", "judgelab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
    )


def _no_control(text: str) -> None:
    assert not any(c in text for c in "\x1b\x07\u202e"), text
    assert "Traceback" not in text, text


def test_terminal_safe_escapes_controls_and_keeps_lines():
    assert terminal.terminal_safe("a\x1b[31mb\n\tc") == "a\\x1b[31mb\n\tc"
    assert terminal.terminal_safe("\x9b\u2066x") == "\\x9b\\u2066x"  # C1 CSI, bidi isolate
    stream = terminal.EscapingStream(open(os.devnull, "w"))  # noqa: SIM115
    assert stream.write("\r 50%|###") == 9  # a progress bar's redraw keeps its \r


def test_storage_failure_names_the_reason():
    ro = OSError(errno.EROFS, "Read-only file system", "/x/data")
    assert terminal.storage_failure(ro).startswith("cannot write /x/data: read-only file system")
    full = sqlite3.OperationalError("database or disk is full")
    assert "disk full" in terminal.storage_failure(full)
    assert terminal.storage_failure(ValueError("no")) is None
    assert terminal.storage_failure(OSError(errno.ENOENT, "missing", "f")) is None


class _Hostile(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps({"error": {"message": f"bad {ESC} end"}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def hostile_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_rel3_13_server_error_text_is_escaped(tmp_path, hostile_url):
    if True:
        spec = write_loopback_spec(tmp_path / "j.yaml", hostile_url, api_key_env="JL_T_KEY")
        items = write_pairwise_items(tmp_path / "items.jsonl", 2, benchmark="termbench")
        done = _judgelab(
            "judge", "--judge", str(spec), "--benchmark", str(items), "--no-progress",
            home=tmp_path / "home", JL_T_KEY=KEY,
        )  # fmt: skip
    printed = done.stdout + done.stderr
    assert done.returncode == 1 and "FAILED" in printed
    assert "\\x1b]0;pwned\\x07" in printed
    _no_control(printed)
    assert KEY not in printed


def test_rel3_13_file_contents_quoted_in_an_error_are_escaped(tmp_path):
    bad = JSONL.replace('"label": 2', f'"label": "{ESC.encode("unicode_escape").decode()}"')
    (tmp_path / "j.jsonl").write_text(bad)
    (tmp_path / "m.yaml").write_text(MAPPING)
    done = _judgelab(
        "data", "import-file", str(tmp_path / "j.jsonl"), "--mapping", str(tmp_path / "m.yaml"),
        home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 2 and "j.jsonl" in done.stderr
    _no_control(done.stderr)


@pytest.fixture()
def inputs(tmp_path):
    (tmp_path / "j.jsonl").write_text(JSONL)
    (tmp_path / "m.yaml").write_text(MAPPING)
    return tmp_path


def _mounted(path: Path | None) -> Path:
    if path is None:
        pytest.skip("cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)")
    return path


def _storage_error(done: subprocess.CompletedProcess[str], reason: str) -> None:
    assert done.returncode == 74, done.stderr
    assert done.stderr.startswith("error: cannot write") and reason in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_rel3_14_read_only_home_import_file_judge_and_run(inputs):
    with tmpfs(inputs / "ro", read_only=True) as home:
        home = _mounted(home)
        done = _judgelab(
            "data", "import-file", str(inputs / "j.jsonl"), "--mapping", str(inputs / "m.yaml"),
            home=home,
        )  # fmt: skip
        _storage_error(done, "read-only file system")
        with OpenAIServer() as server:
            spec = write_loopback_spec(inputs / "j.yaml", server.url, api_key_env="JL_T_KEY")
            items = write_pairwise_items(inputs / "items.jsonl", 2, benchmark="termbench")
            done = _judgelab(
                "judge", "--judge", str(spec), "--benchmark", str(items), "--no-progress",
                home=home, JL_T_KEY=KEY,
            )  # fmt: skip
            _storage_error(done, "read-only file system")
            assert server.total == 0  # refused before anything was paid for
        done = _judgelab("run", "00_data_overview", home=home)
        _storage_error(done, "read-only file system")


def test_rel3_14_full_disk_import_file_leaves_nothing_half_written(inputs):
    with tmpfs(inputs / "full", size_kb=256) as home:
        home = _mounted(home)
        fill(home)
        before = sorted(p.name for p in home.rglob("*"))
        done = _judgelab(
            "data", "import-file", str(inputs / "j.jsonl"), "--mapping", str(inputs / "m.yaml"),
            home=home,
        )  # fmt: skip
        _storage_error(done, "disk full")
        assert not list(home.rglob("*.parquet")) and not list(home.rglob("*.tmp*"))
        # only the empty lock files that guard the tables (they stay, as the runner's do)
        left = sorted(p.name for p in home.rglob("*") if p.is_file() and p.suffix != ".lock")
        assert left == [n for n in before if n == ".filler"]


def test_rel3_14_full_disk_batch_ingest(inputs):
    items = write_pairwise_items(inputs / "items.jsonl", 3, benchmark="termbench")
    spec = write_loopback_spec(inputs / "j.yaml", "http://127.0.0.1:9/v1", api_key_env="JL_T_KEY")
    common = ["--judge", str(spec), "--benchmark", str(items)]
    with tmpfs(inputs / "full", size_kb=512) as home:
        home = _mounted(home)
        done = _judgelab("batch", "export", *common, "--out", str(inputs / "in"), home=home)
        assert done.returncode == 0, done.stderr
        lines = (inputs / "in" / "requests-00000.jsonl").read_text().splitlines()
        body = {
            "id": "c",
            "model": "test-model",
            "created": 1,
            "choices": [{"message": {"content": "**Result:** A"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2},
        }
        out = [
            {"id": f"v{n}", "custom_id": json.loads(x)["custom_id"],
             "response": {"status_code": 200, "request_id": "r", "body": body}}
            for n, x in enumerate(lines)
        ]  # fmt: skip
        (inputs / "out.jsonl").write_text("".join(json.dumps(x) + "\n" for x in out))
        fill(home)
        done = _judgelab("batch", "ingest", str(inputs / "out.jsonl"), *common, home=home)
        _storage_error(done, "disk full")
