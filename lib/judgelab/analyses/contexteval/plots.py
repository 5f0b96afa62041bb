"""Plots of the Contextualized Evaluations analyses (spec 002 Table 4-6, Figures 4-6).

Faceted plotters draw every panel in one figure and return the first panel's Axes (its
`.figure` holds them all, which is what `judgelab.reporting.figures.save` writes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from judgelab.analyses import charts
from judgelab.core.schema import require_columns as _require

#: Figure 6 colours: the caption fixes 0 = blue, 3 = red, 4 = purple; 1 and 2 are ours [A].
MAXDIFF_COLOURS = {0: "#1f77b4", 1: "#8fbce6", 2: "#f2b134", 3: "#d62728", 4: "#7b3294"}


def _wrap(setting: str) -> str:
    return str(setting).replace("-", "-\n", 1)


def _pair_title(pair: str) -> str:
    def short(name: str) -> str:
        name = name.rsplit("_", 1)[-1] if len(name) > 26 else name
        return name[:26]

    c1, _, c2 = str(pair).partition("_vs_")
    return f"{short(c1)} vs {short(c2)}" if c2 else str(pair)


def _empty(ax: Axes | None, title: str) -> Axes:
    return charts.no_data(charts.axes(ax, (6, 2)), title=title, axis_off=True)


def _panels(ax: Axes | None, n: int, ncols: int, size: tuple[float, float]) -> np.ndarray:
    """`[ax]` for one panel drawn on a given Axes, else a new grid of `n` panels."""
    if ax is not None and n == 1:
        return np.array([ax])
    return charts.facets(n, ncols, size=size)[1]


def mean_ratings_panels(
    data: pd.DataFrame,
    *,
    x: str = "value",
    y: str = "mean",
    col: str = "attribute",
    hue: str | None = None,
    ncols: int = 4,
    ax: Axes | None = None,
) -> Axes:
    """Draw Figure 5: one panel per attribute, mean rating per value with its interval.

    Args:
        data: `mean_ratings` output: needs `x`, `y`, `col`, `ci_low`, `ci_high`, `n`.
        x: The value column (bars in the data's order).
        y: The mean rating column (1-5 scale).
        col: One panel per value of this column.
        hue: Optional column colouring the bars (e.g. the WEIRD group).
        ncols: Panels per row.
        ax: Ignored when there is more than one panel (a new figure is made).
    """
    _require(data, [x, y, col, "ci_low", "ci_high", "n", hue], "mean ratings")
    title = "Relevance of default responses per attribute value"
    if data.empty:
        return _empty(ax, title)
    panels = list(dict.fromkeys(data[col]))
    axes = _panels(ax, len(panels), ncols, (2.6, 2.3))
    palette = {"WEIRD": "#d95f02", "non-WEIRD": "#7570b3", "": "#999999"}
    for a, panel in zip(axes, panels, strict=False):
        g = data[data[col] == panel]
        pos = np.arange(len(g))
        colours = [palette.get(h, "#1b9e77") for h in g[hue]] if hue else "#1b9e77"
        err = charts.interval_err(g[y], g["ci_low"], g["ci_high"], keep_nan=True)
        a.bar(pos, g[y], color=colours, yerr=err, capsize=2)
        a.set_xticks(pos, list(g[x]), rotation=45, ha="right", fontsize=6)
        a.set_ylim(1, 5.2)
        a.set_title(f"{panel} (n={int(g['n'].min())}-{int(g['n'].max())})", fontsize=7)
        a.set_ylabel("mean relevance (1-5)", fontsize=7)
    fig = axes[0].figure
    if hue:
        fig.legend(
            handles=[Patch(color=palette[k], label=k) for k in ("WEIRD", "non-WEIRD")],
            loc="upper right",
            fontsize=8,
        )
    fig.suptitle(f"{title} (mean, 95% bootstrap CI over queries; n = queries)", fontsize=9)
    fig.subplots_adjust(hspace=1.6, wspace=0.45, top=0.9)
    return axes[0]


def weird_gap_bars(
    data: pd.DataFrame,
    *,
    x: str = "gap",
    y: str = "attribute",
    hue: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Draw the WEIRD gap per attribute (horizontal bars with CI; n and p in the labels).

    Args:
        data: `weird_gap` output: needs `x`, `y`, `ci_low`, `ci_high`, `n_queries`,
            `wilcoxon_p`.
        x: The gap column (rating points).
        y: The attribute column.
        hue: Unused (kept for the plotter signature).
        ax: Axes to draw on.
    """
    _require(data, [x, y, "ci_low", "ci_high", "n_queries", "wilcoxon_p"], "weird gap")
    if data.empty:
        return _empty(ax, "WEIRD gap")
    ax = charts.axes(ax, (7, 0.6 * len(data) + 1.4))
    pos = np.arange(len(data))
    err = charts.interval_err(data[x], data["ci_low"], data["ci_high"], keep_nan=True)
    ax.barh(pos, data[x], xerr=err, color="#d95f02", capsize=3)
    labels = [
        f"{a}\n(n={n}, Wilcoxon p={p:.3g})"
        for a, n, p in zip(data[y], data["n_queries"], data["wilcoxon_p"], strict=True)
    ]
    ax.set_yticks(pos, labels, fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("WEIRD − non-WEIRD mean rating, within query (points)")
    ax.set_title("WEIRD gap of default-response ratings (95% bootstrap CI)")
    return ax


def maxdiff_bars(
    data: pd.DataFrame,
    *,
    x: str = "pct",
    y: str = "attribute",
    hue: str = "maxdiff",
    ax: Axes | None = None,
) -> Axes:
    """Draw Figure 6: 100%-stacked bars of the max rating difference per attribute.

    Args:
        data: `max_difference_distribution` output: needs `x`, `y`, `hue`, `n`.
        x: The percent column.
        y: The attribute column (one bar each, n in the label).
        hue: The max-difference column (0-4; colours of the paper's caption).
        ax: Axes to draw on.
    """
    _require(data, [x, y, hue, "n"], "max-difference distribution")
    if data.empty:
        return _empty(ax, "Max rating difference across values")
    attrs = list(dict.fromkeys(data[y]))
    ax = charts.axes(ax, (8, 0.45 * len(attrs) + 1.5))
    left = np.zeros(len(attrs))
    for k in sorted(data[hue].unique()):
        g = data[data[hue] == k].set_index(y).reindex(attrs)
        vals = g[x].fillna(0).to_numpy()
        ax.barh(attrs, vals, left=left, color=MAXDIFF_COLOURS.get(int(k), "grey"), label=str(k))
        left += vals
    n = data.groupby(y, sort=False)["n"].first().reindex(attrs)
    ax.set_yticks(range(len(attrs)), [f"{a} (n={int(c)})" for a, c in n.items()], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of queries")
    ax.set_title("Max rating difference across attribute values (Fig. 6 layout)")
    ax.legend(title="max diff", loc="lower right", fontsize=7, title_fontsize=8, ncol=5)
    return ax


def agreement_bars(
    data: pd.DataFrame,
    *,
    x: str = "setting",
    y: str = "agreement",
    hue: str = "pair",
    col: str = "source",
    ax: Axes | None = None,
) -> Axes:
    """Draw agreement per setting (bars per pair, 95% CI, n above), one panel per source.

    Args:
        data: `agreement` output for one variant: needs `x`, `y`, `hue`, `col`, `ci_low`,
            `ci_high`, `n`, `significant`.
        x: The setting column.
        y: The agreement column (percent).
        hue: The pair column.
        col: One panel per value of this column.
        ax: Used when there is one panel.
    """
    _require(data, [x, y, hue, col, "ci_low", "ci_high", "n", "significant"], "agreement")
    if data.empty:
        return _empty(ax, "Agreement")
    panels = list(dict.fromkeys(data[col]))
    axes = _panels(ax, len(panels), len(panels), (5.5, 3.8))
    hues = list(dict.fromkeys(data[hue]))
    settings = list(dict.fromkeys(data[x]))
    for a, panel in zip(axes, panels, strict=False):
        g = data[data[col] == panel]
        for k, h in enumerate(hues):
            s = g[g[hue] == h].set_index(x).reindex(settings)
            pos, width = charts.dodge(len(settings), k, len(hues))
            err = charts.interval_err(s[y], s["ci_low"], s["ci_high"], keep_nan=True)
            a.bar(pos, s[y], width=width, yerr=err, capsize=2, label=_pair_title(h))
            for p, v, n, sig in zip(pos, s[y], s["n"], s["significant"], strict=True):
                if np.isfinite(v):
                    star = "*" if sig is True else ""
                    a.text(
                        p,
                        2,
                        f"n={int(n)}{star}",
                        rotation=90,
                        ha="center",
                        fontsize=6,
                        color="white",
                    )
        a.set_xticks(np.arange(len(settings)), [_wrap(t) for t in settings], fontsize=7)
        a.set_ylim(0, 100)
        a.set_ylabel(f"{data['variant'].iloc[0] if 'variant' in g else y} (%)")
        a.set_title(f"{panel} evaluators", fontsize=10)
    fig = axes[0].figure
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=7)
    fig.subplots_adjust(bottom=0.25)
    fig.suptitle(
        "Inter-evaluator agreement by setting (95% bootstrap CI; * p<0.05 vs baseline)",
        fontsize=10,
    )
    fig.subplots_adjust(wspace=0.3, top=0.85)
    return axes[0]


def win_rate_bars(
    data: pd.DataFrame,
    *,
    x: str = "setting",
    y: str = "wr",
    hue: str = "outcome",
    col: str = "pair",
    row: str = "source",
    ax: Axes | None = None,
) -> Axes:
    """Draw Table 6 as grouped bars: candidate 1 / candidate 2 / tie per setting.

    Args:
        data: `win_rates` output (wide: `wr_c1`, `wr_c2`, `wr_tie` and their Wilson bounds,
            `candidate_1`, `candidate_2`, `n_majority`) plus `x`, `col`, `row`.
        x: The setting column.
        y: Prefix of the rate columns.
        hue: Label of the outcome legend.
        col: One panel column per pair.
        row: One panel row per evaluator type.
        ax: Used when there is one panel.
    """
    _require(data, [x, col, row, "wr_c1", "wr_c2", "wr_tie", "n_majority"], "win rates")
    if data.empty:
        return _empty(ax, "Win rates")
    cols, rows = list(dict.fromkeys(data[col])), list(dict.fromkeys(data[row]))
    fig, flat = charts.facets(len(rows) * len(cols), len(cols), size=(4, 3))
    axes = flat.reshape(len(rows), len(cols))
    colours = {"c1": "#1b9e77", "c2": "#d95f02", "tie": "#999999"}
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            a = axes[i, j]
            g = data[(data[row] == r) & (data[col] == c)]
            if g.empty:
                a.set_axis_off()
                continue
            pos = np.arange(len(g))
            names = {"c1": "candidate 1", "c2": "candidate 2", "tie": "Tie"}
            for k, o in enumerate(("c1", "c2", "tie")):
                v = g[f"{y}_{o}"].to_numpy()
                err = charts.interval_err(v, g[f"{y}_{o}_low"], g[f"{y}_{o}_high"], keep_nan=True)
                bars, width = charts.dodge(pos, k, 3, span=0.81)
                a.bar(
                    bars,
                    v,
                    width=width,
                    yerr=err,
                    capsize=2,
                    color=colours[o],
                    label=names[o],
                )
            a.set_xticks(
                pos,
                [f"{_wrap(s)}\n|M|={n}" for s, n in zip(g[x], g["n_majority"], strict=True)],
                fontsize=7,
            )
            a.set_ylim(0, 100)
            a.set_ylabel("win rate (% of majority examples)", fontsize=8)
            a.set_title(f"{r}: {_pair_title(c)}", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, title=hue, loc="upper right", fontsize=7, title_fontsize=7)
    fig.suptitle(
        "Majority-vote win rates by setting (95% Wilson CI; titles: candidate 1 vs candidate 2)",
        fontsize=10,
    )
    fig.subplots_adjust(hspace=0.55, wspace=0.3, top=0.9)
    return axes[0, 0]


def margin_lines(
    data: pd.DataFrame,
    *,
    x: str = "setting",
    y: str = "margin",
    hue: str = "pair",
    col: str = "source",
    ax: Axes | None = None,
) -> Axes:
    """Draw the win-rate margin (C1 − C2) per setting; a sign change is a rank flip.

    Args:
        data: `rank_flips` output: needs `x`, `y`, `hue`, `col`, `flipped`, `n_majority`.
        x: The setting column.
        y: The margin column (points).
        hue: One line per pair.
        col: One panel per evaluator type.
        ax: Used when there is one panel.
    """
    _require(data, [x, y, hue, col, "flipped", "n_majority"], "rank flips")
    if data.empty:
        return _empty(ax, "Rank flips")
    panels = list(dict.fromkeys(data[col]))
    axes = _panels(ax, len(panels), len(panels), (5, 3.6))
    settings = list(dict.fromkeys(data[x]))
    for a, panel in zip(axes, panels, strict=False):
        g = data[data[col] == panel]
        for h, s in g.groupby(hue, sort=False):
            s = s.set_index(x).reindex(settings)
            line = a.plot(range(len(settings)), s[y], marker="o", label=_pair_title(h))[0]
            flips = s["flipped"].eq(True).to_numpy()
            a.scatter(
                np.flatnonzero(flips),
                s[y].to_numpy()[flips],
                s=160,
                facecolors="none",
                edgecolors=line.get_color(),
            )
        a.axhline(0, color="black", lw=0.8)
        a.set_xticks(range(len(settings)), [_wrap(t) for t in settings], fontsize=7)
        a.set_ylabel("win-rate margin C1 − C2 (points)", fontsize=8)
        n = int(g["n_majority"].sum())
        a.set_title(
            f"{panel} evaluators (circled: leader flipped; n={n} majority examples)", fontsize=8
        )
    axes[0].legend(fontsize=6)
    axes[0].figure.subplots_adjust(wspace=0.3)
    return axes[0]


def justification_bars(
    data: pd.DataFrame,
    *,
    x: str = "setting",
    y: str = "pct_surface",
    hue: str = "source",
    ax: Axes | None = None,
) -> Axes:
    """Draw Figure 4: % of surface- (or content-) level justifications per setting.

    Args:
        data: `justification_shares` output: needs `x`, `y`, `hue`, `n` and the Wilson
            bounds `<y>_low`, `<y>_high`.
        x: The setting column.
        y: `pct_surface` or `pct_content`.
        hue: One bar group per evaluator type.
        ax: Axes to draw on.
    """
    _require(data, [x, y, hue, "n", f"{y}_low", f"{y}_high"], "justification shares")
    if data.empty:
        return _empty(ax, "Justification criteria (no coded justifications)")
    ax = charts.axes(ax, (7, 3.6))
    hues = list(dict.fromkeys(data[hue]))
    settings = list(dict.fromkeys(data[x]))
    for k, h in enumerate(hues):
        s = data[data[hue] == h].set_index(x).reindex(settings)
        pos, width = charts.dodge(len(settings), k, len(hues))
        err = charts.interval_err(s[y], s[f"{y}_low"], s[f"{y}_high"], keep_nan=True)
        ax.bar(pos, s[y], width=width, yerr=err, capsize=2, label=h)
        for p, n in zip(pos, s["n"], strict=True):
            if np.isfinite(n):
                ax.text(p, 1, f"n={int(n)}", ha="center", fontsize=7, rotation=90, color="white")
    ax.set_xticks(np.arange(len(settings)), [_wrap(t) for t in settings], fontsize=8)
    ax.set_ylim(0, 100)
    kind = "surface" if "surface" in y else "content"
    ax.set_ylabel(f"% {kind}-level justifications")
    ax.set_title(f"{kind.capitalize()}-level justification share by setting (95% Wilson CI)")
    ax.legend(fontsize=8)
    return ax
