"""Issue 34, items 1 and 2: one declared finding per analysis, and honest data badges."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from judgelab.reporting import pipeline
from judgelab.testing.notebooks import write_notebook

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "sample:contextualjudgebench"
# A kappa table as notebook 09 saves it: every judge also paired with itself.
KAPPA = (
    'kappa = pd.DataFrame({"judge_1": ["A", "A", "B"], "judge_2": ["A", "B", "B"], '
    '"kappa": [1.0, 0.42, 1.0], "ci_low": [1.0, 0.30, 1.0], "ci_high": [1.0, 0.55, 1.0], '
    '"n": [50, 50, 50], "n_clusters": [25, 25, 25]})\n'
    'out.table(kappa, "cohen_kappa")\n'
)
HEAD = (
    "import pandas as pd\nfrom judgelab.data import catalog\n"
    "from judgelab.reporting import findings, notebook\n"
)


@pytest.fixture()
def project(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "proj"
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    monkeypatch.setenv("JUDGELAB_SAMPLES", str(ROOT / "data" / "samples"))
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    return root


def _notebook(root: Path, name: str, body: str) -> None:
    write_notebook(
        root / "notebooks" / f"{name}.ipynb",
        'run: str = "default"  # run name',
        [HEAD + f'out = notebook.outputs("{name}", run)\n' + body],
    )


def test_i34_1_landing_shows_only_declared_findings(project: Path):
    """Before: 09's 'highest kappa' was a judge against itself, guessed from its table."""
    _notebook(project, "90_kappa", KAPPA)  # a table, no finding declared
    _notebook(
        project,
        "91_declared",
        KAPPA + 'out.finding(findings.from_table(kappa, measure="Cohen kappa", value="kappa",'
        ' subject=("judge_1", "judge_2"), source="llmbar"))\n',
    )
    assert pipeline.run_notebook("90_kappa").ok
    assert pipeline.run_notebook("91_declared").ok
    index = pipeline.write_index().read_text(encoding="utf-8")
    assert "1.000 [1.000, 1.000]" not in index
    assert "no finding declared" in index  # 90 declared none: nothing is guessed
    assert "<b>Cohen kappa: A vs B: 0.420 [0.300, 0.550], n = 50, 25 clusters</b>" in index


def test_i34_1_finding_needs_a_measure_name_and_never_pairs_a_judge_with_itself():
    from judgelab.reporting import findings

    kappa = pd.DataFrame(
        {"judge_1": ["A", "A"], "judge_2": ["A", "B"], "kappa": [1.0, 0.4], "n": [9, 9]}
    )
    found = findings.from_table(
        kappa, measure="Cohen kappa", value="kappa", subject=("judge_1", "judge_2"), source="x"
    )
    assert (found.subject, found.estimate, found.n) == ("A vs B", 0.4, 9)
    with pytest.raises(findings.FindingError, match="name the measure"):
        findings.Finding(measure="value", subject="A", estimate=0.5)
    with pytest.raises(findings.FindingError, match="no row"):
        findings.from_table(
            kappa[:1], measure="Cohen kappa", value="kappa", subject=("judge_1", "judge_2"),
            source="x",
        )  # fmt: skip


def test_i34_1_illustrative_finding_is_never_a_headline(project: Path):
    _notebook(
        project,
        "92_sample",
        'out.finding(measure="accuracy", subject="J", estimate=0.9, ci_low=0.8, ci_high=0.95,'
        f' n=20, source="{SAMPLE}", illustrative=True)\n',
    )
    result = pipeline.run_notebook("92_sample")
    assert result.ok, result.error
    card = pipeline.write_index().read_text(encoding="utf-8")
    assert "<b>accuracy: J" not in card
    assert f"Illustrative sample only, not a result ({SAMPLE}): accuracy: J: 0.900" in card
    body = Path(result.html).read_text(encoding="utf-8").split("<body", 1)[1]
    assert body.index('class="jl-header"') < 200  # the report opens with its finding
    assert "Illustrative sample only" in body[:1000]


def _declares(nb: Path) -> int:
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return code.count("out.finding(")


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_i34_1_every_notebook_declares_one_finding(nb: Path):
    assert _declares(nb) == 1, f"{nb.stem}: declare exactly one `out.finding(...)`"


