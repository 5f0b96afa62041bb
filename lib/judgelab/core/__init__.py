"""Core: the tables every wing speaks and the pure tools they share (no judges, no data files).

- `schema` — the `items` and `judgments` tables: columns, validation (`SchemaError` naming
  table, column, row and key), `require_columns`, and the one `meta` reader (`read_meta`,
  `meta_field`).
- `tables` — reading and writing tables (parquet, JSONL, UTF-8 text) atomically.
- `paths` — where data, caches, figures and reports live (each overridable: `JUDGELAB_*`).
- `stats` — intervals, bootstraps, agreement and model-fit helpers.
- `lengths` — text length in a named unit (words, chars, tiktoken).
- `text` — text measures: refusal detection, lexical grounding, token-F1, ROUGE-L,
  `SIMILARITY`.
- `side_by_side` — two methods' versions of one table and where their conclusions differ
  (`compare_methods`).
- `verdicts` — `Parsed` (what every verdict parser returns) and the parsing primitives the
  importers share with the judges (`ce_judgement`).

Import the module you need (`from judgelab.core import schema`); importing one does not
load the others (`stats` pulls in scipy).
"""

__all__ = ["lengths", "paths", "schema", "side_by_side", "stats", "tables", "text", "verdicts"]
