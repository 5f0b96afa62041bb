import json
from dataclasses import replace

import pandas as pd

from judgelab.data.importers.faithbench import import_faithbench
from judgelab.data.sources import SourceFile, parse_source, registry_dir


def _sample(sid, raw_id, labels, gpt4o, hhem, true_nli=1):
    annotations = [
        {
            "annot_id": k,
            "annotator_id": f"a{k}",
            "annotator_name": "x",
            "label": lab,
            "note": "",
            "summary_span": "s",
            "summary_start": 0,
            "summary_end": 1,
            "source_span": None,
            "source_start": None,
            "source_end": None,
        }
        for k, lab in enumerate(labels)
    ]
    return {
        "sample_id": sid,
        "source": f"doc {raw_id}",
        "summary": f"sum {raw_id}",
        "annotations": annotations,
        "metadata": {
            "summarizer": "m",
            "raw_sample_id": raw_id,
            "gpt_4o": gpt4o,
            "hhem-2.1": hhem,
            "true_nli": true_nli,
        },
    }


def _import(tmp_path, **options):
    (tmp_path / "data_for_release").mkdir()
    samples = [
        _sample(0, 10, [], gpt4o=1, hhem=0.9),  # consistent
        _sample(1, 11, [["Benign"]], gpt4o=0, hhem=0.2),  # benign only
        _sample(0, 20, [["Questionable"]], gpt4o=1, hhem=0.5, true_nli=None),
        _sample(1, 21, [["Benign"], ["Unwanted", "Unwanted.Intrinsic"]], gpt4o=0, hhem=0.49),
    ]
    (tmp_path / "data_for_release/batch_1.json").write_text(json.dumps({"samples": samples[:2]}))
    (tmp_path / "data_for_release/batch_2.json").write_text(json.dumps({"samples": samples[2:]}))
    src = parse_source(registry_dir() / "faithbench.yaml")
    src = replace(
        src,
        files=[
            SourceFile("data_for_release/batch_1.json"),
            SourceFile("data_for_release/batch_2.json"),
        ],
        options={**src.options, **options},
    )
    return import_faithbench(tmp_path, src)


def test_gold_and_detector_verdicts(tmp_path):
    items, j = _import(tmp_path)
    # default (FaithBench binarize.py): Questionable and Unwanted* are hallucinations
    assert items["item_id"].tolist() == ["10", "11", "20", "21"]  # raw_sample_id, unique
    assert items["gold"].tolist() == ["Consistent", "Consistent", "Hallucinated", "Hallucinated"]
    assert [json.loads(m)["worst_label"] for m in items["meta"]] == [
        "Consistent",
        "Benign",
        "Questionable",
        "Unwanted",
    ]
    g = j[j["judge"] == "gpt_4o.faithbench"].sort_values("item_id")
    # 1 = consistent, 0 = hallucinated: 10 right, 11 wrong, 20 wrong, 21 right
    assert g["verdict"].tolist() == ["Consistent", "Hallucinated", "Consistent", "Hallucinated"]
    assert g["correct"].tolist() == [True, False, False, True]
    h = j[j["judge"] == "hhem-2.1.detector"].sort_values("item_id")
    # threshold 0.5: 0.9 and 0.5 consistent, 0.2 and 0.49 hallucinated
    assert h["verdict"].tolist() == ["Consistent", "Hallucinated", "Consistent", "Hallucinated"]
    t = j[j["judge"] == "true_nli.detector"].sort_values("item_id")
    assert t["valid"].tolist() == [True, True, False, True]  # None -> invalid, kept
    assert pd.isna(t["output"].iloc[2])


def test_gold_rule_is_an_option(tmp_path):
    items, _ = _import(tmp_path, hallucinated_labels=["Unwanted"])
    # only Unwanted counts now: the Questionable sample 20 becomes Consistent
    assert items["gold"].tolist() == ["Consistent", "Consistent", "Consistent", "Hallucinated"]
