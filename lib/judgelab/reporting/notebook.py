"""Small display helpers that keep notebooks to one call per step."""

from __future__ import annotations

import html
import json
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.core import paths, tables
from judgelab.core.atomic import atomic_path
from judgelab.data import catalog
from judgelab.reporting import figures, findings, html_export

SAMPLE_BANNER = "ILLUSTRATIVE SAMPLE DATA — NOT RESULTS"


def is_illustrative(table: pd.DataFrame) -> bool:
    """Return True when any row of an items table is marked `meta.illustrative`."""
    if "meta" not in table.columns:
        return False
    return any(
        isinstance(m, str) and json.loads(m).get("illustrative") is True
        for m in table["meta"].dropna().unique()
    )


def banner_html(source: str, table: pd.DataFrame | None = None, *, reason: str = "") -> str:
    """Return the HTML banner describing where the data came from."""
    sample = catalog.is_sample(source) or (table is not None and is_illustrative(table))
    if sample:
        why = f" {html.escape(paths.shown(reason))}" if reason else ""
        return (
            '<div class="judgelab-banner" style="border:3px solid #b00;background:#fee;'
            'padding:10px;font-size:16px;font-weight:bold;color:#900">'
            f"⚠ {SAMPLE_BANNER}: hand-written fixtures from data/samples "
            f"(source {html.escape(source)!s}).{why}</div>"
        )
    return (
        '<div class="judgelab-banner" style="border:1px solid #070;background:#efe;padding:6px">'
        f"Data source: {html.escape(source)}</div>"
    )


def source_banner(source: str, table: pd.DataFrame | None = None, *, reason: str = "") -> None:
    """Display the data-source banner (an unmissable warning for sample data)."""
    from IPython.display import HTML, display

    record_source(source, table, reason=reason)
    display(HTML(banner_html(source, table, reason=reason)))


def show_source(loaded: catalog.Loaded) -> None:
    """Display the banner for tables returned by `catalog.load_source`."""
    record_loaded(loaded)
    display_banner = banner_html(loaded.source, loaded.items, reason=loaded.reason)
    from IPython.display import HTML, display

    display(HTML(display_banner))


#: The outputs of the run this kernel executes (set by `outputs`): what it read is recorded.
_CURRENT: dict[str, Outputs] = {}


def record_source(
    source: str, table: pd.DataFrame | None = None, *, reason: str = "", requested: str = ""
) -> None:
    """Record that the current run read `source` (a sample when named or marked so)."""
    out = _CURRENT.get("run")
    if out is not None:
        sample = catalog.is_sample(source) or (table is not None and is_illustrative(table))
        out.used(source, sample=sample, requested=requested or source, reason=reason)


def record_loaded(loaded: catalog.Loaded) -> None:
    """Record the source a `catalog.load_source` result really came from (and what was tried)."""
    record_source(loaded.source, loaded.items, reason=loaded.reason, requested=loaded.requested)


class SavedTable(type(Path())):  # type: ignore[misc]  # Path subclasses need the concrete class
    """The path of a saved table, shown in a notebook as `saved <run>/<name>.csv`.

    A cell ending in `out.table(...)` displayed the absolute path (`PosixPath('/home/…')`) on
    the shared page; the figures' `Saved` reads the same way.
    """

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(f"saved {self.parent.name}/{self.name}")


def save_table(
    df: pd.DataFrame | pl.DataFrame | Iterable[pd.DataFrame | pl.DataFrame],
    name: str,
    *,
    notebook: str,
    run: str = "default",
) -> Path:
    """Write a result table as CSV beside the run's figures and return its path.

    `df` may come in parts (frames of the same columns, at least one): each is written in
    turn, so a large table is never held as a whole. A polars frame (a large source's
    Examples cases come as such parts) is written by polars' CSV writer.
    """
    target = paths.figures() / notebook / run / f"{name}.csv"
    if isinstance(df, pd.DataFrame):
        return SavedTable(tables.write_text(target, df.to_csv(index=False)))
    parts = [df] if isinstance(df, pl.DataFrame) else df
    with atomic_path(target) as tmp, open(tmp, "wb") as fh:
        for i, part in enumerate(parts):
            if isinstance(part, pl.DataFrame):
                _as_pandas_writes(part).write_csv(fh, include_header=i == 0)
            else:
                fh.write(part.to_csv(index=False, header=i == 0).encode("utf-8"))
    return SavedTable(target)


def _as_pandas_writes(part: pl.DataFrame) -> pl.DataFrame:
    """`part` with empty texts and NaN as null: polars then writes them as pandas does (empty)."""
    floats = [c for c, t in part.schema.items() if t in (pl.Float32, pl.Float64)]
    return part.with_columns(pl.col(pl.String).replace("", None), pl.col(floats).fill_nan(None))


