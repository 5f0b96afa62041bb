"""Export an executed notebook as the HTML report people read and share.

The page is for readers: code cells are hidden behind one "Show code" toggle (the template
`resources/nbconvert/judgelab`; the executed `.ipynb` keeps everything), the parameters
cells are left out (their values are in the provenance footer), a section whose lib call
said it cannot apply (`notebook.Outputs.applies`) is reduced to its heading and that one
line, and a run's declared title (`notebook.Outputs.title`) replaces the page's title.

itables' offline bundle (about 1 MB once base64-encoded) is not embedded in every page: it
is written once to `reports/_shared/` (named by its content hash) and each page loads it by
a relative link, so the reports still work offline, from file://.

The template's style sheets (JupyterLab's theme, ~260 KB, the same on every page) go the same
way (`share_styles`): one shared file, one link per page.

Figures are the other weight of a page: the inline PNGs matplotlib writes are full-colour
RGBA, most of whose bytes encode anti-aliasing shades. The page re-encodes each with an
adaptive palette (`compact_images`, same pixels and size; 14's comparison card 1.62 MB ->
0.96 MB on real data); the full-colour PNG stays in `figures/` (an SVG too, where asked for).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from judgelab.core import paths, tables
from judgelab.reporting import notebook_stack

#: The folder beside the report folders that holds what every page shares.
SHARED = "_shared"
#: Output metadata key of the one line that says why a section does not apply.
NOT_APPLICABLE = "not_applicable"
#: Where a run's declared title is saved, beside its tables.
TITLE_FILE = "title.txt"
#: Colours of the adaptive palette a page's inline PNGs are re-encoded with.
PNG_COLOURS = 256
_PARAMETER_TAGS = frozenset({"parameters", "injected-parameters"})
_HEADING = re.compile(r"^(#{1,6})\s+\S")


def export_report(
    ipynb: Path, target: Path, *, footer: str = "", header: str = "", title: str = ""
) -> None:
    """Write the HTML report of the executed notebook `ipynb` to `target` (atomically).

    Args:
        ipynb: The executed notebook.
        target: The HTML file to write (normally `reports/<nb>/<run>.html`).
        footer: HTML put before </body> (the provenance footer).
        header: HTML put first in <body> (the sample-data badge and the finding).
        title: The run's declared title: the page's <title> and its first heading.
    """
    notebook_stack.prepare()
    import nbformat

    nb = nbformat.read(ipynb, as_version=4)
    # Pages for readers, not coders (the report card): notebook metadata
    # `judgelab.hide_input` leaves the code out of the HTML (the .ipynb keeps it).
    hide_input = bool((nb.metadata.get("judgelab") or {}).get("hide_input"))
    exporter = html_exporter(hide_input)
    nb.cells = collapse_inapplicable(
        [c for c in nb.cells if not _PARAMETER_TAGS & set(c.metadata.get("tags", []))]
    )
    if title:
        nb.metadata["title"] = title
        _retitle(nb.cells, title)
    share_itables(nb.cells, target)
    compact_images(nb.cells)
    body, _ = exporter.from_notebook_node(nb, resources={"jl_code_toggle": not hide_input})
    body = share_styles(body, target)
    if header:  # the sample-data badge and the run's finding, before the first cell
        at = body.find(">", body.find("<body")) + 1 if "<body" in body else 0
        body = body[:at] + header + body[at:]
    if footer:
        at = body.rfind("</body>")
        body = body[:at] + footer + body[at:] if at >= 0 else body + footer
    tables.write_text(target, body)


@functools.cache
def html_exporter(hide_input: bool = False) -> Any:
    """Return the page exporter, one per process and `hide_input`: ~0.5 s of CPU a page saved.

    Compiling its templates took 0.53 s of a report card's 1.4 s export (cProfile, load 5);
    `reproduce`'s workers export one page after another, so each compiles them once. The
    exporter keeps no state between pages: a page's own values go in through `resources`
    (`test_i34_6_one_exporter_per_process_gives_the_pages_a_fresh_one_gives`).
    """
    from nbconvert import HTMLExporter

    templates = Path(str(resources.files("judgelab") / "resources" / "nbconvert"))
    exporter = HTMLExporter(template_name="judgelab", extra_template_basedirs=[str(templates)])
    if hide_input:
        exporter.exclude_input = True
        exporter.exclude_input_prompt = True
        exporter.exclude_output_prompt = True
    return exporter


def declared_title(folder: Path) -> str:
    """Return the title a run declared (`notebook.Outputs.title`), "" when none."""
    try:
        return (folder / TITLE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _level(cell: Any) -> int:
    """Return the heading level a markdown cell opens with (0: no heading)."""
    if cell.cell_type != "markdown":
        return 0
    found = _HEADING.match(cell.source.lstrip())
    return len(found.group(1)) if found else 0


def _reason_outputs(cell: Any) -> list[Any]:
    return [
        o
        for o in cell.get("outputs", [])
        if NOT_APPLICABLE in ((o.get("metadata") or {}).get("judgelab") or {})
    ]


def collapse_inapplicable(cells: list[Any]) -> list[Any]:
    """Reduce every section holding a not-applicable line to its heading and that line.

    A section opens with a markdown heading of level 2 or deeper and runs to the next heading
    of the same or a higher level. Its heading cell keeps its heading line only; the cell
    that displayed the reason keeps only that output; every other cell of it is left out.
    """
    keep = list(cells)
    for i, cell in enumerate(cells):
        if cell.cell_type != "code" or not _reason_outputs(cell):
            continue
        start = next((k for k in range(i - 1, -1, -1) if _level(cells[k])), None)
        if start is None or _level(cells[start]) < 2:
            continue  # outside any section: the line stays where it is
        level = _level(cells[start])
        end = next((k for k in range(i + 1, len(cells)) if 0 < _level(cells[k]) <= level), None)
        for k in range(start, len(cells) if end is None else end):
            keep[k] = None
        heading = cells[start].copy()
        heading.source = heading.source.lstrip().splitlines()[0]
        line = cell.copy()
        line.outputs = _reason_outputs(cell)
        keep[start], keep[i] = heading, line
    return [c for c in keep if c is not None]


def compact_images(cells: list[Any], colours: int = PNG_COLOURS) -> int:
    """Re-encode every inline PNG of `cells` with an adaptive palette where that is smaller.

    Same width, height and pixels up to the palette (`colours` colours, no dithering: plot
    colours and text stay flat); an image the palette would not shrink is left as it is.
    Returns the bytes saved (of the base64 text).
    """
    from PIL import Image

    saved = 0
    for output in (o for c in cells for o in c.get("outputs", [])):
        data = output.get("data") or {}
        png = data.get("image/png")
        if not isinstance(png, str):
            continue
        with Image.open(io.BytesIO(base64.b64decode(png))) as image:
            if image.mode == "P":
                continue
            rgba = image.convert("RGBA")
        if rgba.getchannel("A").getextrema() == (255, 255):  # opaque: the better RGB palette
            small = rgba.convert("RGB").quantize(colours, dither=Image.Dither.NONE)
        else:
            small = rgba.quantize(colours, Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
        buffer = io.BytesIO()
        small.save(buffer, format="PNG", optimize=True)
        text = base64.b64encode(buffer.getvalue()).decode("ascii")
        if len(text) < len(png):
            saved += len(png) - len(text)
            data["image/png"] = text
    return saved


def _retitle(cells: list[Any], title: str) -> None:
    """Replace the first level-1 heading of the page with `title`."""
    for cell in cells:
        if _level(cell) == 1:
            lines = cell.source.lstrip().splitlines()
            cell.source = "\n".join([f"# {title}", *lines[1:]])
            return


@functools.cache
def _itables_offline() -> tuple[str, str, str, str, str]:
    """Return itables' offline init HTML, its version variable, ready event, JS and CSS."""
    from itables import javascript, options

    bundle = Path(options.dt_bundle)
    init = javascript.generate_init_offline_itables_html(bundle)
    version = re.search(r"window\.(_itables_\w+)", init)
    if version is None:
        raise RuntimeError("itables' offline init no longer names its version variable")
    event = re.search(r'new Event\("([^"]+)"\)', init)
    if event is None:
        raise RuntimeError("itables' offline init no longer names its ready event")
    css = bundle.with_suffix(".css").read_text(encoding="utf-8")
    return init, version.group(1), event.group(1), bundle.read_text(encoding="utf-8"), css


