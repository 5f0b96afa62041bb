"""HTML views of the card: the traffic-light summary and the sortable comparison table."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from judgelab.reporting.card.lights import LIGHT_COLOURS
from judgelab.reporting.card.measures import MEASURES, ORDER, headlines


class Html(str):
    """An HTML fragment that notebooks display as HTML (and nbconvert exports verbatim)."""

    def _repr_html_(self) -> str:
        return str(self)


_DOT = (
    '<span class="jl-light jl-{light}" title="{light}" style="display:inline-block;width:14px;'
    "height:14px;border-radius:7px;border:1px solid #555;background:{colour};"
    'vertical-align:middle"></span>'
)


def _dot(light: str) -> str:
    return _DOT.format(light=html.escape(light), colour=LIGHT_COLOURS.get(light, "#fff"))


def _fmt(value: float, low: float = np.nan, high: float = np.nan, digits: int = 3) -> str:
    if value is None or pd.isna(value):
        return "–"
    text = f"{value:.{digits}f}"
    if not (pd.isna(low) or pd.isna(high)):
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def lights_view(lights: pd.DataFrame) -> Html:
    """Return the traffic-light summary: one row per bias for one judge, a matrix for many."""
    style = "border-collapse:collapse;font-size:13px"
    cell = "border:1px solid #ccc;padding:4px 8px;text-align:left"
    judges = lights[["source", "judge"]].drop_duplicates()
    if len(judges) == 1:
        body = []
        for r in lights.itertuples(index=False):
            body.append(
                f"<tr><td style='{cell}'>{_dot(r.light)} {html.escape(r.light)}</td>"
                f"<td style='{cell}'><b>{html.escape(r.bias)}</b></td>"
                f"<td style='{cell}'>{html.escape(MEASURES[r.measure][0])}</td>"
                f"<td style='{cell}'>{_fmt(r.value, r.ci_low, r.ci_high)}</td>"
                f"<td style='{cell}'>{int(r.n) if not pd.isna(r.n) else 0}</td>"
                f"<td style='{cell}'>{html.escape(str(r.rule) if not pd.isna(r.rule) else '')}"
                f"</td><td style='{cell}'>{html.escape(str(r.note or ''))}</td></tr>"
            )
        head = "".join(
            f"<th style='{cell}'>{h}</th>"
            for h in ("light", "bias", "measure", "value [95% CI]", "n", "threshold rule", "note")
        )
        return Html(
            f"<table class='jl-lights' style='{style}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )
    biases = list(dict.fromkeys(lights["bias"]))
    head = f"<th style='{cell}'>judge</th>" + "".join(
        f"<th style='{cell}'>{html.escape(b)}</th>" for b in biases
    )
    body = []
    for (source, judge), block in lights.groupby(["source", "judge"], sort=False):
        by = block.set_index("bias")
        cells = "".join(
            f"<td style='{cell};text-align:center' title='{html.escape(str(by.loc[b, 'note']))}'>"
            f"{_dot(by.loc[b, 'light'])}</td>"
            for b in biases
        )
        body.append(f"<tr><td style='{cell}'>{html.escape(f'{source}:{judge}')}</td>{cells}</tr>")
    return Html(
        f"<table class='jl-lights' style='{style}'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


#: Headline measures in the comparison table (value columns), in page order: every measure
#: but the two that only refine a headline (kappa on the answered subset, kappa with a reference).
COMPARISON_MEASURES = tuple(m for m in ORDER if m not in ("kappa_answered", "kappa_reference"))


def comparison_table(measures: pd.DataFrame, lights: pd.DataFrame | None = None) -> pd.DataFrame:
    """Return one row per judge with each headline measure's value, interval and n.

    Columns: `key`, `source`, `judge`, then per measure `<m>`, `<m>_low`, `<m>_high`,
    `<m>_n` (NaN where it does not apply), then `n_green`, `n_amber`, `n_red` when `lights`
    is given. Rows keep the order of the judges in `measures`.
    """
    head = headlines(measures)
    judges = measures[["source", "judge"]].drop_duplicates().reset_index(drop=True)
    out = judges.copy()
    out.insert(0, "key", out["source"] + ":" + out["judge"])
    idx = head.set_index(["source", "judge", "measure"])
    for m in COMPARISON_MEASURES:
        for suffix, col in (("", "value"), ("_low", "ci_low"), ("_high", "ci_high"), ("_n", "n")):
            vals = []
            for s, jd in zip(judges["source"], judges["judge"], strict=True):
                ok = (s, jd, m) in idx.index and idx.loc[(s, jd, m), "status"] == "ok"
                vals.append(float(idx.loc[(s, jd, m), col]) if ok else np.nan)
            out[f"{m}{suffix}"] = vals
    if lights is not None:
        for light in ("green", "amber", "red"):
            counts = lights[lights["light"] == light].groupby(["source", "judge"]).size()
            out[f"n_{light}"] = [
                int(counts.get((s, jd), 0))
                for s, jd in zip(judges["source"], judges["judge"], strict=True)
            ]
    return out


_SORT_SCRIPT = """<script>
(function () {
  function key(cell, numeric) {
    var v = cell.getAttribute('data-value');
    if (!numeric) { return (v === null ? cell.textContent : v).toLowerCase(); }
    var x = parseFloat(v);
    return isNaN(x) ? null : x;
  }
  document.querySelectorAll('table.jl-sortable').forEach(function (table) {
    if (table.getAttribute('data-ready')) { return; }
    table.setAttribute('data-ready', '1');
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.style.cursor = 'pointer';
      th.addEventListener('click', function () {
        var asc = th.getAttribute('data-dir') !== 'asc';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', asc ? 'asc' : 'desc');
        var numeric = th.getAttribute('data-type') === 'number';
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
          if (x === null && y === null) { return 0; }
          if (x === null) { return 1; }
          if (y === null) { return -1; }
          var c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
</script>"""


def comparison_html(table: pd.DataFrame, lights: pd.DataFrame | None = None) -> Html:
    """Return the comparison table as HTML whose columns sort when a header is clicked.

    Cells show "value [low, high]" and carry the value in `data-value`; a measure cell is
    tinted with its traffic light when `lights` is given; missing values sort last. The
    sorting script is inline (no CDN), so it works in the offline HTML export.
    """
    tint = {}
    if lights is not None:
        for r in lights.itertuples(index=False):
            if r.light in ("green", "amber", "red"):
                tint[(r.source, r.judge, r.measure)] = r.light
    bg = {"green": "#d9f0d3", "amber": "#fde9b5", "red": "#f6c6c0"}
    cell = "border:1px solid #ccc;padding:3px 6px;white-space:nowrap"
    present = [m for m in COMPARISON_MEASURES if table[m].notna().any()]
    heads = [("judge", "text", "source:judge id"), ("source", "text", "")]
    heads += [(MEASURES[m][0], "number", MEASURES[m][1]) for m in present]
    if "n_red" in table:
        heads += [("red lights", "number", "biases graded red")]
    th = "".join(
        f"<th data-type='{t}' title='{html.escape(tip)}' style='{cell};background:#f3f3f3'>"
        f"{html.escape(h)} ⇅</th>"
        for h, t, tip in heads
    )
    body = []
    for r in table.itertuples(index=False):
        d = r._asdict()
        cells = [
            f"<td data-value='{html.escape(d['judge'])}' style='{cell}'>"
            f"<b>{html.escape(d['judge'])}</b></td>",
            f"<td data-value='{html.escape(d['source'])}' style='{cell}'>"
            f"{html.escape(d['source'])}</td>",
        ]
        for m in present:
            v = d[m]
            colour = bg.get(tint.get((d["source"], d["judge"], m), ""), "")
            style = f"{cell};background:{colour}" if colour else cell
            value = "" if pd.isna(v) else repr(float(v))
            n = "" if pd.isna(d[f"{m}_n"]) else f" title='n = {int(d[f'{m}_n'])}'"
            cells.append(
                f"<td data-value='{value}' style='{style}'{n}>"
                f"{_fmt(v, d[f'{m}_low'], d[f'{m}_high'])}</td>"
            )
        if "n_red" in d:
            cells.append(f"<td data-value='{d['n_red']}' style='{cell}'>{d['n_red']}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return Html(
        "<div style='overflow-x:auto'><table class='jl-sortable' id='jl-comparison' "
        "style='border-collapse:collapse;font-size:12px'>"
        f"<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        "<p style='font-size:12px'>Click a header to sort (again to reverse); "
        "values are headline estimates with 95% intervals, hover a cell for n.</p>" + _SORT_SCRIPT
    )
