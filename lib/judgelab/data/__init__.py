"""Data: the only wing that finds, fetches, reads and writes data files.

- `sources` — the source registry (`lib/judgelab/resources/sources/*.yaml`): where each
  public corpus comes from, its files, licence and importer.
- `fetch` — obtain a source's files (mirror or verified download) into the cache.
- `ingest` — import a source into the `items` + `judgments` tables on disk.
- `importers` — one importer per corpus format, plus the generic mapped-file importer.
- `catalog` — every loader: tables by name (`load_items`, `load_judgments`, `load_source`,
  `load_or_none`) and one module per analysis family; notebooks and the report card load
  through it, analyses never do.
- `targets` — the published numbers (paper and peer targets) and their comparison.

Import the module you need (`from judgelab.data import catalog`).
"""

__all__ = ["catalog", "fetch", "importers", "ingest", "sources", "targets"]
