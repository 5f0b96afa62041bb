"""Peer targets: summary numbers public corpora ship, recomputed from their per-item data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from judgelab.analyses import length, pairwise
from judgelab.core import lengths
from judgelab.core.schema import require_columns as _require
from judgelab.data import catalog, targets
from judgelab.errors import FetchError
from judgelab.reporting.comparison import _VALUE_COLUMNS, compare_values

#: Peer artefact (a `data/targets/peers/` table) -> the registry source holding its items.
PEER_SOURCES = {
    "alpaca_eval_leaderboard": "alpaca_eval",
    "alpaca_eval_evaluators": "alpaca_eval",
    "llmbar_statistics": "llmbar",
    "pandalm_agreement": "pandalm",
}


def load_peer_sources(names: Sequence[str]) -> dict[str, catalog.Loaded | str]:
    """Load each registry source, or say why it cannot be had (offline, no mirror).

    Returns:
        Source name -> its `catalog.Loaded`, or a one-line reason when it is unavailable.
    """
    out: dict[str, catalog.Loaded | str] = {}
    for name in names:
        try:
            out[name] = catalog.load_source(name)
        except (FetchError, OSError, catalog.SourceNotFound) as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
    return out


def sources_label(sources: Mapping[str, catalog.Loaded | str]) -> str:
    """Return a one-line data-source label: each source and whether it loaded.

    >>> sources_label({"llmbar": "FetchError: offline"})
    'peer corpora: llmbar (unavailable)'
    """
    parts = [
        f"{name} ({'loaded' if isinstance(v, catalog.Loaded) else 'unavailable'})"
        for name, v in sources.items()
    ]
    return "peer corpora: " + (", ".join(parts) if parts else "none requested")


def alpaca_leaderboard_values(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    annotator: str = "weighted_alpaca_eval_gpt4_turbo",
    baseline: str = "gpt4_1106_preview",
    aliases: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Recompute AlpacaEval leaderboard columns from the per-item annotations.

    Uses `length.pairwise_verdicts` and `length.length_controlled_winrate` (soft
    preferences; lengths in characters, as AlpacaEval counts them). Only the leaderboard's
    annotator against its baseline is comparable.

    Args:
        items: An alpaca_eval items table (pos = output_1 = baseline, neg = the model).
        judgments: Its judgments; judge ids start with the annotator name.
        annotator: Judge-id prefix of the leaderboard's annotator.
        baseline: The leaderboard's baseline model.
        aliases: Our model name -> the leaderboard's (NullModel's generator is "example").

    Returns:
        `table` ("alpaca_eval_leaderboard"), `row` (model), `column` (win_rate,
        discrete_win_rate, n_wins, n_draws, avg_length, length_controlled_winrate),
        `reproduced`, `n_reproduced` (annotated items).
    """
    aliases = {"example": "NullModel"} if aliases is None else aliases
    _require(judgments, ["judge", "chosen", "verdict"], "alpaca_leaderboard_values")
    chosen = judgments[judgments["judge"].astype(str).str.startswith(annotator + ".")]
    if chosen.empty:
        return pd.DataFrame(columns=_VALUE_COLUMNS)
    counted = lengths.add_lengths(items, unit="chars")
    verdicts = length.pairwise_verdicts(counted, chosen)
    verdicts = verdicts[verdicts["model_pos"] == baseline]
    wr = length.length_controlled_winrate(
        verdicts, model_slot="neg", by=("judge", "split"), n_boot=1, seed=0
    )
    rows = []
    for rec in wr.itertuples(index=False):
        group = verdicts[verdicts["split"] == rec.split]
        model = aliases.get(rec.model, rec.model)
        n = int(rec.n)
        values = {
            "win_rate": rec.raw_winrate,
            "discrete_win_rate": rec.discrete_winrate,
            "n_wins": float((group["chosen"] == "neg").sum()),
            "n_draws": float((group["chosen"] == "tie").sum()),
            "avg_length": rec.mean_len_model,
            "length_controlled_winrate": rec.lc_winrate,
        }
        rows += [
            {
                "table": "alpaca_eval_leaderboard",
                "row": model,
                "column": c,
                "reproduced": v,
                "n_reproduced": n,
            }
            for c, v in values.items()
        ]
    return pd.DataFrame(rows, columns=_VALUE_COLUMNS)


