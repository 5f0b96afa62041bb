"""Issue 37 item 1: Inspect AI, promptfoo and lm-eval logs imported with `--from TOOL`.

The logs in tests/data/fixtures/bridges/ were written by the real tools against the loopback
fake OpenAI server (README there). Each test checks the imported verdicts against the tool's
own summary figures in the same log. The `@slow` tests at the end run the tools again (when
installed) and check the fresh logs the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from judgelab.cli import main as cli
from judgelab.core import tables
from judgelab.data import ingest
from judgelab.data.bridges import inspect_log
from judgelab.data.importers import SourceFormatError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bridges"
INSPECT_EVAL = FIXTURES / "inspect_bridge_qa.eval"
INSPECT_JSON = FIXTURES / "inspect_bridge_qa.json"
PROMPTFOO = FIXTURES / "promptfoo_results.json"
LM_EVAL = next(FIXTURES.glob("samples_bridge_qa_*.jsonl"), None)


def _eval_readable() -> bool:
    """Whether .eval logs can be read here: Inspect, or a zipfile that reads zstd (3.14+)."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        try:
            zipfile.ZipFile(INSPECT_EVAL).read("header.json")
        except NotImplementedError:
            return False
    return True


needs_eval = pytest.mark.skipif(
    not _eval_readable(),
    reason="an .eval log is zstd-compressed: needs Inspect ([inspect] extra) or Python 3.14",
)
#: Inspect's value_to_float: C 1, P 0.5, I 0.
SCORE = {"Correct": 1.0, "Partial": 0.5, "Incorrect": 0.0}


def _judgments(report) -> pd.DataFrame:
    return pd.concat([tables.read_judgments(p) for p in report.judgment_paths], ignore_index=True)


def _items(report) -> pd.DataFrame:
    return pd.concat([tables.read_items(p) for p in report.items_paths], ignore_index=True)


def _import(log: Path, tool: str, extra: Path | None = None):
    return ingest.import_mapped_file(log, ingest.bridge_mapping(tool, extra))


def _inspect_accuracy(log: Path) -> float:
    """The accuracy Inspect itself computed, from the log (header of .eval, or .json)."""
    if log.suffix == ".eval":
        with zipfile.ZipFile(log) as zf:
            header = json.loads(zf.read("header.json"))
    else:
        header = json.loads(log.read_text(encoding="utf-8"))
    (scores,) = header["results"]["scores"]
    return scores["metrics"]["accuracy"]["value"]


def _check_inspect(log: Path) -> pd.DataFrame:
    judg = _judgments(_import(log, "inspect"))
    assert judg["valid"].all()
    per_sample = judg.assign(v=judg["verdict"].map(SCORE)).groupby("item_id")["v"].mean()
    assert per_sample.mean() == pytest.approx(_inspect_accuracy(log), abs=1e-12)
    return judg


# --- Inspect AI -------------------------------------------------------------------------


def test_i37_1_inspect_log_agrees_with_inspects_accuracy():
    """Before: `--from` did not exist (argparse: --mapping required) and the log was refused
    ('.json': "expected a JSON list of objects"; '.eval': "unsupported file type"). After:
    12 judgments (6 samples x 2 epochs), Inspect's accuracy 0.667 = the imported verdicts'."""
    judg = _check_inspect(INSPECT_JSON)
    assert len(judg) == 12
    assert sorted(judg["sample"].unique()) == [0, 1]  # epochs 1 and 2
    assert sorted(judg["item_id"].unique()) == [f"q{i}" for i in range(1, 7)]
    assert set(judg["judge"]) == {"model_graded_qa:grader-model"}
    assert set(judg["model"]) == {"grader-model"}
    assert judg["output"].str.endswith(("GRADE: C", "GRADE: I")).all()
    assert judg["verdict"].value_counts().to_dict() == {"Correct": 8, "Incorrect": 4}


@needs_eval
def test_i37_1_inspect_eval_log_gives_the_json_logs_tables(tmp_path, monkeypatch):
    """The .eval log of the same run gives the .json's table, and Inspect's accuracy."""
    a = _check_inspect(INSPECT_JSON)
    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "other"))
    b = _check_inspect(INSPECT_EVAL)
    cols = ["item_id", "sample", "judge", "model", "verdict", "output", "judgment_meta"]
    key = ["item_id", "sample"]
    pd.testing.assert_frame_equal(
        a[cols].sort_values(key).reset_index(drop=True),
        b[cols].sort_values(key).reset_index(drop=True),
    )


