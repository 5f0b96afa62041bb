"""Issue 34 item 3 on the real notebooks: results first, inapplicable sections as one line.

Each notebook runs offline on a sample chosen so that one section cannot apply (09: judges
with one sample each; 03: pairwise judges only, no pointwise scores; 01: a single judge), and
its exported HTML must keep that section's heading and the one "Not applicable here" line the
library's `*_reason` gives, and nothing else of it (the executed `.ipynb` keeps every cell).
01 and 02 lead with a result (the leaderboard, the position-A preference); their coverage
bookkeeping is the page's last section.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judgelab.reporting import pipeline

ROOT = Path(__file__).resolve().parents[2]

#: notebook -> (overrides, the section heading, text of the section that must be gone, reason)
CASES = {
    "09_juries_and_agreement": (
        {
            "source": "sample:contextualjudgebench",
            "judges": ["sample-judge-1-always-first", "sample-judge-2-prefers-longer"],
            "jury_size": 2,
            "n_boot": 50,
            "examples": 0,
        },
        "Self-consistency",
        "Distribution of hits over the draws",
        "every judge was run once per item (one sample)",
    ),
    "03_length_bias": (
        {
            "source": "sample:length_bias",
            "judges": ["illustrative-prefers-longer", "illustrative-mostly-right"],
            "n_boot": 50,
            "examples": 0,
        },
        "Pointwise scores vs response length",
        "For pointwise graders",
        "the judgments hold no pointwise scores",
    ),
    "01_judge_leaderboard": (
        {
            "source": "sample:contextualjudgebench",
            "judges": ["sample-judge-3-mostly-right"],
            "n_boot": 50,
        },
        "Judge against judge",
        "Difference in the chosen metric on the items both judges judged",
        "only one judge (sample-judge-3-mostly-right) is in the data",
    ),
}


def _section(page: str, heading: str) -> str:
    """Return the HTML from `heading`'s <h2> to the next <h2> (or the end of the page)."""
    start = page.index(f">{heading}")
    end = page.find("<h2", start)
    return page[start : end if end >= 0 else len(page)]


@pytest.mark.slow
@pytest.mark.parametrize("nb", sorted(CASES))
def test_i34_3_inapplicable_notebook_section_is_heading_and_one_line(
    nb: str, monkeypatch: pytest.MonkeyPatch
):
    overrides, heading, gone, reason = CASES[nb]
    monkeypatch.delenv("JUDGELAB_MIRROR", raising=False)
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    result = pipeline.run_notebook(nb, overrides=overrides, run="i34_sections")
    assert result.ok, result.error
    page = Path(result.html).read_text(encoding="utf-8")
    section = _section(page, heading)
    assert section.count("Not applicable here: ") == 1, section[:2000]
    assert reason in section
    assert gone not in page
    assert not re.search(r"<img|<table|jp-OutputArea-output.*saved ", section)
    assert gone in Path(result.ipynb).read_text(encoding="utf-8")  # the .ipynb keeps it


#: notebook -> (the section that must lead: a result, the result table's tell-tale column)
LEADS = {
    "01_judge_leaderboard": ("Leaderboard (Table 3 layout)", "mean_of_splits"),
    "02_positional_bias": ("Position-A preference", "pos_a_rate_decisive"),
}


def _headings(nb: str) -> list[tuple[str, str]]:
    """Return (level-2 heading, the code of its section) in page order."""
    cells = json.loads((ROOT / "notebooks" / f"{nb}.ipynb").read_text(encoding="utf-8"))["cells"]
    out: list[tuple[str, str]] = []
    for cell in cells:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and text.startswith("## "):
            out.append((text.splitlines()[0][3:], ""))
        elif cell["cell_type"] == "code" and out:
            out[-1] = (out[-1][0], out[-1][1] + text)
    return out


@pytest.mark.parametrize("nb", sorted(LEADS))
def test_i34_3_a_result_leads_and_coverage_comes_last(nb: str):
    sections = _headings(nb)
    assert sections[0][0] == LEADS[nb][0], [h for h, _ in sections]
    assert sections[-1][0] == "Coverage", [h for h, _ in sections]
    assert [h for h, code in sections if "pairwise.coverage(" in code] == ["Coverage"]


def test_i34_3_02_page_leads_with_the_preference_table(sample_run):
    result = sample_run("02_positional_bias")  # the session's run on the samples
    assert result.ok, result.error
    page = Path(result.html).read_text(encoding="utf-8")
    tables = [t.split("</script>")[0] for t in page.split('<table hidden="hidden" id="')[1:]]
    assert "pos_a_rate_decisive" in tables[0] and "n_items_table" not in tables[0]
    assert page.rindex("n_items_table") > page.rindex(">Coverage")
