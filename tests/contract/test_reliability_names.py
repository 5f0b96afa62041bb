"""Issue 19, items 1, 3 and 21: names that become paths, and where a relative items file is.

1. `--run ..` / `--run .` / a params file `...yaml` deleted figures of every run (or every
   notebook); such names are refused before anything is touched, and the figure folder of a
   run is removed only when it lies strictly inside `figures/<notebook>/`.
3. A benchmark `../x` or `/abs` (mapping constant, data row, items file given to `judge`) wrote
   tables outside `JUDGELAB_HOME`; every name that becomes a path component goes through
   `judgelab.core.names.safe_name`.
21. A relative `judgelab judge --benchmark x.jsonl` was read from the repository root; it is
   read from the working directory, as `data validate` and `data import-file` read theirs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.cli import judge as cli_judge
from judgelab.core import paths
from judgelab.core.names import MAX_LENGTH, check_inside, safe_name
from judgelab.data import catalog, ingest
from judgelab.errors import JudgelabError, UnsafeNameError
from judgelab.judges import runner, store
from judgelab.judges import spec as spec_mod
from judgelab.reporting import pipeline
from judgelab.testing.items import pairwise_rows

NOTEBOOK = "00_data_overview"


def _figures(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in (home / "figures").rglob("*.png"))


def _stage_figures(home: Path) -> list[str]:
    for nb, run in ((NOTEBOOK, "a"), (NOTEBOOK, "b"), ("01_judge_leaderboard", "c")):
        (home / "figures" / nb / run).mkdir(parents=True, exist_ok=True)
        (home / "figures" / nb / run / "x.png").write_text("png")
    return _figures(home)


@pytest.fixture
def no_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never start a kernel: should a bad name get through, the test stays fast."""

    def fake_execute(nb_path, ipynb, params, timeout_s):
        ipynb.parent.mkdir(parents=True, exist_ok=True)
        ipynb.write_text("{}")

    monkeypatch.setattr(pipeline, "_execute", fake_execute)


# --- 1 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("run", ["..", ".", "...", "../01_judge_leaderboard", "/tmp"])
def test_issue19_1_dot_run_names_delete_nothing(judgelab_home, no_kernel, run):
    before = _stage_figures(judgelab_home)
    with pytest.raises(UnsafeNameError, match="run name"):
        pipeline.run_notebook(NOTEBOOK, run=run, html_export=False)
    assert _figures(judgelab_home) == before
    assert not (judgelab_home / "reports").exists() or not any(
        (judgelab_home / "reports").rglob("*.ipynb")
    )


@pytest.mark.parametrize("name", ["...yaml", "..yaml"])
def test_issue19_1_dot_params_file_deletes_nothing(judgelab_home, tmp_path, no_kernel, name):
    before = _stage_figures(judgelab_home)
    params_file = tmp_path / name
    params_file.write_text("{}\n")
    with pytest.raises(UnsafeNameError, match="params file name"):
        pipeline.run_notebook(NOTEBOOK, params_file=params_file, html_export=False)
    assert _figures(judgelab_home) == before


def test_issue19_1_dot_params_file_in_reproduce_is_a_failed_record(judgelab_home, no_kernel):
    """A params file `...yaml` found by `reproduce` becomes a failed run, deleting nothing."""
    before = _stage_figures(judgelab_home)
    params_file = paths.params() / NOTEBOOK / "...yaml"
    result = pipeline._run_params_file(params_file)
    assert result.status == "failed" and "made only of dots" in (result.error or "")
    assert _figures(judgelab_home) == before


