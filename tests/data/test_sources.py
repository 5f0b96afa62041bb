"""The source registry: parsing, validation errors, URLs."""

from __future__ import annotations

import pytest

from judgelab.data import sources

GOOD = """name: demo
kind: corpus
title: "Demo"
licence: MIT
homepage: https://example.org
origin: {type: github, repo: o/r, revision: abc123, prefix: "Dataset/"}
mirror_dir: demo
importer: "judgelab.data.importers.seeds:import_bffbench"
files:
  - {path: a b/x.json, sha256: null, size: 10}
  - {path: y.json, origin_path: "results/m/y.json", size: 5}
"""


def _write(tmp_path, text, name="demo.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_packaged_registry_loads_and_has_the_seed_sources():
    reg = sources.load_registry()
    for name in (
        "contextualjudgebench",
        "faitheval_unanswerable",
        "contexteval",
        "bffbench",
        "verdicts",
        "cmtbench",
    ):
        assert reg[name].kind == "benchmark", name


def test_parse_and_urls(tmp_path):
    src = sources.parse_source(_write(tmp_path, GOOD))
    assert src.size == 15  # 10 + 5
    assert sources.file_url(src, src.files[0]) == (
        "https://raw.githubusercontent.com/o/r/abc123/Dataset/a%20b/x.json"
    )
    assert sources.file_url(src, src.files[1]).endswith("/abc123/Dataset/results/m/y.json")
    hf = src.__class__(
        **{
            **src.__dict__,
            "origin": {"type": "huggingface", "repo": "S/C", "revision": "main", "prefix": ""},
        }
    )
    assert sources.file_url(hf, hf.files[1]) == (
        "https://huggingface.co/datasets/S/C/resolve/main/results/m/y.json"
    )


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (lambda t: t + "colour: red\n", r"demo\.yaml: key 'colour': unknown key"),
        (lambda t: t.replace("licence: MIT\n", ""), r"key 'licence': missing"),
        (
            lambda t: t.replace('"judgelab.data.importers.seeds:import_bffbench"', "nocolon"),
            r"key 'importer': must be 'package\.module:function'",
        ),
        (
            lambda t: t.replace("kind: corpus", "kind: dataset"),
            r"key 'kind': kind must be one of .*, got 'dataset'",
        ),
        (lambda t: t.replace("size: 10", "size: -1"), r"key 'files\[0\]\.size'"),
        (lambda t: t.replace("path: y.json", "path: ../y.json"), r"key 'files\[1\]\.path'"),
        (lambda t: t.replace("sha256: null", "sha256: abc"), r"files\[0\]\.sha256"),
        (lambda t: t.replace("name: demo", "name: other"), r"must equal the file stem"),
        (
            lambda t: t.replace("{path: a b/x.json", "{path: 'a b/*.json'"),
            r"files\[0\]\.path': glob 'a b/\*\.json' needs a huggingface origin",
        ),
    ],
)
def test_validation_errors_name_file_and_key(tmp_path, edit, pattern):
    with pytest.raises(sources.RegistryError, match=pattern):
        sources.parse_source(_write(tmp_path, edit(GOOD)))


def test_unknown_name_lists_known_and_extra_dirs(tmp_path):
    _write(tmp_path, GOOD)
    assert sources.get_source("demo", extra_dirs=[tmp_path]).origin["prefix"] == "Dataset/"
    with pytest.raises(sources.UnknownSourceError, match=r"unknown source 'nope'; known.*demo"):
        sources.get_source("nope", extra_dirs=[tmp_path])


def test_duplicate_name_across_dirs_is_an_error(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _write(tmp_path / "a", GOOD)
    _write(tmp_path / "b", GOOD)
    with pytest.raises(sources.RegistryError, match="already defined"):
        sources.load_registry(extra_dirs=[tmp_path / "a", tmp_path / "b"])


def test_globs_are_hugging_face_only_and_have_no_origin_path(tmp_path):
    hf = GOOD.replace("type: github", "type: huggingface").replace(
        "{path: a b/x.json", "{path: d/*.json"
    )
    src = sources.parse_source(_write(tmp_path, hf))
    assert [f.is_pattern for f in src.files] == [True, False]
    with_origin_path = hf.replace("{path: y.json", "{path: 'y?.json'")
    with pytest.raises(sources.RegistryError, match=r"files\[1\]\.path.*no origin_path"):
        sources.parse_source(_write(tmp_path, with_origin_path))