class Outputs:
    """Where one notebook run writes: `figures/<notebook>/<run>/<name>.csv|png|svg`.

    One object per run replaces passing `notebook=…, run=run` to every save:
    `out = notebook.outputs("03_length_bias", run)`, then `out.table(df, "picks_longer")` and
    `out.figure(ax, "picks_longer")`.
    """

    #: What the run read: `{"sources": [{source, requested, sample, reason}]}`, beside the
    #: tables; the pipeline turns it into the run's provenance and its sample-data badge.
    DATA_FILE = "data_read.json"

    def __init__(self, notebook: str, run: str = "default"):
        self.notebook, self.run = notebook, run
        self.sources: list[dict[str, object]] = []

    @property
    def folder(self) -> Path:
        """Return `figures/<notebook>/<run>/`."""
        return paths.figures() / self.notebook / self.run

    def __repr__(self) -> str:
        return f"outputs of {self.notebook} [{self.run}]"

    def table(
        self, df: pd.DataFrame | pl.DataFrame | Iterable[pd.DataFrame | pl.DataFrame], name: str
    ) -> Path:
        """Write a result table (or its parts: `save_table`) as CSV beside the run's figures."""
        return save_table(df, name, notebook=self.notebook, run=self.run)

    def figure(
        self, fig_or_ax: Figure | Axes, name: str, *, formats: tuple[str, ...] = ("png",)
    ) -> figures.Saved:
        """Write a figure as PNG (SVG too if asked), drawn once; return the paths (one line)."""
        return figures.save(fig_or_ax, name, notebook=self.notebook, run=self.run, formats=formats)

    def finding(
        self, found: findings.Finding | pd.DataFrame | None = None, **fields: Any
    ) -> findings.Finding:
        """Declare the run's one named finding; the landing page shows exactly it.

        `found` is a `findings.Finding`, or a result table the finding is read from with
        `findings.from_table(found, **fields)`; without it, `fields` are the finding's own.
        Saved as `finding.json` beside the run's tables.
        """
        if isinstance(found, pd.DataFrame):
            found = findings.from_table(found, **fields)
        elif found is None:
            found = findings.Finding(**fields)
        findings.write(self.folder, found)
        return found

    def applies(self, reason: str | None) -> bool:
        """Return True when a section applies (`reason` is empty); else show why, in one line.

        `reason` comes from the library (e.g. `pairwise.stability_reason(rates)`): None when
        the section can be computed, else a sentence saying why not. The line is marked in
        the output's metadata, so the exported HTML shows the section as its heading and this
        line only (`html_export.collapse_inapplicable`); the `.ipynb` keeps every cell.
        """
        if not reason:
            return True
        from IPython.display import HTML, display

        why = html.escape(reason.rstrip("."))
        line = f'<p class="jl-not-applicable"><i>Not applicable here: {why}.</i></p>'
        display(HTML(line), metadata={"judgelab": {html_export.NOT_APPLICABLE: reason}})
        return False

    def title(self, text: str) -> str:
        """Declare the run's title: the exported page's title and first heading."""
        tables.write_text(self.folder / html_export.TITLE_FILE, text.strip() + "\n")
        return text

    def used(self, source: str, *, sample: bool, requested: str = "", reason: str = "") -> None:
        """Record a data source the run read (once per source), in `DATA_FILE`."""
        entry = {
            "source": source,
            "requested": requested or source,
            "sample": sample,
            "reason": paths.shown(reason),
        }
        if entry not in self.sources:
            self.sources.append(entry)
            text = json.dumps({"sources": self.sources}, indent=1)
            tables.write_text(self.folder / self.DATA_FILE, text)


#: Largest table (in bytes of its data) shown whole; itables shows a sample of bigger ones
#: and says so. The full table is always in the run's CSV.
TABLE_MAX_BYTES = "64KB"
_INTERACTIVE: dict[str, bool] = {}


def interactive_tables(max_bytes: str = TABLE_MAX_BYTES) -> bool:
    """Show every DataFrame the notebook displays as a sortable, searchable table.

    itables in offline mode: its DataTables bundle is embedded in the notebook once, so
    the tables work in JupyterLab and in the exported HTML with no CDN. Only in an IPython
    kernel (a no-op elsewhere, and without itables). Returns True when active.
    """
    try:
        import itables
        from IPython import get_ipython
    except ImportError:
        return False
    if get_ipython() is None:
        return False
    if not _INTERACTIVE.get("on"):
        itables.options.maxBytes = max_bytes
        itables.options.classes = "display compact"
        itables.init_notebook_mode(all_interactive=True, connected=False)
        _INTERACTIVE["on"] = True
    return True


def forget_run() -> None:
    """Forget the current run's state (a warm kernel's next run starts like a fresh kernel's)."""
    _CURRENT.clear()
    _INTERACTIVE.clear()


def short_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: Any = None
) -> str:
    """Format a warning without the machine's paths (`warnings.formatwarning` of a run).

    A shared page printed `/home/<user>/…/site-packages/scipy/stats/…py:592: RuntimeWarning`;
    it now prints `RuntimeWarning: <message> (scipy/stats/_axis_nan_policy.py:592)`.
    """
    where = Path(filename).as_posix()
    for marker in ("site-packages/", "dist-packages/", "lib/judgelab/"):
        if marker in where:
            where = where.split(marker, 1)[1]
            break
    else:
        where = Path(where).name
    return f"{category.__name__}: {message} ({where}:{lineno})\n"


def outputs(notebook: str, run: str = "default") -> Outputs:
    """Return the writer of one run's tables and figures; turn on `interactive_tables`.

    Warnings shown in the run name their module, not the machine's path (`short_warning`).
    """
    interactive_tables()
    warnings.formatwarning = short_warning
    _CURRENT["run"] = Outputs(notebook, run)
    return _CURRENT["run"]
