"""Planted-truth ContextEval benchmarks: pairwise verdicts with and without context, WEIRD ratings.

Both generators take a `Design` (`simulate.base`) and realise it once per draw: clusters of
unequal size (singletons next to a cluster holding a third to half of the items when
`size_spread` > 0), a latent intra-cluster correlation `icc`, and effects that vary by
cluster with SD `effect_sd`.

`pairwise` — queries grouped in conversations (the clusters), every query judged by
`n_judges` autoraters in two settings that judge the same responses: the baseline
NoCtxGen-NoCtxEval and NoCtxGen-CtxEval. Judge j's latent preference for candidate 1 on
query i of conversation g in setting s is

    z = q_g + u_g + v_i + c_{g,s} + context_effect·[s = context] + b_j + e,   e ~ logistic,

q_g the candidates' quality difference (mean `quality`, varying by conversation with SD
`effect_sd`), u_g a conversation effect (latent ICC `icc`), v_i a query effect shared by both
settings and all judges, c_{g,s} a conversation × setting effect (SD `effect_sd`: the context
effect context_effect + c_{g,1} − c_{g,0} varies by conversation), b_j fixed judge leanings
(a symmetric set). The vote is C1 when z > `tie_band`, C2 when z < −`tie_band`, else Tie.
An output is Invalid (a safety refusal) not at random: at `invalid[s]` times a
per-conversation propensity (log-normal, mean 1) times `close_factor` on close calls
(|z| ≤ `tie_band`); the analyses count Invalid as Tie (the repo). The nulls hold *exactly*
by symmetry, whatever the cluster variation: with `quality` 0 the model is symmetric under
z → −z (C1 ↔ C2), so the margin is 0; with `context_effect` 0 and equal `invalid` rates
the two settings are exchangeable, so the margin's and the agreement's changes are 0.

`ratings` — default-response relevance ratings (spec 002 §2.7) of the WEIRD-mapped
attributes: `design.n_items` queries in `design.n_clusters` clusters (e.g. one source or
topic), every query rated on every attribute value by `n_raters` raters on the 1–5 scale.
The latent rating of value v of query i in cluster g by rater r is

    3 + gap_a·[v WEIRD] + a_g + c_{g,v} + w_{i,v} + b_r + e,    e ~ N(0, NOISE_SD²),

a_g a cluster level and w_{i,v} a query × value effect (together icc / (1 − icc) times the
noise variance, half each: one query's raters and one cluster's queries hang together),
c_{g,v} a cluster × value effect with SD `effect_sd`·NOISE_SD (the WEIRD gap varies by
cluster), b_r fixed rater leanings; rounded and clipped to 1–5. Unparsed outputs (a whole
rating output: every value of one query, rater and attribute) occur at `missing` times a
per-cluster propensity (log-normal, mean 1). Under the null (gap 0) the values of an
attribute are exchangeable, so every rater's expected gap is exactly 0.

The truths (`pairwise_truth`, `gap_truth`, `rating_truth`) are computed in
`contexteval_truth`, from the planted parameters alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation
from judgelab.simulate.contexteval_truth import (
    ATTRIBUTES,
    JUDGE_BIAS,
    NOISE_SD,
    PROPENSITY_SD,
    RATER_BIAS,
    SETTINGS,
    _level_sds,
    gap_truth,
    pairwise_truth,
    rating_truth,
)

REPO_IDS = ("gen_wo_ctx_eval_wo_ctx", "gen_wo_ctx_eval_w_ctx")
PAIR = "cand-a_vs_cand-b"
#: Defaults: 40 conversations × 5 queries (ICC 0.3); 50 clusters × 4 queries × 5 raters.
PAIRWISE_DESIGN = Design(n_clusters=40, per_cluster=5, icc=0.3, benchmark="sim-ce")
RATINGS_DESIGN = Design(n_clusters=50, per_cluster=4, icc=0.3, benchmark="sim-weird")


def _votes(z: np.ndarray, tie_band: float) -> np.ndarray:
    """0 = C1, 1 = C2, 2 = Tie from latent preferences."""
    return np.where(z > tie_band, 0, np.where(z < -tie_band, 1, 2))


def _propensity(rng: np.random.Generator, n: int) -> np.ndarray:
    """Per-cluster multipliers of a rate: log-normal with mean 1."""
    return np.exp(PROPENSITY_SD * rng.standard_normal(n) - PROPENSITY_SD**2 / 2)


def _pairwise_draw(rng: np.random.Generator, design: Design, p: SimpleNamespace):
    """Return per setting (votes n × judges, invalid mask) for one realised design.

    Cluster-level effects are drawn per cluster of `design` (its realised sizes).
    """
    judges = np.asarray(JUDGE_BIAS)
    n, G = design.n_items, design.n_clusters
    cl = base.cluster_index(design)
    shared = (
        base.cluster_slopes(rng, design, p.quality)
        + base.cluster_effects(rng, design)
        + rng.normal(0.0, p.query_sd, size=n)
    )
    setting_fx = rng.normal(0.0, design.effect_sd, size=(2, G))
    prop = _propensity(rng, G)[cl]
    out = []
    for k in range(2):
        z = shared + setting_fx[k, cl] + (p.context_effect if k else 0.0)
        z = z[:, None] + judges[None, :] + rng.logistic(size=(n, len(judges)))
        votes = _votes(z, p.tie_band)
        close = np.abs(z) <= p.tie_band
        rate = p.invalid[k] * prop[:, None] * np.where(close, p.close_factor, 1.0)
        bad = rng.random(z.shape) < np.clip(rate, 0.0, 0.9)
        out.append((votes, bad))
    return out


def _majority_counts(votes: np.ndarray) -> np.ndarray:
    """Per query: one-hot (n × 3) of the majority label (all zero without a majority)."""
    counts = np.stack([(votes == k).sum(axis=1) for k in range(3)], axis=1)
    return (counts * 2 > votes.shape[1]).astype(float)


def _examples(votes: np.ndarray, bad: np.ndarray, setting: str, ids, clusters) -> pd.DataFrame:
    """Return the `example_table` rows of one setting's votes (judge order = column order)."""
    labels = np.array(["C1", "C2", "Tie"], dtype=object)
    v = np.where(bad, 2, votes)  # Invalid counts as Tie (the repo)
    n, k = v.shape
    counts = np.stack([(v == j).sum(axis=1) for j in range(3)], axis=1)
    first = np.stack(
        [np.where((v == j).any(axis=1), (v == j).argmax(axis=1), k) for j in range(3)], 1
    )
    top = counts.max(axis=1)
    tied = counts == top[:, None]
    best = np.where(tied, first, k + 1).argmin(axis=1)  # Counter.most_common: first seen
    share = top / k
    nt = counts[:, :2]
    excl = np.where(nt.sum(axis=1) > 0, nt.max(axis=1) / np.maximum(nt.sum(axis=1), 1), np.nan)
    label = labels[best]
    return pd.DataFrame(
        {
            "source": "autorater",
            "pair": PAIR,
            "setting": setting,
            "example_key": ids,
            "query": [f"query {i}" for i in ids],
            "n_judges": k,
            "n_c1": counts[:, 0],
            "n_c2": counts[:, 1],
            "n_tie": counts[:, 2],
            "plurality_label": label,
            "plurality_count": top,
            "plurality_share": share,
            "nontie": label != "Tie",
            "majority_label": pd.Series(np.where(share > 0.5, label, None), dtype=object),
            "share_excl_tie_votes": excl,
            "n_invalid": bad.sum(axis=1),
            "n_invalid_votes": bad.sum(axis=1),
            "cluster": clusters,
        }
    )


