"""Planted-truth probe benchmarks: a judge with a known susceptibility to every probe.

`probe_benchmark(rng, design, params)` draws what `judgelab probe` + `judgelab judge` would
produce: per original pairwise item (clustered as `design` says) its control (probe
`none`) and, per probe, both arms (`pos`: the probe is applied to the better response,
`neg`: to the worse), each judged in both orders. The provenance sits in `meta` under the
keys `analyses.probes.generate` writes (`PROVENANCE`; a test checks they agree).

The latent model, per judge, original item i in cluster c and order o (s_0 = +1: the
better response is shown first, s_1 = −1):

- η_i = `accuracy` + u_c + v_i (u_c ~ N(0, σ_c²) from `design.icc`, v_i ~ N(0, `item_sd`²));
- control: P(picks pos) = σ(η_i + δ·s_o) (δ = `delta`, position bias);
- variant of probe p aimed at the better response: σ(η_i + δ·s_o + β_p); aimed at the
  worse one: σ(η_i + δ·s_o − β_p) (β_p = `susceptibility[p]`, logit pull toward the probed
  response; 0: the probe does nothing);
- verdicts are drawn independently given η (control and variants share η_i), and are
  invalid at random with probability `invalid_rate`.

Truths (`population`, per probe `<metric>:<probe>`): `pull` = E[P(variant picks the probed
response) − P(control does)], `flip_toward`, `flip_away`, `robustness` (no ties, so the
verdict is unchanged unless it flips), `acc_change_worse` = E[σ(η + δs − β) − σ(η + δs)],
`acc_change_better` = E[σ(η + δs + β) − σ(η + δs)], all averaged over both orders and (for
the flip metrics) both arms, over a fixed-seed draw of η (`base.expectation`'s convention).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.core import schema
from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation

__all__ = ["CONTROL", "PROVENANCE", "ProbeParams", "population", "probe_benchmark"]

#: The probe of control rows and the provenance keys (as `analyses.probes.generate`).
CONTROL = "none"
PROVENANCE = (
    "probe",
    "probe_target",
    "probe_seed",
    "probe_noop",
    "orig_benchmark",
    "orig_item_id",
)
TARGETS = ("pos", "neg")
SIGNS = (1.0, -1.0)


@dataclass(frozen=True)
class ProbeParams:
    """What a simulated probe benchmark plants for its one judge."""

    susceptibility: Mapping[str, float] = field(
        default_factory=lambda: {"authority": 0.0, "verbosity": 1.0, "bandwagon": 0.5}
    )
    judge: str = "J1"
    accuracy: float = 1.0  # latent logit of choosing pos (mean over items)
    delta: float = 0.0  # position bias (logit), > 0 favours the response shown first
    item_sd: float = 0.5
    invalid_rate: float = 0.0

    def __post_init__(self) -> None:
        if not self.susceptibility:
            raise ValueError("susceptibility needs at least one probe")
        if CONTROL in self.susceptibility:
            raise ValueError(f"{CONTROL!r} is the control, not a probe")
        if not 0.0 <= self.invalid_rate < 1.0 or self.item_sd < 0:
            raise ValueError(f"bad invalid_rate/item_sd in {self}")
        object.__setattr__(self, "susceptibility", dict(self.susceptibility))

    def key(self) -> tuple:
        """A hashable key of the parameters (for the cached population truths)."""
        return (
            tuple(sorted(self.susceptibility.items())),
            self.accuracy,
            self.delta,
            self.item_sd,
        )


def _truth_of(eta: np.ndarray, delta: float, beta: float) -> dict[str, float]:
    """Closed-form probe metrics given η (averaged over orders, arms and η)."""
    sums = dict.fromkeys(
        ("toward", "away", "same", "pull", "acc_change_worse", "acc_change_better"), 0.0
    )
    for s in SIGNS:
        base_p = base.sigmoid(eta + s * delta)
        up, down = base.sigmoid(eta + s * delta + beta), base.sigmoid(eta + s * delta - beta)
        sums["acc_change_worse"] += float(np.mean(down - base_p)) / 2
        sums["acc_change_better"] += float(np.mean(up - base_p)) / 2
        # arm pos: the probed response is pos; arm neg: it is neg
        for pc, pv in ((base_p, up), (1.0 - base_p, 1.0 - down)):
            sums["toward"] += float(np.mean((1 - pc) * pv)) / 4
            sums["away"] += float(np.mean(pc * (1 - pv))) / 4
            sums["same"] += float(np.mean(pc * pv + (1 - pc) * (1 - pv))) / 4
    return {
        "robustness": sums["same"],
        "flip_toward": sums["toward"],
        "flip_away": sums["away"],
        "pull": sums["toward"] - sums["away"],
        "acc_change_worse": sums["acc_change_worse"],
        "acc_change_better": sums["acc_change_better"],
    }


@lru_cache(maxsize=256)
def _population(key: tuple, icc: float, n: int) -> dict[str, float]:
    sus, accuracy, delta, item_sd = key
    z = np.random.default_rng(12345).standard_normal(n)
    eta = accuracy + float(np.sqrt(base.cluster_sd(icc) ** 2 + item_sd**2)) * z
    truth: dict[str, float] = {}
    for probe, beta in sus:
        truth.update({f"{k}:{probe}": v for k, v in _truth_of(eta, delta, beta).items()})
    return truth


def population(params: ProbeParams, icc: float, n: int = 400_000) -> dict[str, float]:
    """Return the population truths `<metric>:<probe>` of `params` at latent ICC `icc`."""
    return dict(_population(params.key(), icc, n))


def _rows(design: Design, params: ProbeParams) -> pd.DataFrame:
    """One row per generated item: original index, probe, target (control first)."""
    probes = [(CONTROL, "")] + [(p, t) for p in params.susceptibility for t in TARGETS]
    ids, clusters = base.item_ids(design)
    n, k = len(ids), len(probes)
    orig = np.repeat(np.arange(n), k)
    probe = np.array([p for p, _ in probes] * n, dtype=object)
    target = np.array([t for _, t in probes] * n, dtype=object)
    item_id = [
        i if p == CONTROL else f"{i}~{p}~{t}"
        for i, p, t in zip(ids[orig], probe, target, strict=True)
    ]
    return pd.DataFrame(
        {
            "orig": orig,
            "orig_id": ids[orig],
            "probe": probe,
            "probe_target": target,
            "item_id": item_id,
            "cluster": [f"{design.benchmark}|meta|{c}" for c in clusters[orig]],
        }
    )


def _items(design: Design, rows: pd.DataFrame, validate: bool) -> pd.DataFrame:
    bench = f"{design.benchmark}+probes"
    meta = [
        json.dumps(
            {
                "probe": p,
                "probe_target": t,
                "probe_seed": 0,
                "probe_noop": False,
                "orig_benchmark": design.benchmark,
                "orig_item_id": o,
            },
            sort_keys=True,
        )
        for p, t, o in zip(rows["probe"], rows["probe_target"], rows["orig_id"], strict=True)
    ]
    df = pd.DataFrame(
        {
            "benchmark": bench,
            "split": design.split,
            "item_id": rows["item_id"],
            "task": "pairwise",
            "question": "Which response answers better?",
            "response_pos": "p p p",
            "response_neg": "n n n",
            "gold": "pos",
            "meta": meta,
            "cluster": rows["cluster"],
        }
    )
    for col in schema.ITEMS.columns:
        if col.required and col.name not in df.columns:
            df[col.name] = None
    df = df[[c for c in schema.ITEMS.names if c in df.columns]]
    if validate:
        schema.validate_items(df)
    return schema.coerce_items(df)


def probe_benchmark(
    rng: np.random.Generator,
    design: Design,
    params: ProbeParams | None = None,
    *,
    validate: bool = False,
) -> Simulation:
    """Draw a probe benchmark judged in both orders by one judge with planted susceptibilities.

    Returns:
        A `Simulation`: items (benchmark `<design.benchmark>+probes`, provenance in `meta`),
        judgments (both orders; `cluster` carried), the `population` truths and the params.
    """
    params = params or ProbeParams()
    rows = _rows(design, params)
    sd = base.cluster_sd(design.icc)
    eta = params.accuracy + rng.normal(0.0, sd, design.n_clusters)[base.cluster_index(design)]
    if params.item_sd > 0:
        eta = eta + rng.normal(0.0, params.item_sd, design.n_items)
    beta = np.array([params.susceptibility.get(p, 0.0) for p in rows["probe"]])
    shift = np.where(rows["probe_target"].to_numpy() == "neg", -beta, beta)
    logit = eta[rows["orig"].to_numpy()] + shift
    parts = []
    for order, s in enumerate(SIGNS):
        pos = rng.random(len(rows)) < base.sigmoid(logit + s * params.delta)
        bad = rng.random(len(rows)) < params.invalid_rate
        chosen = np.where(pos, "pos", "neg").astype(object)
        first_is_pos = order == 0
        verdict = np.where(pos == first_is_pos, "A", "B").astype(object)
        parts.append(
            pd.DataFrame(
                {
                    "benchmark": f"{design.benchmark}+probes",
                    "split": design.split,
                    "item_id": rows["item_id"],
                    "judge": params.judge,
                    "order": order,
                    "verdict": np.where(bad, None, verdict),
                    "chosen": np.where(bad, None, chosen),
                    "correct": np.where(bad, None, chosen == "pos"),
                    "valid": ~bad,
                    "cluster": rows["cluster"],
                }
            )
        )
    judgments = base.judgments_table(pd.concat(parts, ignore_index=True), validate=validate)
    return Simulation(
        items=_items(design, rows, validate),
        judgments=judgments,
        truth=population(params, design.icc),
        params={"design": design, "probes": params},
    )
