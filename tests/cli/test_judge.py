"""`judgelab judge --benchmark <registry source>` imports the source on first use."""

from __future__ import annotations

from judgelab.cli import judge as cli_judge
from judgelab.core import paths, tables
from judgelab.data import ingest


def test_a_registry_source_is_imported_on_first_use(tiny_registry, capsys):
    assert not ingest.is_imported("tinypairs")
    args = ["--judge", "offline-always-a", "--benchmark", "tinypairs", "--no-progress"]
    assert cli_judge.main(args) == 0
    assert ingest.is_imported("tinypairs")  # fetched from the (tmp) mirror, verified, imported
    judged = sorted((paths.judgments() / "tinypairs").glob("*.parquet"))
    assert {"GPT-4.parquet", "Llama.parquet"} < {p.name for p in judged}  # the imported ones
    ours = [p for p in judged if p.name not in ("GPT-4.parquet", "Llama.parquet")]
    assert len(ours) == 1 and set(tables.read_judgments(ours[0]).item_id) == {"1", "2"}
    capsys.readouterr()
    # Imported already: the second run reads the tables on disk (no new import).
    first = (paths.items() / "tinypairs.parquet").stat().st_mtime_ns
    assert cli_judge.main([*args, "--dry-run"]) == 0
    assert (paths.items() / "tinypairs.parquet").stat().st_mtime_ns == first


def test_sample_and_unknown_names_still_work(tiny_registry, capsys):
    args = ["--judge", "offline-always-a", "--no-progress", "--dry-run"]
    assert cli_judge.main([*args, "--benchmark", "sample:contextualjudgebench"]) == 0
    assert cli_judge.main([*args, "--benchmark", "nosuchbench"]) == 2
    err = capsys.readouterr().err
    assert "items source 'nosuchbench'" in err and "does not exist" in err


def test_a_source_that_cannot_be_fetched_is_one_clear_line(tiny_registry, capsys):
    (tiny_registry / "tiny/j.csv").unlink()
    args = ["--judge", "offline-always-a", "--benchmark", "tinypairs", "--no-progress"]
    assert cli_judge.main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: source 'tinypairs'") and "missing from the mirror" in err