def llmbar_statistics_values(judgments: pd.DataFrame) -> pd.DataFrame:
    """Recompute LLMBar's `statistics.json` measures per judge and set.

    `correct_average` is the accuracy averaged over the two orders (the paper's Acc.),
    `correct_both` the share correct in both orders, `equal` the share with the same winner
    in both orders (the paper's positional agreement; two unparseable outputs count as
    equal, `pairwise.item_outcomes` policy `repo`). An invalid verdict is incorrect.

    Args:
        judgments: LLMBar judgments (both orders), needs `judge`, `split`, `item_id`,
            `sample`, `order`, `valid`, `chosen`, `correct`.

    Returns:
        `table` ("llmbar_statistics"), `row` ("<judge> | <split>"), `column`,
        `reproduced` (percent), `n_reproduced` (complete items).
    """
    _require(judgments, ["judge", "split", "item_id", "order", "chosen", "correct"], "llmbar")
    out = pairwise.item_outcomes(judgments, groups=("judge", "split"), invalid_policy="repo")
    out = out[out["complete"].astype(bool)]
    rows = []
    for (judge, split), g in out.groupby(["judge", "split"], sort=True):
        c0, c1 = g["correct_0"].astype(float), g["correct_1"].astype(float)
        values = {
            "correct_average": 100 * (c0.mean() + c1.mean()) / 2,
            "correct_both": 100 * g["consistently_correct"].astype(float).mean(),
            "equal": 100 * g["consistent"].astype(float).mean(),
        }
        rows += [
            {
                "table": "llmbar_statistics",
                "row": f"{judge} | {split}",
                "column": c,
                "reproduced": v,
                "n_reproduced": len(g),
            }
            for c, v in values.items()
        ]
    return pd.DataFrame(rows, columns=_VALUE_COLUMNS)


def pandalm_agreement_values(judgments: pd.DataFrame) -> pd.DataFrame:
    """Recompute each PandaLM judge's agreement with the human majority label.

    The importer's `correct` is the judge's verdict (tie included) equal to the majority of
    the three annotators; an unparseable output ("garbage") counts as disagreement.

    Returns:
        `table` ("pandalm_agreement"), `row` (the judge's model), `column`, `reproduced`
        (fraction), `n_reproduced`.
    """
    _require(judgments, ["model", "correct"], "pandalm_agreement_values")
    rows = []
    for model, g in judgments.groupby("model", sort=True):
        correct = g["correct"].astype("boolean").fillna(False).astype(float)
        rows.append(
            {
                "table": "pandalm_agreement",
                "row": model,
                "column": "agreement with human majority",
                "reproduced": float(correct.mean()),
                "n_reproduced": len(g),
            }
        )
    return pd.DataFrame(rows, columns=_VALUE_COLUMNS)


def peer_values(sources: Mapping[str, catalog.Loaded | str]) -> pd.DataFrame:
    """Recompute every peer number whose source loaded (see `PEER_SOURCES`)."""
    frames = []
    for name, loaded in sources.items():
        if not isinstance(loaded, catalog.Loaded) or loaded.judgments is None:
            continue
        if name == "alpaca_eval":
            frames.append(alpaca_leaderboard_values(loaded.items, loaded.judgments))
        elif name == "llmbar":
            frames.append(llmbar_statistics_values(loaded.judgments))
        elif name == "pandalm":
            frames.append(pandalm_agreement_values(loaded.judgments))
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=_VALUE_COLUMNS)


def peer_report(
    sources: Mapping[str, catalog.Loaded | str],
    *,
    tolerance: Mapping[str, float],
    peers: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Return the report rows of every peer target (see `compare_values`).

    Args:
        sources: `load_peer_sources` output.
        tolerance: Unit -> the largest accepted |reproduced - target|.
        peers: The peer targets; defaults to `targets.load_targets("peers")`.
    """
    cells = targets.load_targets(targets.PEERS) if peers is None else peers
    unavailable = {}
    for table, source in PEER_SOURCES.items():
        loaded = sources.get(source, "source not requested (add it to the peer sources)")
        if not isinstance(loaded, catalog.Loaded):
            unavailable[table] = f"{source}: {loaded}"
    return compare_values(
        peer_values(sources),
        cells,
        tolerance=tolerance,
        unavailable=unavailable,
        missing_reason="the corpus has no judgments for this row",
    )
