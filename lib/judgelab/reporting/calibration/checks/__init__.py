"""The registered calibration checks: one module per analysis family, each with `CHECKS`."""

from __future__ import annotations

from importlib import import_module

from judgelab.reporting.calibration.harness import Check

#: Modules of this package that define `CHECKS` (a list of `Check`), in report order.
FAMILIES = (
    "pairwise",
    "length",
    "correctness",
    "reference",
    "juries",
    "contexteval",
    "faithfulness",
    "grounding",
    "design",
    "probes",
    "stability",
    "grounding_transport",
    "grounding_confidence",
    "certificate",
)


def all_checks(families: tuple[str, ...] | list[str] = FAMILIES) -> list[Check]:
    """Return every registered check of `families` (modules that do not exist yet are skipped)."""
    out: list[Check] = []
    for family in families:
        try:
            module = import_module(f"{__name__}.{family}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{family}":
                raise
            continue
        out.extend(module.CHECKS)
    names = [c.name for c in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"calibration checks registered twice: {dupes}")
    return out
