"""The traffic-light colours, shared by the report card and the index's leaderboard.

A module of its own so the index can colour its lights without importing the card (which
imports every analysis family, scipy and matplotlib included).
"""

from __future__ import annotations

#: Light -> its colour (n/a: white; uncertain: pale blue, not a grade).
LIGHT_COLOURS = {
    "green": "#1a9850",
    "amber": "#f0a30a",
    "red": "#d73027",
    "grey": "#9e9e9e",
    "uncertain": "#c6dbef",
    "n/a": "#ffffff",
}

__all__ = ["LIGHT_COLOURS"]