def test_i37_1_inspect_reads_the_documented_format_without_inspect_ai(monkeypatch):
    """Without the `[inspect]` extra the documented format gives the same records."""
    logs = [INSPECT_JSON, *([INSPECT_EVAL] if _eval_readable() else [])]
    with_tool = {p: inspect_log.read(p) for p in logs}
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    for path, records in with_tool.items():
        assert inspect_log.read(path) == records
    assert len(with_tool[INSPECT_JSON]) == 12


def test_i37_1_an_eval_log_python_cannot_unzip_is_refused_with_the_way_out(monkeypatch):
    """Inspect compresses .eval members with zstd; before 3.14 zipfile cannot read them."""

    def no_zstd(self, name, pwd=None):
        raise NotImplementedError("That compression method is not supported")

    monkeypatch.setattr(inspect_log, "_load", inspect_log._load_documented)
    monkeypatch.setattr(zipfile.ZipFile, "read", no_zstd)
    with pytest.raises(SourceFormatError, match="header.json is compressed with zstd") as info:
        inspect_log.read(INSPECT_EVAL)
    assert "judgelab[inspect]" in str(info.value) and "inspect log convert" in str(info.value)


def test_i37_1_inspect_epochs_that_answered_differently_keep_each_answer(tmp_path):
    """An item's response is the model's answer only when every epoch gave the same one;
    else it is empty and each epoch's answer is its judgment's `judgment_meta.answer` (the
    item stays the sample id, so human labels still join by it)."""
    data = json.loads(INSPECT_JSON.read_text(encoding="utf-8"))
    (second,) = [s for s in data["samples"] if (s["id"], s["epoch"]) == ("q1", 2)]
    second["scores"]["model_graded_qa"]["answer"] = "Paris"  # epoch 2 answered otherwise
    log = tmp_path / "log.json"
    log.write_text(json.dumps(data), encoding="utf-8")
    report = _import(log, "inspect")
    items = _items(report).set_index("item_id")
    judg = _judgments(report)
    assert pd.isna(items.loc["q1", "response"])
    assert items.loc["q2", "response"] == "Eight"
    q1 = judg[judg["item_id"] == "q1"].sort_values("sample")
    assert [json.loads(m)["answer"] for m in q1["judgment_meta"]] == ["Oxygen", "Paris"]


def test_i37_1_inspect_human_labels_join_by_sample_id(tmp_path):
    """Three lines of mapping join human labels by sample id (every epoch gets its label)."""
    log = tmp_path / INSPECT_JSON.name
    shutil.copy(INSPECT_JSON, log)
    human = {"q1": "Incorrect", "q2": "Correct", "q3": "Incorrect", "q4": "Correct"}
    human |= {"q5": "Incorrect", "q6": "Correct"}
    (tmp_path / "human.jsonl").write_text(
        "".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in human.items())
    )
    extra = tmp_path / "human.yaml"
    extra.write_text(
        "join: {files: {human: human.jsonl}, on: {left: sample_id, right: id}, "
        "adds: columns}\ngold: joined.human.label\n"
    )
    report = _import(log, "inspect", extra)
    judg, items = _judgments(report), _items(report)
    assert items.set_index("item_id")["gold"].to_dict() == human
    wrong = judg.loc[~judg["correct"].astype(bool), ["item_id", "sample"]]
    assert sorted(map(tuple, wrong.to_numpy().tolist())) == [("q5", 0), ("q5", 1)]


def test_i37_1_inspect_cli_from_needs_no_mapping(capsys):
    assert cli.main(["data", "import-file", str(INSPECT_JSON), "--from", "inspect"]) == 0
    out = capsys.readouterr().out
    assert "6 items, 12 judgments" in out
    assert "model_graded_qa:grader-model" in out


def test_i37_1_cli_without_mapping_or_from_is_refused(capsys):
    assert cli.main(["data", "import-file", str(INSPECT_JSON)]) == 2
    assert "give --mapping MAPPING.yaml or --from TOOL" in capsys.readouterr().err


# --- promptfoo --------------------------------------------------------------------------