def _output(label: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Raw autorater outputs in the repo's format for candidate labels shown in `order`."""
    pos = np.where(
        label == 2, "Tie", np.where((label == 0) == (order == 0), "Response 1", "Response 2")
    )
    return np.array(
        [f'**output: {{"judgement": "{p}"}}** Justification: simulated.' for p in pos],
        dtype=object,
    )


def pairwise(
    rng: np.random.Generator,
    design: Design = PAIRWISE_DESIGN,
    *,
    quality: float = 0.0,
    context_effect: float = 0.0,
    tie_band: float = 0.8,
    query_sd: float = 0.7,
    invalid: tuple[float, float] = (0.02, 0.06),
    close_factor: float = 3.0,
    tables: bool = True,
) -> Simulation:
    """Return a ContextEval-shaped pairwise benchmark in two settings (see the module doc).

    Args:
        rng: The only source of randomness.
        design: Conversations (clusters; sizes realised here) × queries, latent ICC, SD of
            the cluster-varying quality and context effects (`effect_sd`).
        quality: Mean latent advantage of candidate 1 (0: the candidates are equally good).
        context_effect: Mean latent shift of the preference when evaluators see the context.
        tie_band: Latent half-width of a Tie verdict.
        query_sd: SD of the query effect shared by both settings and all judges.
        invalid: Invalid-output rate per setting (baseline, context) on decisive latent
            preferences, before the per-conversation propensity.
        close_factor: Multiplier of the Invalid rate on close calls (|z| <= tie_band).
        tables: Build the items and judgments tables (False: only `extra["examples"]`, for
            the calibration's speed; the same draws either way).

    Returns:
        A `Simulation`: items and judgments per setting (split = the repo's setting id),
        `extra["examples"]` (what `example_table(verdict_table(...))` gives on them),
        truths `<setting>|wr_c1`, `<setting>|wr_c2`, `<setting>|wr_tie`, `<setting>|margin`,
        `<setting>|agreement` (A_all, percent), `delta_margin`, `delta_agreement`;
        `params["design"]` is the realised design (its cluster sizes).
    """
    design = design.realise(rng)
    p = SimpleNamespace(
        quality=quality,
        context_effect=context_effect,
        tie_band=tie_band,
        query_sd=query_sd,
        invalid=tuple(invalid),
        close_factor=close_factor,
    )
    drawn = _pairwise_draw(rng, design, p)
    n, n_judges = design.n_items, len(JUDGE_BIAS)
    ids, conv = base.item_ids(design)
    cl = np.array([f"{design.benchmark}|conv|{c}" for c in conv], dtype=object)
    items, rows, examples = [], [], []
    for k, (split, (v, bad)) in enumerate(zip(REPO_IDS, drawn, strict=True)):
        order = rng.integers(0, 2, size=v.shape)
        examples.append(_examples(v, bad, SETTINGS[k], ids, cl))
        if not tables:
            continue
        out = _output(v.ravel(), order.ravel())
        out[bad.ravel()] = "No response. Finish Reason: SAFETY"
        d = replace(design, split=split)
        it = base.items_table(
            d,
            "pairwise",
            {"question": [f"query {i}" for i in ids], "meta": json.dumps({"pair": PAIR})},
        )
        it["cluster"] = cl  # the conversation: the same unit in both settings
        items.append(it)
        rows.append(
            pd.DataFrame(
                {
                    "benchmark": design.benchmark,
                    "split": split,
                    "item_id": np.repeat(ids, n_judges),
                    "judge": np.tile([f"judge-{j}" for j in range(n_judges)], n),
                    "order": order.ravel(),
                    "sample": 0,
                    "output": out,
                    "verdict": out,
                    "cluster": np.repeat(cl, n_judges),
                }
            )
        )
    extra = {"examples": pd.concat(examples, ignore_index=True)}
    if tables:
        judged = pd.concat(rows, ignore_index=True)
        judgments = base.judgments_table(judged.assign(valid=True))
        judgments["cluster"] = judged["cluster"].to_numpy()
        items_out = pd.concat(items, ignore_index=True)
    else:
        judgments, items_out = base.judgments_table({"verdict": []}), pd.DataFrame()
    params = {"quality": quality, "context_effect": context_effect, "tie_band": tie_band}
    params.update(query_sd=query_sd, invalid=tuple(invalid), close_factor=close_factor)
    params["design"] = design
    truth = pairwise_truth(
        quality,
        context_effect,
        design.icc,
        design.effect_sd,
        tie_band,
        query_sd,
        tuple(invalid),
        close_factor,
    )
    return Simulation(items_out, judgments, dict(truth), params, extra)


def _rating_latent(
    rng: np.random.Generator, design: Design, weird: np.ndarray, gap: float
) -> np.ndarray:
    """Latent ratings (queries × raters × values) of one attribute for a realised design."""
    G, n, nv = design.n_clusters, design.n_items, len(weird)
    cl = base.cluster_index(design)
    sd_a, sd_w = _level_sds(design.icc)
    a = rng.normal(0.0, sd_a, size=G)
    c = rng.normal(0.0, design.effect_sd * NOISE_SD, size=(G, nv))
    w = rng.normal(0.0, sd_w, size=(n, nv))
    shared = 3.0 + gap * weird[None, :] + a[cl, None] + c[cl] + w  # queries × values
    bias = np.asarray(RATER_BIAS)
    lat = shared[:, None, :] + bias[None, :, None]
    return lat + rng.normal(0.0, NOISE_SD, size=lat.shape)


def _long(design: Design, attr: str, values, rating: np.ndarray) -> pd.DataFrame:
    """Return the long ratings (`ratings_table` columns) of one attribute: q × rater × value."""
    nq, nr, nv = rating.shape
    qq, jj, kk = np.meshgrid(np.arange(nq), np.arange(nr), np.arange(nv), indexing="ij")
    qid = np.array([f"q{i:04d}" for i in range(nq)], dtype=object)
    unit = np.array(
        [f"{design.benchmark}|topic|{c:04d}" for c in base.cluster_index(design)], dtype=object
    )
    raters = np.array([f"rater-{j}" for j in range(nr)], dtype=object)
    flat = rating.ravel()
    return pd.DataFrame(
        {
            "kind": "default",
            "query_id": qid[qq.ravel()],
            "attribute": attr,
            "value": np.asarray(values, dtype=object)[kk.ravel()],
            "value_order": kk.ravel(),
            "rater": raters[jj.ravel()],
            "rating": flat,
            "parse_ok": ~np.isnan(flat),
            "cluster": unit[qq.ravel()],
        }
    )


def ratings(
    rng: np.random.Generator,
    design: Design = RATINGS_DESIGN,
    *,
    gaps: Mapping[str, float] | None = None,
    missing: float = 0.0,
    tables: bool = True,
) -> Simulation:
    """Return default-response ratings of the WEIRD-mapped attributes (see the module doc).

    Args:
        rng: The only source of randomness.
        design: `n_clusters` clusters of queries (`n_items` queries in all; sizes realised
            here); every query is rated on each attribute of `ATTRIBUTES` by 5 raters.
        gaps: Mean latent WEIRD gap per attribute (missing attributes: 0); it varies by
            cluster with `design.effect_sd`.
        missing: Share of unparsed rating outputs before the per-cluster propensity.
        tables: Build the items and judgments tables (False: only `extra["ratings"]`, for
            the calibration's speed; the same draws either way).

    Returns:
        A `Simulation`: items (query × attribute) and `ce.default_relevance` judgments, the
        long ratings in `extra["ratings"]` (what `ratings_table` reads from them), truths
        per attribute name (the expected gap) and per `<attribute>|<value>` (the expected
        rating); `params["design"]` is the realised design.
    """
    design = design.realise(rng)
    gaps = {a: float((gaps or {}).get(a, 0.0)) for a in ATTRIBUTES}
    n_raters = len(RATER_BIAS)
    q = np.arange(design.n_items)
    cl = base.cluster_index(design)
    prop = _propensity(rng, design.n_clusters)[cl]
    units = [f"{design.benchmark}|topic|{c:04d}" for c in cl]
    items, judgments, longs = [], [], []
    for attr, (values, weird) in ATTRIBUTES.items():
        w = np.array([v in weird for v in values])
        lat = _rating_latent(rng, design, w, gaps[attr])
        r = np.clip(np.round(lat), 1, 5).astype(int)  # queries × raters × values
        bad = rng.random(r.shape[:2]) < np.clip(missing * prop[:, None], 0.0, 0.9)
        rating = np.where(bad[:, :, None], np.nan, r.astype(float))
        longs.append(_long(design, attr, values, rating))
        if not tables:
            continue
        tag = attr.split()[0].lower()
        ids = [f"q{i:04d}-{tag}" for i in q]
        meta = [
            json.dumps({"query_id": f"q{i:04d}", "attribute": attr, "values": list(values)})
            for i in q
        ]
        d = replace(design, split="default")
        it = base.items_table(
            d, "pointwise", {"question": [f"query {i}" for i in q], "meta": meta}
        )
        it["item_id"] = ids
        it["cluster"] = units
        items.append(it)
        outs = []
        for i in q:
            for j in range(n_raters):
                if bad[i, j]:
                    outs.append("I cannot rate this.")
                    continue
                body = ", ".join(
                    f"'{v}': {{'relevance': {r[i, j, k]}}}" for k, v in enumerate(values)
                )
                outs.append(f"**output: {{{body}}}**")
        judgments.append(
            pd.DataFrame(
                {
                    "benchmark": design.benchmark,
                    "split": "default",
                    "item_id": np.repeat(ids, n_raters),
                    "judge": np.tile([f"rater-{j}" for j in range(n_raters)], len(q)),
                    "prompt": "ce.default_relevance",
                    "output": outs,
                    "verdict": outs,
                    "valid": ~bad.ravel(),
                }
            )
        )
    key = (tuple(sorted(gaps.items())), design.icc, design.effect_sd)
    truth = {**gap_truth(*key), **rating_truth(*key)}
    if tables:
        items_out = pd.concat(items, ignore_index=True)
        judged = base.judgments_table(pd.concat(judgments, ignore_index=True))
    else:
        items_out, judged = pd.DataFrame(), base.judgments_table({"verdict": []})
    return Simulation(
        items_out,
        judged,
        dict(truth),
        {"gaps": gaps, "missing": missing, "design": design},
        {"ratings": pd.concat(longs, ignore_index=True)},
    )


__all__ = [
    "ATTRIBUTES",
    "SETTINGS",
    "gap_truth",
    "pairwise",
    "pairwise_truth",
    "rating_truth",
    "ratings",
]
