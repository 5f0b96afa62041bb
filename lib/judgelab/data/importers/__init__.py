"""Importers: turn each source's files into the `items` + `judgments` tables.

Every importer has the signature `fn(root: Path, source: Source) -> Imported`, where `root`
is a folder holding the source's files at their registry-relative paths (a mirror or the
download cache). Bad input raises `SourceFormatError` naming the file, line/row and column.

- `base` — `Imported`, `SourceFormatError`, `summarize`.
- `common` — what the corpus importers share: reading files, verdict outcomes
  (`pairwise_outcome`, `pointwise_outcome`), number parsing (`number_or_none`,
  `format_score`), table assembly.
- `records`, `releases` — reading a data file into a frame; released tables whose column
  names vary.
- `mapping_spec`, `mapping` — the generic importer: a YAML mapping and its application.
- one module per corpus: `alpaca_eval`, `arena_bench`, `contexteval`,
  `contexteval_attributes`, `evalbiasbench`, `faithbench`, `llmbar`, `mtbench_fastchat`,
  `pandalm`, `position_bias_analyzer`, `prometheus`, `seeds` (the seed benchmarks),
  `umass_triviaqa`.
"""

from judgelab.data.importers.base import Imported, SourceFormatError, summarize

__all__ = ["Imported", "SourceFormatError", "summarize"]
