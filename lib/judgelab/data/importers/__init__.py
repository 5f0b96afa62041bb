"""Importers: turn each source's files into the `items` + `judgments` tables.

Every importer has the signature `fn(root: Path, source: Source) -> Imported`, where `root`
is a folder holding the source's files at their registry-relative paths (a mirror or the
download cache). Bad input raises `SourceFormatError` naming the file, line/row and column.
"""

from judgelab.data.importers.base import Imported, SourceFormatError, summarize

__all__ = ["Imported", "SourceFormatError", "summarize"]
