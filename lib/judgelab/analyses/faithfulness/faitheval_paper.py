"""FaithEval results in the paper's layouts, your models beside its rows (spec 003 Tables 4–5).

Tables 4/5 (accuracy per source dataset, strict and non-strict, and AVG), Figures 4–6
(original vs FaithEval context), Figure 10 (strict vs non-strict) and the Figure 1 companion
(the mean over the three tasks). The paper's numbers come from `data/targets/faitheval/`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.faithfulness.faitheval_accuracy import accuracy, task_average
from judgelab.analyses.faithfulness.faitheval_grading import MODES, TASKS
from judgelab.data import targets
from judgelab.errors import check_choice

#: The paper's column order of the ten source datasets (Tables 1, 4, 5).
DATASETS = (
    "BioASQ",
    "DROP",
    "HotpotQA",
    "NQ",
    "NewsQA",
    "RACE",
    "SQuAD",
    "SearchQA",
    "TextbookQA",
    "TriviaQA",
)
#: The target table and figure of each task, and their column labels (data/targets/faitheval).
PAPER_TABLE = {"unanswerable": "table4", "inconsistent": "table5"}
PAPER_FIGURE = {"unanswerable": "figure4", "inconsistent": "figure5", "counterfactual": "figure6"}
FIGURE_LABELS = {
    "unanswerable": {"original": "Original Context", "modified": "Unanswerable Context"},
    "inconsistent": {"original": "Original Context", "modified": "Inconsistent Context"},
    "counterfactual": {"none": "No Context (closed-book)", "modified": "Counterfactual Context"},
}
#: Proprietary models of spec 003 Table 3 (drawn in orange in the paper's figures).
PROPRIETARY = frozenset(
    {
        "gpt-3.5-turbo",
        "gpt-4o-mini",
        "gpt-4o",
        "gpt-4-turbo",
        "Command R",
        "Command R+",
        "Claude 3.5 Sonnet",
    }
)


def _paper_wide(task: str, *, targets_root: str | None = None) -> pd.DataFrame:
    t = targets.load_targets("faitheval", PAPER_TABLE[task], root=targets_root)
    wide = t.pivot(index="row", columns="column", values="value")
    wide.index.name = "model"
    return wide


def _columns() -> list[str]:
    return [f"{d} {m}" for d in (*DATASETS, "AVG") for m in ("S", "N")]


def _bars(
    source: str, model: Any, series: tuple[str, Any], accuracy: Any, ci: tuple[Any, Any], n: Any
) -> pd.DataFrame:
    """The long rows of a bar figure: `source, model, <series>, accuracy, ci_low, ci_high, n`."""
    name, value = series
    return pd.DataFrame(
        {
            "source": source,
            "model": model,
            name: value,
            "accuracy": accuracy,
            "ci_low": ci[0],
            "ci_high": ci[1],
            "n": n,
        }
    )


def _your_bars(averages: pd.DataFrame, series: tuple[str, Any]) -> pd.DataFrame:
    """Your models' bars in percent, with their intervals, from `task_average` rows."""
    return _bars(
        "yours",
        averages["label"].astype(str),
        series,
        100 * averages["accuracy"],
        (100 * averages["ci_low"], 100 * averages["ci_high"]),
        averages["n"].astype(float),
    )


