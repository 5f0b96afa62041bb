r"""The one YAML loader: `yaml.safe_load` that refuses anchors and aliases.

A "billion laughs" file (500 bytes, nine levels of aliases to aliases) expands to billions of
nodes and exhausts memory or hangs `yaml.safe_load`. judgelab's files (params, judge specs,
column mappings, the source registry) never need anchors or aliases, so the loader refuses the
first one it meets, before anything is built, with an error naming the file and the line.

>>> load("a: 1\nb: [x, y]\n", source="ok.yaml")
{'a': 1, 'b': ['x', 'y']}
>>> try:
...     load("a: 1\nb: &x [1]\nc: *x\n", source="bomb.yaml")
... except YamlError as exc:
...     print(str(exc)[:48])
bomb.yaml, line 2: YAML anchors and aliases (&na
"""

from __future__ import annotations

from typing import Any

import yaml

from judgelab.errors import YamlError as YamlError

_REFUSED = (
    "YAML anchors and aliases (&name, *name) are not allowed in judgelab files "
    "(they can expand without bound); write the values out"
)


class _NoAliasLoader(yaml.SafeLoader):
    """`SafeLoader` whose composer refuses an anchor or an alias before building anything."""

    source = "<yaml>"

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            line = event.start_mark.line + 1 if event.start_mark is not None else None
            raise YamlError(self.source, _REFUSED, line)
        return super().compose_node(parent, index)


def load(text: str, *, source: str = "<yaml>") -> Any:
    """Parse one YAML document like `yaml.safe_load`, refusing anchors and aliases.

    Raises:
        YamlError: the text uses an anchor or an alias (names `source` and the line).
        yaml.YAMLError: the text is not valid YAML (as `yaml.safe_load` raises it).
    """
    loader = _NoAliasLoader(text)
    loader.source = str(source)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
