"""The `judgelab` command line: `main` (run, reproduce, index, data, judge, card).

Sub-commands live in `data`, `judge` and `card`; each imports the library lazily, so
`judgelab --help` starts without loading pandas or papermill.
"""

__all__ = ["card", "compare", "data", "judge", "main"]