def paper_table(
    graded: pd.DataFrame,
    *,
    task: str,
    avg: str = "macro",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Tables 4/5 layout: accuracy per source dataset, S and N, and AVG, beside the paper.

    Args:
        graded: Output of `grade_answers`.
        task: `unanswerable` (Table 4) or `inconsistent` (Table 5); modified contexts only.
        avg: How AVG is taken over the datasets present (`macro`, the paper's, or `micro`).
        with_paper: Add the paper's rows (from `data/targets/faitheval/`).
        targets_root: Folder of the target CSVs (default: the project's).

    Returns:
        One row per model: `source` (`yours` / `paper`), `model`, `n`, then `<dataset> S`,
        `<dataset> N` for the ten datasets and `AVG S`, `AVG N` (fractions; NaN where a
        dataset has no answers). A dataset outside the paper's ten gets its own columns.
    """
    check_choice("task", task, tuple(PAPER_TABLE))
    mine = graded[(graded["task"] == task) & (graded["context_kind"] == "modified")]
    acc = accuracy(mine, by=("label", "source_dataset"))
    avg_tab = task_average(mine, avg=avg, by=("label",), n_boot=1)
    short = {"strict": "S", "nonstrict": "N"}
    acc["column"] = acc["source_dataset"] + " " + acc["mode"].map(short)
    avg_tab["column"] = "AVG " + avg_tab["mode"].map(short)
    long = pd.concat([acc, avg_tab], ignore_index=True)
    yours = long.pivot(index="label", columns="column", values="accuracy")
    extra = sorted(set(yours.columns) - set(_columns()))
    cols = [c for c in _columns() if not c.startswith("AVG")] + extra + ["AVG S", "AVG N"]
    yours = yours.reindex(columns=cols)
    yours.insert(0, "n", mine.groupby("label").size().reindex(yours.index))
    yours.insert(0, "source", "yours")
    yours.index.name = "model"
    out = [yours.reset_index()]
    if with_paper:
        paper = _paper_wide(task, targets_root=targets_root).reindex(columns=cols)
        paper.insert(0, "n", np.nan)
        paper.insert(0, "source", "paper")
        out.append(paper.reset_index())
    return pd.concat(out, ignore_index=True)[["source", "model", "n", *cols]]


def original_vs_modified(
    averages: pd.DataFrame,
    *,
    task: str,
    mode: str = "strict",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Figures 4/5/6 data: each model's accuracy (%) with the original vs the FaithEval context.

    Args:
        averages: Output of `task_average` grouped by `label, task, context_kind`.
        task: `unanswerable`, `inconsistent` or `counterfactual`.
        mode: Matching mode of your models (the paper's bars are strict).
        with_paper: Add the paper's bars (from `data/targets/faitheval/figure{4,5,6}.csv`).
        targets_root: Folder of the target CSVs (default: the project's).

    Returns:
        Long: `source` (`yours`/`paper`), `model`, `context` (the paper's series label),
        `accuracy` (%), `ci_low`, `ci_high` (% ; NaN for paper bars), `n`, `proprietary`.
    """
    check_choice("task", task, TASKS)
    check_choice("mode", mode, MODES)
    labels = FIGURE_LABELS[task]
    a = averages[
        (averages["task"] == task)
        & (averages["mode"] == mode)
        & (averages["context_kind"].isin(list(labels)))
    ]
    frames = [_your_bars(a, ("context", a["context_kind"].map(labels)))]
    if with_paper:
        t = targets.load_targets("faitheval", PAPER_FIGURE[task], root=targets_root)
        frames.append(
            _bars(
                "paper",
                t["row"],
                ("context", t["column"]),
                t["value"],
                (np.nan, np.nan),
                t["n"].astype(float),
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out["proprietary"] = out["model"].isin(PROPRIETARY)
    # The original (or closed-book) series first: the paper sorts its bars by it.
    rank = {label: i for i, label in enumerate(labels.values())}
    return out.sort_values("context", key=lambda c: c.map(rank), kind="stable").reset_index(
        drop=True
    )


def strict_vs_nonstrict(
    averages: pd.DataFrame,
    *,
    task: str = "unanswerable",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Figure 10 data: AVG accuracy (%) under strict and non-strict matching, modified context.

    Returns:
        Long: `source`, `model`, `mode`, `accuracy` (%), `ci_low`, `ci_high`, `n`.
    """
    check_choice("task", task, tuple(PAPER_TABLE))
    a = averages[(averages["task"] == task) & (averages["context_kind"] == "modified")]
    frames = [_your_bars(a, ("mode", a["mode"]))]
    if with_paper:
        w = _paper_wide(task, targets_root=targets_root)
        for col, mode in (("AVG S", "strict"), ("AVG N", "nonstrict")):
            frames.append(
                _bars(
                    "paper",
                    w.index,
                    ("mode", mode),
                    100 * w[col].to_numpy(),
                    (np.nan,) * 2,
                    np.nan,
                )
            )
    return pd.concat(frames, ignore_index=True)


def overall(
    averages: pd.DataFrame,
    *,
    mode: str = "strict",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Figure 1 companion: per model, the modified-context accuracy of each task and their mean.

    The mean is unweighted across the three tasks (spec 003 §2.2) and left NaN for a
    model that lacks a task.

    Returns:
        One row per model: `source`, `model`, `unanswerable`, `inconsistent`,
        `counterfactual` (%), `mean` (%), sorted by `mean` descending.
    """
    check_choice("mode", mode, MODES)
    frames = []
    for task in TASKS:
        f = original_vs_modified(
            averages, task=task, mode=mode, with_paper=with_paper, targets_root=targets_root
        )
        f = f[f["context"] == FIGURE_LABELS[task]["modified"]]
        frames.append(f.assign(task=task))
    long = pd.concat(frames, ignore_index=True)
    wide = long.pivot_table(
        index=["source", "model"], columns="task", values="accuracy", aggfunc="first"
    )
    wide = wide.reindex(columns=list(TASKS))
    wide["mean"] = wide.mean(axis=1, skipna=False)
    return wide.reset_index().sort_values("mean", ascending=False, na_position="last")
