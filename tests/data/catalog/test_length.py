"""Loaders of the length notebooks: AlpacaEval's published leaderboard."""

from pathlib import Path

import pytest

from judgelab.data import catalog

BOARD = "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
REGISTRY = f"""name: tinyboard
kind: corpus
title: "Tiny leaderboard"
licence: MIT
homepage: https://example.org
origin: {{type: url, base: "http://127.0.0.1:9/"}}
mirror_dir: tinyboard
importer: "judgelab.data.importers.mapping:import_mapped"
options: {{}}
files:
  - {{path: x__{BOARD}}}
"""
CSV = (
    ",win_rate,avg_length,length_controlled_winrate\n"
    "NullModel,76.9,872,86.5\ngpt4_1106_preview,50.0,2049,50.0\nNullModel,1.0,1,1.0\n"
)
COLUMNS = ["model", "published_winrate", "published_lc_winrate", "published_avg_length"]


@pytest.fixture()
def tiny_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A registry source `tinyboard` whose mirror holds one leaderboard CSV."""
    reg = tmp_path / "reg"
    reg.mkdir()
    (reg / "tinyboard.yaml").write_text(REGISTRY)
    mirror = tmp_path / "mirror"
    (mirror / "tinyboard").mkdir(parents=True)
    (mirror / "tinyboard" / f"x__{BOARD}").write_text(CSV)
    monkeypatch.setenv("JUDGELAB_SOURCES", str(reg))
    monkeypatch.setenv("JUDGELAB_MIRROR", str(mirror))
    return mirror


def test_alpaca_leaderboard_reads_the_published_columns(tiny_board):
    board = catalog.length.load_alpaca_leaderboard("tinyboard")
    assert list(board.columns) == COLUMNS
    assert board["model"].tolist() == ["NullModel", "gpt4_1106_preview"]  # first row kept
    null = board.iloc[0]
    assert (null["published_winrate"], null["published_lc_winrate"]) == (76.9, 86.5)
    assert null["published_avg_length"] == 872.0


def test_alpaca_leaderboard_is_empty_when_it_cannot_be_had(monkeypatch):
    assert list(catalog.length.load_alpaca_leaderboard("").columns) == COLUMNS
    assert catalog.length.load_alpaca_leaderboard("no_such_source").empty
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    assert catalog.length.load_alpaca_leaderboard("alpaca_eval").empty
