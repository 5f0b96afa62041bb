"""Secrets: with a key in the environment, no file judgelab writes ever contains it.

A dummy key sits in the environment while `judgelab judge` runs (with retries and failures,
and once against an endpoint that rejects the key), and while `pipeline.run_notebook`
executes notebooks the way `make figures` does: one reads the judge's table and saves a
figure, one runs a judge itself (a parameter asks it to), one fails. Their logs are kept as
files. Then every file under the output root (data, the cache database with its WAL,
reports, executed notebooks and HTML, figures, logs) is scanned for the key.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import nbformat
import pytest

from judgelab.reporting import pipeline
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import judge_command, write_loopback_spec
from judgelab.testing.notebooks import write_notebook
from judgelab.testing.openai_server import FaultPlan, OpenAIServer

KEY = "sk-" + "dummy-SECRET-9f8e7d6c5b4a39281706"
ENV = "JL_SECRET_TEST_API_KEY"


def _items(path: Path, n: int = 12) -> Path:
    return write_pairwise_items(path, n, benchmark="secretbench")


@pytest.mark.timeout(300)
def test_no_written_file_contains_the_key(tmp_path, judgelab_home, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    items = _items(inputs / "items.jsonl")
    logs = judgelab_home / "logs"
    logs.mkdir()
    project = tmp_path / "proj"
    with OpenAIServer(latency_s=0.001) as server:
        spec = write_loopback_spec(
            inputs / "judge.yaml",
            server.url,
            api_key_env=ENV,
            backoff_s=0.001,
            timeout_s=0.5,
            max_retries=1,
        )
        cmd = judge_command(spec)

        def judge(name: str, *args: str) -> int:
            proc = subprocess.run(
                [*cmd, *args], capture_output=True, text=True, timeout=120, check=False
            )
            (logs / f"{name}.log").write_text(proc.stdout + proc.stderr)
            return proc.returncode

        # 1. Retries and failures (5xx twice: more than max_retries=1 allows): exit 1.
        server.set_faults(FaultPlan(rate=0.3, kinds=("500",), attempts=5, seed=2))
        assert judge("judge_failures", "--benchmark", str(items)) == 1
        # 2. The rerun completes (progress bar on, as a user sees it).
        server.set_faults(FaultPlan())
        assert judge("judge_rerun", "--benchmark", str(items)) == 0
        # 3. An endpoint that rejects the key: the error is printed, the key is not.
        server.set_faults(FaultPlan(rate=1.0, kinds=("401",)))
        spec401 = inputs / "judge401.yaml"
        spec401.write_text(spec.read_text().replace("test-model", "other-model"))
        proc = subprocess.run(
            judge_command(spec401, "--benchmark", str(items), "--no-progress"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        (logs / "judge_401.log").write_text(proc.stdout + proc.stderr)
        assert proc.returncode == 2 and "refused" in proc.stderr and ENV in proc.stderr
        server.set_faults(FaultPlan())

        # 4. Notebooks, executed as `make figures` does.
        monkeypatch.setenv("JUDGELAB_PROJECT", str(project))
        write_notebook(
            project / "notebooks" / "90_table.ipynb",
            'items_file: str = ""  # items\nrun: str = "default"  # run name',
            [
                "import os\nimport matplotlib.pyplot as plt\n"
                "from judgelab.analyses import pairwise\n"
                "from judgelab.data import catalog\n"
                "from judgelab.reporting import figures",
                "j = catalog.load_judgments('secretbench')\n"
                "rates = pairwise.pairwise_rates(pairwise.item_outcomes(j), n_boot=20)\n"
                "rates.head()",
                "ax = plt.figure().gca()\nax.bar(range(len(j)), j['valid'].astype(int))\n"
                "figures.save(ax, 'valid', notebook='90_table', run=run, formats=('png', 'svg'))",
                f"print('key variable set:', bool(os.environ.get('{ENV}')))",
            ],
        )
        write_notebook(
            project / "notebooks" / "91_judge.ipynb",
            'spec_file: str = ""  # judge spec\nitems_file: str = ""  # items\n'
            'run: str = "default"  # run name',
            [
                "from judgelab import judges\nfrom judgelab.data import catalog\n"
                "spec = judges.load(spec_file)\n"
                "res = judges.run(catalog.load_items(items_file), spec, progress=True)\n"
                "print(res.summary.format())",
            ],
        )
        write_notebook(
            project / "notebooks" / "92_fails.ipynb",
            'spec_file: str = ""  # judge spec\nrun: str = "default"  # run name',
            [
                "from judgelab import judges\nspec = judges.load(spec_file)\n"
                "raise RuntimeError(f'failing on purpose with {spec.judge_id}')",
            ],
        )
        for nb in ("90_table", "91_judge", "92_fails"):
            (project / "params" / nb).mkdir(parents=True)
        (project / "params" / "90_table" / "default.yaml").write_text(f"items_file: {items}\n")
        (project / "params" / "91_judge" / "default.yaml").write_text(
            f"spec_file: {inputs / 'judge2.yaml'}\nitems_file: {items}\n"
        )
        (inputs / "judge2.yaml").write_text(spec.read_text().replace("test-model", "model-2"))
        (project / "params" / "92_fails" / "default.yaml").write_text(f"spec_file: {spec}\n")
        results = pipeline.reproduce(
            runs=["default"], echo=lambda line: (logs / "reproduce.log").open("a").write(line)
        )
        assert [r.status for r in results] == ["ok", "ok", "failed"], [r.error for r in results]
        # Papermill parameters never carry the key: refused before anything runs.
        shapes = (  # issue 19 item 16: every shape the one detector knows
            "hf_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
            "Bearer " + "q7W2e9R4t1Y6u3I8",
            "https://alice:" + "pw0rd@127.0.0.1/v1",
            "https://127.0.0.1/f?sig=" + "SiGnAtUrE1234",
        )
        for value in (KEY, f"http://user:{KEY}@127.0.0.1/v1", [KEY], *shapes):
            with pytest.raises(pipeline.ParamsError, match="secret"):
                pipeline.run_notebook("90_table", overrides={"items_file": value}, run="leak")
        assert not (judgelab_home / "reports" / "90_table" / "leak.ipynb").exists()
        for r in results:
            nb = nbformat.read(r.ipynb, as_version=4)
            assert KEY not in json.dumps(nb.metadata["papermill"]["parameters"])

    files = sorted(p for p in judgelab_home.rglob("*") if p.is_file())
    kinds = {p.suffix for p in files}
    # Everything that should be there was written, and scanned.
    assert {".parquet", ".sqlite", ".ipynb", ".html", ".json", ".log", ".png", ".svg"} <= kinds
    assert any(p.name == "index.html" for p in files)
    needles = [KEY.encode(), KEY.encode("utf-16-le"), base64.b64encode(KEY.encode())]
    leaks = [str(p) for p in files if any(n in p.read_bytes() for n in needles)]
    assert leaks == []
    # The failing notebook's error is in its executed copy, and still no key there.
    failed = results[-1]
    assert "failing on purpose" in Path(failed.ipynb).read_text()
    print(f"\nsecrets: scanned {len(files)} files ({', '.join(sorted(kinds))}); no key found")


HF_TOKEN = "hf_" + "dummySECRETtoken9f8e7d6c5b4a3928"


def test_hf_token_is_written_nowhere_by_hugging_face_fetches(
    tmp_path, judgelab_home, monkeypatch, capsys
):
    """Gated downloads with `HF_TOKEN`, and failures with it set: the token stays in memory."""
    from judgelab.cli import main as cli
    from judgelab.data import fetch, sources
    from judgelab.testing.hub_server import FakeHub

    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    (tmp_path / "hfgated.yaml").write_text(
        "name: hfgated\nkind: benchmark\ntitle: t\nlicence: MIT\nhomepage: https://x.org\n"
        'origin: {type: huggingface, repo: org/gated, revision: main, prefix: ""}\n'
        'mirror_dir: hfgated\nimporter: "judgelab.data.importers.seeds:import_bffbench"\n'
        "files:\n  - {path: data/train-*.parquet}\n  - {path: README.md}\n"
    )
    monkeypatch.setenv("JUDGELAB_SOURCES", str(tmp_path))
    messages = []
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        sha = hub.commit(
            "org/gated", {"data/train-0-of-1-ab.parquet": b"P" * 500, "README.md": b"r"}
        )
        hub.gated["org/gated"] = HF_TOKEN
        assert cli.main(["data", "fetch", "hfgated"]) == 0  # the token is accepted
        assert all(sent for _, _, sent in hub.requests)  # and sent with every request
        # Failures while the token is set: a refused token, a missing file, a bad download.
        (fetch.cache_root(sources.get_source("hfgated")) / "README.md").unlink()
        for status in (401, 404):
            hub.status[f"datasets/org/gated/resolve/{sha}/README.md"] = status
            assert cli.main(["data", "fetch", "hfgated"]) == 1
        hub.status.clear()
        hub.override["README.md"] = b"other"  # a size mismatch against the lock record
        assert cli.main(["data", "fetch", "hfgated"]) == 2
        monkeypatch.setenv("HF_TOKEN", HF_TOKEN + "x")  # a token the Hub refuses
        with pytest.raises(fetch.FetchError) as info:
            fetch.ensure_local(sources.get_source("hfgated"))
        messages.append(str(info.value))
    out = capsys.readouterr()
    messages += [out.out, out.err]
    assert "HF_TOKEN was not accepted" in out.err and "size mismatch" in out.err
    files = [p for p in judgelab_home.rglob("*") if p.is_file()]
    assert fetch.lock_path() in files
    needles = [
        HF_TOKEN.encode(),
        HF_TOKEN.encode("utf-16-le"),
        base64.b64encode(HF_TOKEN.encode()),
    ]
    assert [str(p) for p in files if any(n in p.read_bytes() for n in needles)] == []
    assert [m for m in messages if HF_TOKEN in m] == []