def _write_shared(js: str, css: str) -> tuple[Path, Path]:
    """Write itables' bundle once into `reports/_shared/` (named by content); return both."""
    digest = hashlib.sha256((js + css).encode("utf-8")).hexdigest()[:12]
    folder = paths.reports() / SHARED
    script = folder / f"itables-{digest}.js"
    sheet = folder / f"itables-{digest}.css"
    if not script.exists():  # a classic script (file:// refuses ES module scripts)
        tables.write_text(script, f"window.__jlItablesSource = {json.dumps(js)};\n")
    if not sheet.exists():
        tables.write_text(sheet, css)
    return script, sheet


_LOADER = """<link rel="stylesheet" href="{css}">
<script src="{js}"></script>
<script>
if (!window.{var}) {{
  if (window.__jlItablesSource) {{
    var jlBlob = new Blob([window.__jlItablesSource], {{type: "application/javascript"}});
    window.{var} = import(URL.createObjectURL(jlBlob));
    window.{var}.then(function () {{ window.dispatchEvent(new Event("{event}")); }});
  }} else {{
    window.{var} = new Promise(function () {{}});  // the tables wait: no error, the note says why
    document.write("<p class='jl-missing'>Interactive tables need {js} beside this page.</p>");
  }}
}}
</script>"""


