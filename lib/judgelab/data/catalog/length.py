"""Loaders of the length analyses: they find and read files; the analyses take frames."""

from __future__ import annotations

import pandas as pd

from judgelab.data import fetch, sources

#: The published leaderboard file of the registry source (one annotator, one baseline).
ALPACA_LEADERBOARD = "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"

_LEADERBOARD_COLUMNS = [
    "model",
    "published_winrate",
    "published_lc_winrate",
    "published_avg_length",
]


def load_alpaca_leaderboard(source: str = "alpaca_eval") -> pd.DataFrame:
    """Return AlpacaEval's published leaderboard (win_rate, LC win rate), or an empty frame.

    Reads `weighted_alpaca_eval_gpt4_turbo_leaderboard.csv` of the registry source (mirror or
    verified download cache). When the source cannot be had (offline, no mirror) the frame
    is empty, so notebooks running on samples still execute; `source=""` skips the read.
    The frame feeds `judgelab.analyses.length.compare_published`.

    Returns:
        `model`, `published_winrate`, `published_lc_winrate`, `published_avg_length` (chars).
    """
    if not source:
        return pd.DataFrame(columns=_LEADERBOARD_COLUMNS)
    try:
        root = fetch.ensure_local(sources.get_source(source))
    except (fetch.FetchError, OSError, LookupError):
        return pd.DataFrame(columns=_LEADERBOARD_COLUMNS)
    files = sorted(root.glob(f"*{ALPACA_LEADERBOARD}"))
    if not files:
        return pd.DataFrame(columns=_LEADERBOARD_COLUMNS)
    board = pd.read_csv(files[0]).rename(columns={"Unnamed: 0": "model"})
    board = board.drop_duplicates("model")
    out = pd.DataFrame(
        {
            "model": board["model"].astype(str),
            "published_winrate": board["win_rate"].astype(float),
            "published_lc_winrate": board["length_controlled_winrate"].astype(float),
            "published_avg_length": board["avg_length"].astype(float),
        }
    )
    return out.reset_index(drop=True)
