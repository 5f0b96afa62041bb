"""Issue 37 item 4: the report card notebook (14) on an imported Inspect log and promptfoo file.

The logs are the real tools' (tests/data/fixtures/bridges/). The Inspect log gets human labels
joined by sample id (docs/importing.md §15b); the promptfoo file is imported twice (its
`llm-rubric` grades and its `select-best` picks). One comparison card covers the three judges;
its figures are checked against the tools' own summaries and the labels.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgelab.core import paths
from judgelab.data import ingest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bridges"
INSPECT = FIXTURES / "inspect_bridge_qa.json"
PROMPTFOO = FIXTURES / "promptfoo_results.json"
HUMAN = {"q1": "Incorrect", "q2": "Correct", "q3": "Incorrect", "q4": "Correct"}
HUMAN |= {"q5": "Incorrect", "q6": "Correct"}
INSPECT_KEY = "bridge_qa_human:model_graded_qa:grader-model"
RUBRIC_KEY = "promptfoo_human:llm-rubric:openai:chat:grader-model"
PICK_KEY = "promptfoo_select_best:select-best:openai:chat:grader-model"


def _join_labels(where: Path, log: Path, tool: str, labels: dict[str, str], bench: str) -> None:
    """Import the tool's log with human labels joined by the tool's item id."""
    shutil.copy(FIXTURES / log.name, where / log.name)
    (where / f"{bench}.jsonl").write_text(
        "".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in labels.items())
    )
    extra = where / f"{bench}.yaml"
    left = {"inspect": "sample_id", "promptfoo": "item_id"}[tool]
    extra.write_text(
        f"benchmark: {bench}\n"
        f"join: {{files: {{human: {bench}.jsonl}}, on: {{left: {left}, right: id}}, "
        "adds: columns}\ngold: joined.human.label\n"
    )
    ingest.import_mapped_file(where / log.name, ingest.bridge_mapping(tool, extra))


def _promptfoo_labels() -> dict[str, str]:
    """A human's grade of each promptfoo output: Correct when it is the reference answer."""
    from judgelab.testing.bridge_logs import QUESTIONS

    raw = json.loads((FIXTURES / "promptfoo_results.json").read_text(encoding="utf-8"))
    out = {}
    for r in raw["results"]["results"]:
        answer, ref = r["response"]["output"].strip().lower(), QUESTIONS[r["testIdx"]][2].lower()
        key = f"{r['testIdx']}.{r['promptIdx']}.{r['provider']['id']}"
        out[key] = "Correct" if answer and answer in ref else "Incorrect"
    return out


def _import_logs(where: Path) -> dict[str, str]:
    labels = _promptfoo_labels()
    _join_labels(where, INSPECT, "inspect", HUMAN, "bridge_qa_human")
    _join_labels(where, PROMPTFOO, "promptfoo", labels, "promptfoo_human")
    ingest.import_mapped_file(
        FIXTURES / "promptfoo_results.json", ingest.bridge_mapping("promptfoo-select-best")
    )
    return labels


@pytest.mark.slow
def test_i37_4_report_card_on_imported_inspect_and_promptfoo_logs(tmp_path, monkeypatch):
    """Before: the logs could not be imported (`--from` missing; '.eval' and the .json files
    refused), so no card. First after: the card failed on the Inspect judge ("has no
    judgments", epochs imported as samples 1 and 2: a card reads sample 0). After: the card
    runs; the Inspect judge's pass rate is Inspect's accuracy (0.667), the human labels' is
    0.5, judge-human agreement 5/6; the rubric's pass rate is promptfoo's 4 passes of 12."""
    from judgelab.reporting import pipeline

    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    labels = _import_logs(tmp_path)
    params = tmp_path / "bridges.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "judges": [INSPECT_KEY, RUBRIC_KEY, PICK_KEY],
                "label_map": {"pass": "Correct", "fail": "Incorrect"},
                "min_n": 5,
                "n_boot": 200,
            }
        )
    )
    result = pipeline.run_notebook("14_judge_report_card", params_file=params, html_export=False)
    assert result.status == "ok", result.error
    measures = pd.read_csv(paths.figures() / "14_judge_report_card" / "bridges" / "measures.csv")
    assert set(measures["key"]) == {INSPECT_KEY, RUBRIC_KEY, PICK_KEY}

    def value(key: str, measure: str, scope: str | None = None) -> float:
        rows = measures[(measures["key"] == key) & (measures["measure"] == measure)]
        if scope is not None:
            rows = rows[rows["scope"] == scope]
        (v,) = rows["value"].tolist()
        return v

    inspect_accuracy = 0.6666666666666666  # results.scores[0].metrics.accuracy of the log
    assert value(INSPECT_KEY, "pass_rate_grounded", "judge only") == pytest.approx(
        inspect_accuracy
    )
    assert value(INSPECT_KEY, "pass_rate_grounded", "all human labels") == pytest.approx(0.5)
    assert value(INSPECT_KEY, "agreement_human") == pytest.approx(5 / 6)
    assert value(INSPECT_KEY, "kappa_human") == pytest.approx(2 / 3)
    assert value(INSPECT_KEY, "stability", "repeat trials") == 0.0  # epochs graded alike
    # promptfoo: 4 llm-rubric passes of 12 grades (the assertPassCount 4 + 4 of its two
    # providers, less the 4 select-best picks they won), against the human grades
    raw = json.loads((FIXTURES / "promptfoo_results.json").read_text(encoding="utf-8"))
    grades = {
        f"{r['testIdx']}.{r['promptIdx']}.{r['provider']['id']}": c["pass"]
        for r in raw["results"]["results"]
        for c in r["gradingResult"]["componentResults"]
        if c["assertion"]["type"] == "llm-rubric"
    }
    assert value(RUBRIC_KEY, "pass_rate_grounded", "judge only") == pytest.approx(4 / 12)
    human_pass = sum(v == "Correct" for v in labels.values()) / len(labels)
    assert value(RUBRIC_KEY, "pass_rate_grounded", "all human labels") == pytest.approx(human_pass)
    agree = sum(grades[k] == (labels[k] == "Correct") for k in labels) / len(labels)
    assert value(RUBRIC_KEY, "agreement_human") == pytest.approx(agree)
    assert value(PICK_KEY, "invalid_rate", "judgments") == 0.0