def test_issue19_1_figure_removal_stays_inside_the_notebook_folder(judgelab_home, tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.png").write_text("png")
    parent = judgelab_home / "figures" / NOTEBOOK
    parent.mkdir(parents=True)
    (parent / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeNameError, match="link"):
        pipeline._clear_figures(NOTEBOOK, "linked")
    assert (outside / "keep.png").exists()
    for target in (parent, parent / "..", parent / "linked"):
        with pytest.raises(UnsafeNameError, match="not strictly inside"):
            check_inside(target, parent)
    (parent / "old").mkdir()
    (parent / "old" / "x.png").write_text("png")
    assert pipeline._clear_figures(NOTEBOOK, "old") == parent / "old"
    assert not (parent / "old").exists() and parent.exists()


# --- 3 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "",
        ".",
        "..",
        "....",
        "../x",
        "a/b",
        "a\\b",
        "/abs",
        "x\x00y",
        "a b",
        "x" * (MAX_LENGTH + 1),
    ],
)
@pytest.mark.parametrize("kind", ["benchmark", "split", "judge", "run", "notebook", "source"])
def test_issue19_3_one_validator_refuses_unsafe_names(kind, value):
    with pytest.raises(UnsafeNameError, match=f"{kind} name") as info:
        safe_name(kind, value)
    assert isinstance(info.value, JudgelabError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("value", ["llmbar", "sample:x", "gpt-4o__cjb.workflow__ab12", "a+b=c.d"])
def test_issue19_3_one_validator_keeps_ordinary_names(value):
    assert safe_name("judge", value) == value


def test_issue19_3_table_paths_refuse_unsafe_benchmark_and_judge():
    with pytest.raises(UnsafeNameError, match="benchmark name"):
        store.judgments_path("../../elsewhere", "j")
    with pytest.raises(UnsafeNameError, match="judge name"):
        store.details_path("b", "..")
    assert store.judgments_path("b", "j") == paths.judgments() / "b" / "j.parquet"


def _outside(home: Path, name: str) -> list[Path]:
    return [p for p in home.parent.rglob(f"{name}*") if home not in p.parents]


def test_issue19_3_items_file_given_to_judge_never_writes_outside_home(judgelab_home, tmp_path):
    items = tmp_path / "items.jsonl"
    rows = pairwise_rows(2, benchmark="../../../escaped_bench")
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = tmp_path / "offline.yaml"
    spec.write_text("endpoint: offline\nmodel: prefer_longer\n")
    argv = ["--judge", str(spec), "--benchmark", str(items), "--no-progress"]
    assert cli_judge.main(argv) == cli_judge.EXIT_BAD_INPUT
    assert _outside(judgelab_home, "escaped_bench") == []
    # The runner refuses too, whoever calls it (here: a remote-less offline baseline).
    offline = spec_mod.from_dict({"endpoint": "offline", "model": "prefer_longer"})
    with pytest.raises(UnsafeNameError, match="escaped_bench"):
        runner.run(catalog.load_items(str(items)), offline, progress=False)
    assert _outside(judgelab_home, "escaped_bench") == []


def _mapped_csv(tmp_path: Path, bench_cell: str = "b") -> Path:
    data = tmp_path / "judged.csv"
    data.write_text(f"bench,q,a,b,w\n{bench_cell},Q?,x,y,a\n")
    return data


def _mapping(benchmark) -> dict:
    return {
        "benchmark": benchmark,
        "question": "q",
        "response_1": "a",
        "response_2": "b",
        "verdict": {"column": "w", "map": {"a": "A", "b": "B"}},
        "judge": "j",
    }


@pytest.mark.parametrize("bench", ["../../../escaped_const", "ABS"])
def test_issue19_3_mapping_constant_benchmark_never_writes_outside_home(
    judgelab_home, tmp_path, bench
):
    target = tmp_path / "abs_target"
    benchmark = str(target / "escaped_const") if bench == "ABS" else bench
    with pytest.raises(UnsafeNameError, match="benchmark name"):
        ingest.import_mapped_file(_mapped_csv(tmp_path), _mapping(benchmark))
    assert _outside(judgelab_home, "escaped_const") == [] and not target.exists()


def test_issue19_3_data_row_benchmark_never_writes_outside_home(judgelab_home, tmp_path):
    data = _mapped_csv(tmp_path, bench_cell="../../../escaped_row")
    with pytest.raises(UnsafeNameError, match="escaped_row"):
        ingest.import_mapped_file(data, _mapping({"column": "bench"}))
    assert _outside(judgelab_home, "escaped_row") == []
    assert list(judgelab_home.rglob("*.parquet")) == []


# --- 21 --------------------------------------------------------------------------------------


def test_issue19_21_relative_items_file_resolves_against_cwd(
    judgelab_home, tmp_path, monkeypatch, capsys
):
    workdir = tmp_path / "work"
    workdir.mkdir()
    rows = pairwise_rows(3, benchmark="relbench")
    (workdir / "x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = tmp_path / "offline.yaml"
    spec.write_text("endpoint: offline\nmodel: prefer_longer\n")
    monkeypatch.chdir(workdir)
    argv = ["--judge", str(spec), "--benchmark", "x.jsonl", "--no-progress"]
    assert cli_judge.main(argv) == 0, capsys.readouterr().err
    assert (paths.judgments() / "relbench" / "offline-prefer_longer.parquet").exists()
    assert cli_judge._items_source("sample:x") == "sample:x"
    assert cli_judge._items_source("llmbar") == "llmbar"


@pytest.mark.parametrize("bad", ["..", ".", "../x", "a/b"])
def test_issue19_3_spec_id_made_of_dots_or_paths_is_refused(bad):
    base = {
        "endpoint": "openai-compatible",
        "model": "gpt-4o-mini",
        "template": "cjb.workflow",
        "api_key_env": "OPENAI_API_KEY",
    }
    with pytest.raises(spec_mod.JudgeSpecError, match="key 'id'"):
        spec_mod.from_dict({**base, "id": bad})


@pytest.mark.parametrize("source", ["sample:../x", "../x", "sample:a/b"])
def test_issue19_3_catalog_paths_refuse_unsafe_source_names(source):
    with pytest.raises(UnsafeNameError):
        catalog.items_path(source)
    with pytest.raises(UnsafeNameError):
        catalog.judgments_path(source)
