"""FaithBench (vectara/FaithBench): human hallucination spans + detector / LLM-judge verdicts.

`data_for_release/batch_<n>.json` = `{"samples": [...]}`; a sample has `sample_id` (unique
within its batch only), `source` (the document), `summary`, `annotations` (each with
`label`, e.g. ["Unwanted", "Unwanted.Intrinsic"], and span fields) and `metadata`
(`summarizer`, `raw_sample_id`, and detector predictions).

Items: pointwise, context = the source document, response = the summary, item_id = the
`raw_sample_id` (unique across batches), split "all". Gold is defined by the source option
`hallucinated_labels` (default, FaithBench's own `scripts/binarize.py`: Questionable,
Unwanted, Unwanted.Intrinsic, Unwanted.Extrinsic): "Hallucinated" when any annotation
carries one of those labels, else "Consistent" (no annotation, or Benign only). meta keeps
the annotations, the worst label (Unwanted > Questionable > Benign > Consistent) and the
summarizer.

Judgments: the binary predictions `gpt-3.5-turbo`, `gpt-4-turbo`, `gpt_4o` (LLM-as-judge,
judge "<model>.faithbench") and `trueteacher`, `true_nli` (judge "<model>.detector") with
1 = consistent, 0 = hallucinated (HHEM's convention, and the direction of agreement with
the human labels in the real data); the HHEM probabilities `hhemv1`, `hhem-2.1`,
`hhem-2.1-english` are "Consistent" at or above option `hhem_threshold` (default 0.5). A
missing or non-numeric prediction is invalid; `output` keeps the raw value.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    assemble,
    field,
    judge_id,
    number_or_none,
    pointwise_outcome,
    read_json,
    source_files,
)

HALLUCINATED_LABELS = ("Questionable", "Unwanted", "Unwanted.Intrinsic", "Unwanted.Extrinsic")
LLM_JUDGES = ("gpt-3.5-turbo", "gpt-4-turbo", "gpt_4o")
BINARY_DETECTORS = ("trueteacher", "true_nli")
SCORE_DETECTORS = ("hhemv1", "hhem-2.1", "hhem-2.1-english")
_SEVERITY = {"Benign": 1, "Questionable": 2, "Unwanted": 3}
_BATCH = re.compile(r"batch_(\d+)\.json$")


def worst_label(labels: list[str]) -> str:
    """Return the most severe label family among `labels`, "Consistent" when empty.

    >>> worst_label(["Benign", "Unwanted.Extrinsic"]), worst_label([])
    ('Unwanted', 'Consistent')
    """
    families = [lab.split(".")[0] for lab in labels if lab.split(".")[0] in _SEVERITY]
    return max(families, key=_SEVERITY.get) if families else "Consistent"


def detector_verdict(value: Any, *, threshold: float | None = None) -> str | None:
    """Map a detector prediction to "Consistent"/"Hallucinated"; None when unusable.

    Binary predictions (threshold None) must be 0 or 1; probabilities are compared with
    `threshold`.

    >>> detector_verdict(1), detector_verdict(0), detector_verdict(None)
    ('Consistent', 'Hallucinated', None)
    >>> detector_verdict(0.52694, threshold=0.5), detector_verdict(2)
    ('Consistent', None)
    """
    x = number_or_none(value)
    if x is None:
        return None
    if threshold is None:
        return {1.0: "Consistent", 0.0: "Hallucinated"}.get(x)
    if not 0 <= x <= 1:
        return None
    return "Consistent" if x >= threshold else "Hallucinated"


def import_faithbench(root: Path, source: Any) -> Imported:
    """Import the FaithBench batches: items with human gold, detector predictions as judges."""
    root = Path(root)
    benchmark, split = source.name, "all"
    hallucinated = set(source.options.get("hallucinated_labels", HALLUCINATED_LABELS))
    threshold = float(source.options.get("hhem_threshold", 0.5))
    items: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    for path in source_files(source, "data_for_release/batch_*.json"):
        file = root / path
        data = read_json(root, path)
        samples = data.get("samples") if isinstance(data, dict) else None
        if not isinstance(samples, list):
            raise SourceFormatError(str(file), "expected {'samples': [...]}", column="samples")
        batch = _BATCH.search(path)
        for i, s in enumerate(samples):
            meta_in = field(s, "metadata", file=file, row=i, kinds=(dict,))
            annotations = field(s, "annotations", file=file, row=i, kinds=(list,))
            labels = []
            for a in annotations:
                lab = a.get("label") if isinstance(a, dict) else None
                if not isinstance(lab, list):
                    raise SourceFormatError(
                        str(file), "annotation without a label list", row=i, column="annotations"
                    )
                labels += [str(x) for x in lab]
            gold = "Hallucinated" if hallucinated & set(labels) else "Consistent"
            iid = str(field(meta_in, "raw_sample_id", file=file, row=i))
            items.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": iid,
                    "task": "pointwise",
                    "question": None,
                    "context": field(s, "source", file=file, row=i, kinds=(str,)),
                    "response_pos": None,
                    "response_neg": None,
                    "response": field(s, "summary", file=file, row=i, kinds=(str,)),
                    "reference": None,
                    "gold": gold,
                    "meta": {
                        "batch": int(batch.group(1)) if batch else None,
                        "sample_id": s.get("sample_id"),
                        "summarizer": meta_in.get("summarizer"),
                        "worst_label": worst_label(labels),
                        "annotations": annotations,
                        "gold_rule": "Hallucinated if any annotation label is in "
                        f"{sorted(hallucinated)}, else Consistent",
                    },
                }
            )
            for name in (*LLM_JUDGES, *BINARY_DETECTORS, *SCORE_DETECTORS):
                if name not in meta_in:
                    continue
                value = meta_in[name]
                prompt = "faithbench" if name in LLM_JUDGES else "detector"
                verdict = detector_verdict(
                    value, threshold=threshold if name in SCORE_DETECTORS else None
                )
                judgments.append(
                    {
                        "benchmark": benchmark,
                        "split": split,
                        "item_id": iid,
                        "judge": judge_id(name, prompt),
                        "model": name,
                        "prompt": prompt,
                        "condition": "",
                        "sample": 0,
                        "output": None if value is None else str(value),
                        **pointwise_outcome(verdict, gold=gold),
                    }
                )
    return assemble(items, judgments, what=source.name)
