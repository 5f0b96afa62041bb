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


#: libyaml's scanner and parser when PyYAML has them (`make bench`, workload `listing`: the
#: 19-file source registry parses in 0.04 s instead of 0.3 s), else PyYAML's pure-Python ones.
#: Either way the values are built by PyYAML's `SafeConstructor`: the same values.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str, *, source: str = "<yaml>") -> Any:
    """Parse one YAML document like `yaml.safe_load`, refusing anchors and aliases.

    The events are read first (nothing is built from them) and the first anchor or alias is
    refused; only then is the document composed and constructed.

    Raises:
        YamlError: the text uses an anchor or an alias (names `source` and the line).
        yaml.YAMLError: the text is not valid YAML (as `yaml.safe_load` raises it).
    """
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            mark = getattr(event, "start_mark", None)
            raise YamlError(str(source), _REFUSED, mark.line + 1 if mark is not None else None)
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (C or Python)
