"""Plotters for reference-quality ablations (notebook 06): `f(data, *, x, y, hue, ax)`.

The ablations draw the same grouped rate bars as correctness grading; `rate_bars` lives in
`judgelab.analyses.charts` and is re-exported here so the family's notebook finds it as
`reference.plots.rate_bars`.
"""

from __future__ import annotations

from judgelab.analyses.charts import rate_bars as rate_bars

__all__ = ["rate_bars"]