def share_itables(cells: list[Any], target: Path) -> bool:
    """Replace itables' embedded offline bundle with links to the shared copy.

    Returns True when a page embedded it (and the shared files were written).
    """
    outputs = [
        o
        for c in cells
        for o in c.get("outputs", [])
        if "injectModule(" in (o.get("data") or {}).get("text/html", "")
    ]
    if not outputs:
        return False
    init = _itables_offline()[0]
    loader = itables_loader(target)
    for output in outputs:
        if output["data"]["text/html"] == init:  # another itables build stays embedded
            output["data"]["text/html"] = loader
    return True


_STYLE_RUN = re.compile(r"(?:<style type=\"text/css\">.*?</style>\s*)+", re.S)


def share_styles(body: str, page: Path) -> str:
    """Move the page head's first run of style blocks to a shared sheet; link it instead.

    The run is nbconvert's template CSS (pygments, JupyterLab's theme, its print rules and
    ours), identical on every page: written once to `reports/_shared/` under its content
    hash, in the same order, so the cascade is unchanged. A page without one is returned as is.
    """
    head_end = body.find("</head>")
    match = _STYLE_RUN.search(body, 0, head_end if head_end >= 0 else len(body))
    if match is None:
        return body
    css = "\n".join(re.findall(r"<style type=\"text/css\">(.*?)</style>", match.group(0), re.S))
    digest = hashlib.sha256(css.encode("utf-8")).hexdigest()[:12]
    sheet = paths.reports() / SHARED / f"nbconvert-{digest}.css"
    if not sheet.exists():
        tables.write_text(sheet, css)
    href = Path(os.path.relpath(sheet, page.parent)).as_posix()
    link = f'<link rel="stylesheet" href="{href}">\n'
    return body[: match.start()] + link + body[match.end() :]


def itables_loader(page: Path) -> str:
    """Return the HTML that loads itables' shared bundle into `page` (writing it once)."""
    _, var, event, js, css = _itables_offline()
    script, sheet = _write_shared(js, css)

    def rel(p: Path) -> str:
        return Path(os.path.relpath(p, page.parent)).as_posix()

    return _LOADER.format(js=rel(script), css=rel(sheet), var=var, event=event)


__all__ = [
    "NOT_APPLICABLE",
    "SHARED",
    "TITLE_FILE",
    "collapse_inapplicable",
    "compact_images",
    "declared_title",
    "export_report",
    "html_exporter",
    "share_styles",
    "itables_loader",
    "share_itables",
]
