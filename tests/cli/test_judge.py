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


KEY = "sk-" + "test-PARSE-0123456789abcdef"


def _judge_with(tmp_path, monkeypatch, responder, name):
    from judgelab.testing.items import write_pairwise_items
    from judgelab.testing.judge_cli import write_loopback_spec
    from judgelab.testing.openai_server import OpenAIServer

    monkeypatch.setenv("JL_TEST_KEY", KEY)
    items = write_pairwise_items(tmp_path / "items.jsonl", 3, benchmark="parsebench")
    with OpenAIServer(responder=responder) as server:
        spec = write_loopback_spec(
            tmp_path / f"{name}.yaml", server.url, api_key_env="JL_TEST_KEY", id=name
        )
        argv = ["--judge", str(spec), "--benchmark", str(items), "--no-progress"]
        return cli_judge.main(argv)


def test_i34_5_no_verdict_parses(tmp_path, monkeypatch, capsys):
    def chatty(body):
        return f"I think the first one\x1b[31m is better. key {KEY}"

    assert _judge_with(tmp_path, monkeypatch, chatty, "chatty") == cli_judge.EXIT_INCOMPLETE
    err = capsys.readouterr().err
    assert "none of the 6 verdicts could be parsed by template 'cjb.workflow'" in err
    assert "I think the first one\\x1b[31m is better" in err  # escaped, one raw output
    assert KEY not in err and "test-PARSE" not in err


def test_i34_5_most_verdicts_fail_to_parse_warns(tmp_path, monkeypatch, capsys):
    from judgelab.testing.openai_server import default_responder

    calls = []

    def mostly_chatty(body):
        calls.append(1)
        return default_responder(body) if len(calls) % 3 == 0 else "no idea"

    assert _judge_with(tmp_path, monkeypatch, mostly_chatty, "mostly") == 0
    err = capsys.readouterr().err
    assert "warning: 4 of the 6 verdicts could not be parsed by template 'cjb.workflow'" in err
    assert "e.g. 'no idea'" in err


def test_i34_5_list_templates(capsys):
    assert cli_judge.main(["--list-templates"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("cjb.workflow "))
    assert "pairwise" in row and "contextualjudgebench" in row
    from judgelab.judges import templates

    assert sum(line.split()[0] in templates.REGISTRY for line in lines if line) == len(
        templates.REGISTRY
    )
    assert cli_judge.main(["--benchmark", "sample:contextualjudgebench"]) == 2
    assert "--judge is required" in capsys.readouterr().err