def test_i37_1_promptfoo_grades_and_picks_agree_with_promptfoos_counts():
    """Before: the results file was refused ("expected a JSON list of objects"). After: per
    provider, rubric passes + select-best wins = promptfoo's assertPassCount (4 and 4 of 9),
    the rest its assertFailCount; all-passing outputs = its testPassCount and successes."""
    raw = json.loads(PROMPTFOO.read_text(encoding="utf-8"))["results"]
    rubric = _judgments(_import(PROMPTFOO, "promptfoo"))
    assert len(rubric) == 12 and rubric["valid"].all()
    assert set(rubric["judge"]) == {"llm-rubric:openai:chat:grader-model"}
    provider = rubric["item_id"].str.split(".", n=2).str[2]
    best_report = _import(PROMPTFOO, "promptfoo-select-best")
    best, best_items = _judgments(best_report), _items(best_report)
    assert len(best) == 3 and best["valid"].all() and set(best["shown_first"]) == {"1"}
    meta = best_items.set_index("item_id")["meta"].map(json.loads)
    winner = [
        meta[i]["model_pos" if c == "pos" else "model_neg"].split(".", 1)[1]
        for i, c in zip(best["item_id"], best["chosen"], strict=True)
    ]
    loser = [
        meta[i]["model_neg" if c == "pos" else "model_pos"].split(".", 1)[1]
        for i, c in zip(best["item_id"], best["chosen"], strict=True)
    ]
    for prompt in raw["prompts"]:
        pid, m = prompt["provider"], prompt["metrics"]
        passes = int((rubric["verdict"][provider == pid] == "pass").sum()) + winner.count(pid)
        fails = int((rubric["verdict"][provider == pid] == "fail").sum()) + loser.count(pid)
        assert (passes, fails) == (m["assertPassCount"], m["assertFailCount"]), pid
    # an output passes its test when every grade of it passed (rubric and, if any, its pick)
    lost = {(int(i), p) for i, p in zip(best["item_id"], loser, strict=True)}
    tests = rubric["item_id"].str.split(".").str[0].astype(int)
    passed = [
        v == "pass" and (t, p) not in lost
        for v, t, p in zip(rubric["verdict"], tests, provider, strict=True)
    ]
    assert sum(passed) == raw["stats"]["successes"] == 3
    assert len(passed) - sum(passed) == raw["stats"]["failures"]


def test_i37_1_promptfoo_select_best_over_three_outputs_is_refused(tmp_path):
    data = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    third = json.loads(json.dumps(data["results"]["results"][0]))
    third["provider"]["id"] = "openai:chat:third-model"
    data["results"]["results"].append(third)
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(SourceFormatError, match="test 0: select-best over 3 outputs"):
        _import(bad, "promptfoo-select-best")


# --- lm-evaluation-harness ---------------------------------------------------------------


def test_i37_1_lm_eval_samples_agree_with_lm_evals_metric():
    """After: the metric's mean in lm-eval's results file (0.833) = the share of `correct`."""
    assert LM_EVAL is not None
    (results,) = FIXTURES.glob("results_*.json")
    figure = json.loads(results.read_text())["results"]["bridge_qa"]["judge_correct,none"]
    report = _import(LM_EVAL, "lm-eval")
    judg, items = _judgments(report), _items(report)
    assert len(judg) == 6 and set(judg["judge"]) == {"judge_correct"}
    assert (judg["verdict"] == "Correct").mean() == pytest.approx(figure, abs=1e-12)
    assert set(items["benchmark"]) == {"bridge_qa"}
    assert {json.loads(m)["model"] for m in items["meta"]} == {"test-model"}
    assert items["question"].str.startswith("Answer briefly: ").all()


# --- the tools again ---------------------------------------------------------------------


@pytest.mark.slow
def test_i37_1_a_fresh_inspect_run_agrees(tmp_path):
    pytest.importorskip("inspect_ai", reason="Inspect AI is not installed ([inspect] extra)")
    from judgelab.testing.bridge_logs import make_inspect

    for log in make_inspect(tmp_path / "run"):
        assert len(_check_inspect(log)) == 12


def _tool(env: str, name: str) -> tuple[str, ...]:
    found = os.environ.get(env) or shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (or set {env} to its command)")
    return (found,)


@pytest.mark.slow
def test_i37_1_a_fresh_promptfoo_run_agrees(tmp_path):
    from judgelab.testing.bridge_logs import make_promptfoo

    (log,) = make_promptfoo(tmp_path / "run", _tool("JUDGELAB_PROMPTFOO", "promptfoo"))
    raw = json.loads(log.read_text(encoding="utf-8"))["results"]
    rubric = _judgments(_import(log, "promptfoo"))
    provider = rubric["item_id"].str.split(".", n=2).str[2]
    passes = rubric[rubric["verdict"] == "pass"].groupby(provider).size()
    picks = len(_judgments(_import(log, "promptfoo-select-best")))
    total = sum(p["metrics"]["assertPassCount"] for p in raw["prompts"])
    assert int(passes.sum()) + picks == total


@pytest.mark.slow
def test_i37_1_a_fresh_lm_eval_run_agrees(tmp_path):
    from judgelab.testing.bridge_logs import make_lm_eval

    samples, results = make_lm_eval(tmp_path / "run", _tool("JUDGELAB_LM_EVAL", "lm_eval"))
    figure = json.loads(results.read_text())["results"]["bridge_qa"]["judge_correct,none"]
    judg = _judgments(_import(samples, "lm-eval"))
    assert (judg["verdict"] == "Correct").mean() == pytest.approx(figure, abs=1e-12)
