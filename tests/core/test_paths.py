from pathlib import Path

from judgelab.core import paths


def test_outputs_follow_judgelab_home(judgelab_home: Path):
    assert paths.home() == judgelab_home
    assert paths.data() == judgelab_home / "data"
    assert paths.judgments() == judgelab_home / "data" / "judgments"
    assert paths.items() == judgelab_home / "data" / "items"
    assert paths.benchmarks() == judgelab_home / "data" / "benchmarks"
    assert paths.cache() == judgelab_home / "data" / "cache"
    assert paths.figures() == judgelab_home / "figures"
    assert paths.reports() == judgelab_home / "reports"


def test_code_locations_stay_in_the_project(judgelab_home: Path):
    root = Path(__file__).resolve().parents[2]
    assert paths.project() == root
    assert paths.notebooks() == root / "notebooks"
    assert paths.params() == root / "params"
    assert paths.samples() == root / "data" / "samples"


def test_each_directory_has_its_own_override(monkeypatch, tmp_path: Path):
    for var, fn in [
        ("JUDGELAB_DATA", paths.data),
        ("JUDGELAB_CACHE", paths.cache),
        ("JUDGELAB_FIGURES", paths.figures),
        ("JUDGELAB_REPORTS", paths.reports),
        ("JUDGELAB_JUDGMENTS", paths.judgments),
        ("JUDGELAB_BENCHMARKS", paths.benchmarks),
        ("JUDGELAB_SAMPLES", paths.samples),
        ("JUDGELAB_ITEMS", paths.items),
    ]:
        monkeypatch.setenv(var, str(tmp_path / var))
        assert fn() == tmp_path / var


def test_mirror_unset_or_empty_is_none(monkeypatch):
    monkeypatch.delenv("JUDGELAB_MIRROR", raising=False)
    assert paths.mirror() is None
    monkeypatch.setenv("JUDGELAB_MIRROR", "")
    assert paths.mirror() is None
