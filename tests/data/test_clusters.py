"""Dependence as an input: registry rules, the importer's `cluster` column, old tables."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from judgelab.core import clusters, paths, schema, tables
from judgelab.data import catalog, clustering, ingest, sources
from judgelab.data.importers.mapping import import_file

DOCSUM = """name: docsum
kind: corpus
title: "FaithBench-shaped: ten summaries of each source document"
licence: MIT
homepage: https://example.org
origin: {type: url, base: "http://127.0.0.1:9/"}
mirror_dir: docsum
importer: "judgelab.data.importers.mapping:import_mapped"
cluster: context
options:
  mapping:
    benchmark: docsum
    task: pointwise
    item_id: id
    context: doc
    response: summary
    gold: label
    judge: {column: judge}
    verdict: verdict
files:
  - {path: s.csv}
"""


def _stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, docs: int = 3) -> None:
    reg, mirror = tmp_path / "reg", tmp_path / "mirror"
    reg.mkdir()
    (mirror / "docsum").mkdir(parents=True)
    (reg / "docsum.yaml").write_text(DOCSUM)
    rows = ["id,doc,summary,label,judge,verdict"]
    for d in range(docs):
        for s in range(10):
            label = "Consistent" if (d + s) % 3 else "Hallucinated"
            rows.append(f"d{d}s{s},Document number {d} text,summary {s},{label},hhem,{label}")
    (mirror / "docsum" / "s.csv").write_text("\n".join(rows) + "\n")
    monkeypatch.setenv("JUDGELAB_SOURCES", str(reg))
    monkeypatch.setenv("JUDGELAB_MIRROR", str(mirror))


def test_every_packaged_source_declares_a_valid_rule():
    registry = sources.load_registry()
    for name, src in registry.items():
        text = Path(src.registry_file).read_text(encoding="utf-8")
        assert "\ncluster:" in text, f"{name} declares no cluster rule"
        for rule in src.cluster:
            assert clusters.check_rule(rule) == rule
    assert registry["faithbench"].cluster == ("context",)
    assert registry["mtbench_fastchat_fork"].cluster == ("meta.question_id",)
    assert registry["contexteval"].cluster == ("question",)


@pytest.mark.parametrize(
    ("value", "problem"),
    [("document", "unknown cluster rule 'document'"), ("[]", "must be a cluster rule")],
)
def test_unknown_rule_is_an_error_naming_file_and_field(tmp_path, value, problem):
    f = tmp_path / "docsum.yaml"
    f.write_text(DOCSUM.replace("cluster: context", f"cluster: {value}"))
    with pytest.raises(sources.RegistryError) as exc:
        sources.parse_source(f)
    assert str(f) in str(exc.value) and "key 'cluster'" in str(exc.value)
    assert problem in str(exc.value)


def test_a_source_without_cluster_means_item():
    f_text = DOCSUM.replace("cluster: context\n", "")
    assert "cluster" not in f_text.split("options")[0]
    assert clustering.parse_cluster(None) == ("item",)


def test_rule_list_takes_the_first_rule_with_a_value():
    it = pd.DataFrame(
        {
            "benchmark": "p",
            "split": ["mt", "mt", "hhh", "hhh", "hhh"],
            "item_id": list("12345"),
            "question": ["a", "b", "x", "x", ""],
            "meta": ['{"question_idx": 3}', '{"question_idx": 3}', "{}", "{}", "{}"],
        }
    )
    got = clustering.derive_all(it, ["meta.question_idx", "question"]).tolist()
    assert got == [
        "p|meta|3",
        "p|meta|3",
        "p|question|x",
        "p|question|x",
        "p|hhh|item|5",
    ]


def test_faithbench_shaped_import_has_ten_items_per_document(tmp_path, monkeypatch):
    _stage(tmp_path, monkeypatch, docs=3)
    loaded = catalog.load_source("docsum")
    sizes = loaded.items.groupby("cluster").size()
    assert len(sizes) == 3 and set(sizes) == {10}
    assert clustering.n_clusters(loaded.items) == 3
    # judgments carry their item's cluster in memory...
    j = loaded.judgments
    assert j["cluster"].nunique() == 3
    assert (
        j["cluster"]
        == j["item_id"].str[:2].map(lambda d: f"docsum|context|Document number {d[1]} text")
    ).all()
    # ...but never on disk, and the items table validates with it
    for f in ingest.imported_files("docsum"):
        cols = pq.read_schema(f).names
        assert ("cluster" in cols) == (f.parent == paths.items())
    schema.validate_items(loaded.items)
    schema.validate_judgments(catalog.strip_clusters(j))
    assert ingest.cluster_summary("docsum") == ("context", 3)
    assert ingest.recorded_rules("docsum") == ("context",)


def test_judgments_with_cluster_are_written_without_it(tmp_path, monkeypatch):
    _stage(tmp_path, monkeypatch, docs=1)
    loaded = catalog.load_source("docsum")
    assert "cluster" in loaded.judgments.columns
    copy = ingest.Imported(
        loaded.items.assign(benchmark="copy"), loaded.judgments.assign(benchmark="copy")
    )
    report = ingest.write_imported(copy, name="copy", origin="test")
    assert report.judgment_paths == [paths.judgments() / "copy" / "hhem.parquet"]
    assert "cluster" not in pq.read_schema(report.judgment_paths[0]).names
    assert "cluster" in pq.read_schema(report.items_paths[0]).names


def _make_old(name: str) -> Path:
    """Turn an import into one made before clusters existed (no column, no manifest entry)."""
    items_file = next(f for f in ingest.imported_files(name) if f.parent == paths.items())
    df = tables.read_items(items_file).drop(columns=["cluster"])
    tables.write_items(df, items_file)
    m = paths.items() / ".imports" / f"{name}.json"
    data = json.loads(m.read_text())
    del data[clustering.RULES_KEY]
    m.write_text(json.dumps(data))
    return items_file


def test_old_cached_tables_are_rederived_on_load_keeping_other_rows(tmp_path, monkeypatch):
    _stage(tmp_path, monkeypatch, docs=2)
    catalog.load_source("docsum")
    items_file = _make_old("docsum")
    # another writer's row in the same table (a judge run's own item) must survive as is
    df = tables.read_items(items_file)
    extra = df.iloc[[0]].assign(item_id="mine", context="Document number 0 text")
    tables.write_items(pd.concat([df, extra], ignore_index=True), items_file)
    assert ingest.recorded_rules("docsum") is None
    assert ingest.is_imported("docsum")  # the files are there: only the clusters are stale
    loaded = catalog.load_source("docsum")
    on_disk = tables.read_items(items_file)
    assert len(on_disk) == 21 and "cluster" in on_disk.columns
    mine = on_disk["item_id"] != "mine"
    assert on_disk.loc[mine, "cluster"].nunique() == 2
    assert on_disk.loc[~mine, "cluster"].isna().all()  # not ours: left as it was
    assert ingest.recorded_rules("docsum") == ("context",)
    assert loaded.judgments["cluster"].nunique() == 2


def test_load_items_of_an_old_table_rederives_it(tmp_path, monkeypatch):
    _stage(tmp_path, monkeypatch, docs=2)
    catalog.load_source("docsum")
    _make_old("docsum")
    assert catalog.load_items("docsum")["cluster"].nunique() == 2


def test_a_changed_rule_is_rederived(tmp_path, monkeypatch):
    _stage(tmp_path, monkeypatch, docs=2)
    catalog.load_source("docsum")
    reg = Path(sources.get_source("docsum").registry_file)
    reg.write_text(reg.read_text().replace("cluster: context", "cluster: item"))
    loaded = catalog.load_source("docsum")
    assert loaded.items["cluster"].nunique() == 20
    assert ingest.recorded_rules("docsum") == ("item",)


CSV = "id,doc,text,judge,verdict\n1,A,x,j,yes\n2,A,y,j,no\n3,,z,j,yes\n"
BASE = {
    "benchmark": "demo",
    "task": "pointwise",
    "item_id": "id",
    "response": "text",
    "judge": {"column": "judge"},
    "verdict": "verdict",
}


def test_file_import_cluster_option(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text(CSV)
    by_col = import_file(f, {**BASE, "cluster": {"column": "doc"}}).items
    assert by_col["cluster"].tolist() == [
        "demo|default|column|A",
        "demo|default|column|A",
        "demo|default|item|3",
    ]
    by_rule = import_file(f, {**BASE, "context": "doc", "cluster": "context"}).items
    assert by_rule["cluster"].nunique() == 2
    assert "cluster" not in import_file(f, BASE).items.columns  # the source's rule applies
    with pytest.raises(Exception, match="mapping key 'cluster'"):
        import_file(f, {**BASE, "cluster": "doc"})
    report = ingest.import_mapped_file(f, BASE)
    written = tables.read_items(report.items_paths[0])
    assert written["cluster"].nunique() == 3  # default: every item its own unit
