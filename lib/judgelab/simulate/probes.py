"""Planted-truth probe benchmarks: a judge with a known susceptibility to every probe.

`probe_benchmark(rng, design, params)` draws what `judgelab probe` + `judgelab judge` would
produce: per original pairwise item (in the clusters of `design`, realised once per draw:
unequal sizes when `design.size_spread` > 0) its control (probe `none`) and, per probe, both
arms (`pos`: the probe is applied to the better response, `neg`: to the worse), each judged
in both orders. The provenance sits in `meta` under the keys `analyses.probes.variants`
writes (`PROVENANCE`; a test checks they agree).

The latent model, per judge, original item i in cluster c and order o (s_0 = +1: the
better response is shown first, s_1 = −1):

- η_i = `accuracy` + u_c + v_i (u_c ~ N(0, σ_c²) from `design.icc`, v_i ~ N(0, `item_sd`²));
  x_io = η_i + δ_c·s_o with δ_c = `delta` + N(0, `design.effect_sd`²), the position bias
  varying by cluster;
- control: P(picks pos) = σ(x);
- variant of probe p aimed at the response of sign a (+1 better, −1 worse):
  q = σ(x + a·β_p), P(picks pos) = q + a·γ_pc·q(1 − q) (β_p = `susceptibility[p]`, the logit
  pull toward the probed response; γ_pc ~ N(0, `design.effect_sd`²) clipped to [−1, 1]: the
  probe pulls harder in some sources than in others — a random slope on the probability
  scale, symmetric around 0, so a null probe (β 0) has pull and accuracy changes exactly 0
  in the population);
- verdicts are drawn independently given (η, δ, γ); each is invalid with probability
  σ(logit r + `invalid_length`·z_i): r is `invalid_rate`, or `invalid_if_wrong` when the
  verdict picks the worse response (missing not at random), z_i ~ N(0, 1) a latent
  standardised log length of the item's pair (long pairs fail more often).

Truths (`population`, per probe `<metric>:<probe>`) are ratios of expectations over the
*valid* pairs, as the estimators count them: `pull` (flips toward − away), `flip_toward`,
`flip_away`, `robustness` (no ties: unchanged unless it flips), `acc_change_worse` /
`acc_change_better` (variant − control accuracy in the arm favouring the worse / better
response), over both orders and (for the flip metrics) both arms, from the closed-form
verdict and validity probabilities averaged over a fixed-seed draw of (η, δ, γ, z).
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

#: The probe of control rows and the provenance keys, as `analyses.probes.variants` has them
#: (this layer cannot import analyses; a test holds the two equal).
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
    invalid_if_wrong: float | None = None  # MNAR: invalid rate when the verdict is wrong
    invalid_length: float = 0.0  # MNAR: logit slope of invalidity per SD of pair length

    def __post_init__(self) -> None:
        if not self.susceptibility:
            raise ValueError("susceptibility needs at least one probe")
        if CONTROL in self.susceptibility:
            raise ValueError(f"{CONTROL!r} is the control, not a probe")
        wrong = self.invalid_if_wrong
        bad_rate = not 0.0 <= self.invalid_rate < 1.0 or (wrong is not None and not 0 <= wrong < 1)
        if bad_rate or self.item_sd < 0:
            raise ValueError(f"bad invalid_rate/invalid_if_wrong/item_sd in {self}")
        object.__setattr__(self, "susceptibility", dict(self.susceptibility))

    def key(self) -> tuple:
        """A hashable key of the parameters (for the cached population truths)."""
        return (
            tuple(sorted(self.susceptibility.items())),
            self.accuracy,
            self.delta,
            self.item_sd,
            self.invalid_rate,
            self.invalid_if_wrong,
            self.invalid_length,
        )


def _logit(p: float) -> float:
    if p <= 0:
        return -np.inf
    return float(np.log(p / (1.0 - p)))


def invalid_prob(params: ProbeParams, picks_pos: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Return P(invalid) of a verdict: by whether it picks the better response, and length z."""
    right = _logit(params.invalid_rate)
    wrong = right if params.invalid_if_wrong is None else _logit(params.invalid_if_wrong)
    base_logit = np.where(np.asarray(picks_pos, dtype=bool), right, wrong)
    return base.sigmoid(base_logit + params.invalid_length * np.asarray(z, dtype=float))


def variant_pos(x: np.ndarray, beta: float, sign: float, gamma: np.ndarray) -> np.ndarray:
    """Return P(variant picks pos) when the probe (pull β, cluster slope γ) aims at `sign`."""
    q = base.sigmoid(x + sign * beta)
    return q + sign * gamma * q * (1.0 - q)


