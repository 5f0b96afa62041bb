"""Wild-cluster-bootstrap fields of a `jury_table` row: jury − best member (`interval="wild"`).

The default reading, `simultaneous`, bounds min_j (jury − member_j) by Bonferroni-adjusted
intervals over the members (see `jury_tables`); `fixed` is the plain difference with the
full-sample best member.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.juries.jury_cells import Items, Options
from judgelab.core import estimates, wild


def wild_fields(
    items: Items, best: int, size: int, opts: Options, key: tuple, cache: dict
) -> dict:
    """Return the wild-cluster-bootstrap intervals and test of jury − best member.

    `simultaneous`: jury − member_j for every member at level 1 − α/m, combined into the
    interval of min_j (jury − member_j) and the p-value that inverts it (module docstring);
    `fixed`: the plain difference jury − the full-sample best member. The CAs' intervals are
    `core.estimates.ratio`; a member's is computed once per split (`cache`).
    """
    values = items.values
    jury = values[:, 0]
    unit = pd.factorize(items.labels, sort=True)[0]
    ones = np.ones(len(jury))
    members = key[5]

    def rng(*what: object) -> np.random.Generator:
        return estimates.seeded(opts.seed, "jury", *key, *what)

    def member_ca(j: int) -> estimates.Estimate:
        slot = (id(items.labels), members[j])
        if slot not in cache:
            cache[slot] = estimates.ratio(
                values[:, 1 + j],
                ones,
                unit,
                level=opts.level,
                rng=estimates.seeded(opts.seed, "member", *key[:5], members[j]),
            )
        return cache[slot]

    chosen = member_ca(best)
    ca = chosen
    if size > 1:
        ca = estimates.ratio(jury, ones, unit, level=opts.level, rng=rng("ca"))
    out = {
        "ca_low": ca.ci_low,
        "ca_high": ca.ci_high,
        "best_member_ca": chosen.value,
        "best_member_ca_low": chosen.ci_low,
        "best_member_ca_high": chosen.ci_high,
        "p_bound": False,
        "n_clusters": ca.n_clusters,  # clusters shared by splits count once
    }
    if size == 1:  # a judge alone: it is its own best member
        return out | {
            "diff_vs_best": 0.0,
            "diff_low": 0.0,
            "diff_high": 0.0,
            "p_value": np.nan,
            "n_boot_p": 0,
            "n_eff_clusters": ca.n_eff_clusters,
            "few_clusters": ca.few_clusters,
            "method": ca.method,
        }
    cols = range(values.shape[1] - 1) if opts.rule == "simultaneous" else [best]
    m = len(cols)
    diffs = [
        estimates.difference(
            np.concatenate([values[:, 1 + j], jury]),
            np.ones(2 * len(jury)),
            np.repeat([0, 1], len(jury)),
            np.concatenate([unit, unit]),
            null=0.0,
            level=1.0 - (1.0 - opts.level) / m,
            rng=rng("diff", j),
        )
        for j in cols
    ]
    value = np.array([d.value for d in diffs])
    p = np.array([d.p_value for d in diffs]) * m
    p_up = float(np.max(p)) if np.all(value > 0) else 1.0  # every member beaten
    p_down = float(np.min(p[value < 0])) if np.any(value < 0) else 1.0  # some member better
    first = min(diffs, key=lambda d: d.n_eff_clusters)
    method = first.method
    if m > 1:
        method = f"simultaneous over {m} members (Bonferroni), {method}"
    return out | {
        "diff_vs_best": float(value.min()),
        "diff_low": float(min(d.ci_low for d in diffs)),
        "diff_high": float(min(d.ci_high for d in diffs)),
        "p_value": min(1.0, p_up, p_down),
        "n_boot_p": wild.N_BOOT,
        "n_eff_clusters": first.n_eff_clusters,
        "few_clusters": any(d.few_clusters for d in diffs),
        "method": method,
    }