def test_i34_2_fallback_sample_is_badged_and_recorded_with_hashes(project: Path):
    """Before: the run recorded the source it tried and the index said '2 runs, 0 failed'."""
    _notebook(
        project,
        "93_fallback",
        f'loaded = catalog.load_source("llmbar", fallback="{SAMPLE}")\n'
        "notebook.show_source(loaded)\n",
    )
    _notebook(project, "94_real", "x = 1\n")
    result = pipeline.run_notebook("93_fallback", overrides=None)
    assert result.ok, result.error
    assert pipeline.run_notebook("94_real").ok
    (entry,) = result.provenance["data"]
    assert (entry["source"], entry["requested"], entry["sample"]) == (SAMPLE, "llmbar", True)
    files = {f["path"]: f["sha256"] for f in entry["files"]}
    assert "$JUDGELAB_SAMPLES/contextualjudgebench/items.jsonl" in files
    assert all(len(sha) == 64 for sha in files.values()) and len(files) == 2
    assert all(not p.startswith("/") for p in files)
    index = pipeline.write_index().read_text(encoding="utf-8")
    assert "2 runs, 0 failed, 1 with sample sections" in index
    assert index.count('class="jl-sample-badge"') == 2  # its analysis card and its run row
    page = Path(result.html).read_text(encoding="utf-8")
    assert page.index("jl-sample-badge") < page.index("judgelab-banner")  # at the very top


def test_i34_2_report_card_records_every_source_it_read(project: Path):
    """Before: every notebook-14 run recorded `"data": []` (its judge keys name no source)."""
    from judgelab.reporting import card, notebook, provenance

    out = notebook.outputs("14_judge_report_card", "one")
    fallbacks = {"llmbar": SAMPLE, "faithbench": "sample:length_bias"}
    keys = ["llmbar:GPT-4.Vanilla", "faithbench:gpt-4o"]
    card.show_banners(card.load_sources(keys, fallbacks=fallbacks))
    data = provenance.data_read(out.folder)
    assert [(d["source"], d["requested"], d["sample"]) for d in data] == [
        (SAMPLE, "llmbar", True),
        ("sample:length_bias", "faithbench", True),
    ]
    assert all(len(f["sha256"]) == 64 for d in data for f in d["files"])
    assert all(len(d["files"]) >= 1 for d in data)


def test_i34_2_banner_names_no_absolute_path(tmp_path: Path, monkeypatch):
    """Before: 08's banner printed the machine's mirror path in its fallback reason."""
    from judgelab.reporting import notebook

    monkeypatch.setenv("JUDGELAB_MIRROR", str(tmp_path / "mirror"))
    reason = (
        f"real source 'x' unavailable: FetchError: missing from the mirror ({tmp_path}/mirror/x)"
    )
    html = notebook.banner_html(SAMPLE, reason=reason)
    assert str(tmp_path) not in html
    assert "$JUDGELAB_MIRROR/x" in html


def test_i34_2_warnings_in_a_run_name_the_module_not_the_machine_path():
    from judgelab.reporting import notebook

    text = notebook.short_warning(
        "Precision loss", RuntimeWarning,
        "/home/someone/proj/.venv/lib/python3.11/site-packages/scipy/stats/_axis.py", 592,
    )  # fmt: skip
    assert text == "RuntimeWarning: Precision loss (scipy/stats/_axis.py:592)\n"
    assert "/home" not in notebook.short_warning("x", UserWarning, "/home/a/b/c.py", 3)


def test_i34_1_a_calibration_smoke_run_is_never_a_headline():
    from judgelab.reporting import calibration, findings

    chosen = [c for c in calibration.checks.all_checks() if c.name == "pairwise.ca"]
    smoke, label = calibration.view.obtain(chosen, use_saved=False, reps=2)
    source = calibration.view.finding_source(smoke, label)
    assert source.is_sample and label.startswith("SMOKE")
    found = findings.from_table(
        smoke.summary, measure="coverage", value="coverage_null", low="coverage_null_low",
        high="coverage_null_high", subject="check", n="reps", source=source,
    )  # fmt: skip
    assert found.illustrative
    assert "Illustrative sample only, not a result" in findings.summary_html(found)