def _truth_of(
    eta: np.ndarray,
    delta: np.ndarray,
    gamma: np.ndarray,
    z: np.ndarray,
    beta: float,
    params: ProbeParams,
) -> dict[str, float]:
    """Probe metrics from closed-form verdict and validity probabilities (ratios of means)."""
    ok_pos = 1.0 - invalid_prob(params, np.ones(len(z), dtype=bool), z)
    ok_neg = 1.0 - invalid_prob(params, np.zeros(len(z), dtype=bool), z)
    tot = dict.fromkeys(("valid", "same", "toward", "away"), 0.0)
    acc = {a: dict.fromkeys(("valid", "v", "c"), 0.0) for a in (1.0, -1.0)}
    for s in SIGNS:
        x = eta + s * delta
        pc = base.sigmoid(x)
        c_pos, c_neg = pc * ok_pos, (1.0 - pc) * ok_neg
        for a in (1.0, -1.0):  # the probed response: +1 the better one (arm pos), −1 worse
            pv = variant_pos(x, beta, a, gamma)
            v_pos, v_neg = pv * ok_pos, (1.0 - pv) * ok_neg
            c_t, c_o = (c_pos, c_neg) if a > 0 else (c_neg, c_pos)
            v_t, v_o = (v_pos, v_neg) if a > 0 else (v_neg, v_pos)
            valid = (c_t + c_o) * (v_t + v_o)
            tot["valid"] += float(np.mean(valid))
            tot["same"] += float(np.mean(c_t * v_t + c_o * v_o))
            tot["toward"] += float(np.mean(c_o * v_t))
            tot["away"] += float(np.mean(c_t * v_o))
            acc[a]["valid"] += float(np.mean(valid))
            acc[a]["v"] += float(np.mean((c_t + c_o) * v_pos))
            acc[a]["c"] += float(np.mean(c_pos * (v_t + v_o)))
    return {
        "robustness": tot["same"] / tot["valid"],
        "flip_toward": tot["toward"] / tot["valid"],
        "flip_away": tot["away"] / tot["valid"],
        "pull": (tot["toward"] - tot["away"]) / tot["valid"],
        "acc_change_worse": (acc[-1.0]["v"] - acc[-1.0]["c"]) / acc[-1.0]["valid"],
        "acc_change_better": (acc[1.0]["v"] - acc[1.0]["c"]) / acc[1.0]["valid"],
    }


@lru_cache(maxsize=256)
def _population(key: tuple, icc: float, effect_sd: float, n: int) -> dict[str, float]:
    sus, accuracy, delta, item_sd, rate, rate_wrong, length = key
    params = ProbeParams(
        susceptibility=dict(sus) or {"_": 0.0},
        accuracy=accuracy,
        delta=delta,
        item_sd=item_sd,
        invalid_rate=rate,
        invalid_if_wrong=rate_wrong,
        invalid_length=length,
    )
    rng = np.random.default_rng(12345)
    half = n // 2
    z_eta, z_delta = rng.standard_normal(half), rng.standard_normal(half)
    z_gamma, z_len = rng.standard_normal(half), rng.standard_normal(half)
    sd = float(np.sqrt(base.cluster_sd(icc) ** 2 + item_sd**2))
    # γ antithetic (everything else repeated): a null probe's effects cancel exactly
    eta = accuracy + sd * np.tile(z_eta, 2)
    d = delta + effect_sd * np.tile(z_delta, 2)
    g = np.clip(effect_sd * np.concatenate([z_gamma, -z_gamma]), -1.0, 1.0)
    zl = np.tile(z_len, 2)
    truth: dict[str, float] = {}
    for probe, beta in sus:
        truth.update(
            {f"{k}:{probe}": v for k, v in _truth_of(eta, d, g, zl, beta, params).items()}
        )
    return truth


def population(
    params: ProbeParams, icc: float, effect_sd: float = 0.0, n: int = 400_000
) -> dict[str, float]:
    """Return the population truths `<metric>:<probe>` of `params` (ICC, slopes' SD)."""
    return dict(_population(params.key(), icc, effect_sd, n))


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
    design = design.realise(rng)
    rows = _rows(design, params)
    sd = base.cluster_sd(design.icc)
    cluster = base.cluster_index(design)
    eta = params.accuracy + rng.normal(0.0, sd, design.n_clusters)[cluster]
    if params.item_sd > 0:
        eta = eta + rng.normal(0.0, params.item_sd, design.n_items)
    delta = base.cluster_slopes(rng, design, params.delta)
    z_len = rng.standard_normal(design.n_items)
    probes_ = list(params.susceptibility)
    gamma = {p: np.clip(base.cluster_slopes(rng, design, 0.0), -1.0, 1.0) for p in probes_}
    orig = rows["orig"].to_numpy()
    probe_of = rows["probe"].to_numpy()
    beta = np.array([params.susceptibility.get(p, 0.0) for p in probe_of])
    aim = np.where(rows["probe_target"].to_numpy() == "neg", -1.0, 1.0)
    slope = np.zeros(len(rows))
    for p in probes_:
        sel = probe_of == p
        slope[sel] = gamma[p][orig[sel]]
    is_variant = probe_of != CONTROL
    parts = []
    for order, s in enumerate(SIGNS):
        x = eta[orig] + s * delta[orig]
        p_pos = np.where(is_variant, variant_pos(x, beta, aim, slope), base.sigmoid(x))
        pos = rng.random(len(rows)) < p_pos
        bad = rng.random(len(rows)) < invalid_prob(params, pos, z_len[orig])
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
        truth=population(params, design.icc, design.effect_sd),
        params={"design": design, "probes": params},
    )
