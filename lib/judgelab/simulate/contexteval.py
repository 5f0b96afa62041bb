"""Planted-truth ContextEval benchmarks: pairwise verdicts with and without context, WEIRD ratings.

`pairwise` — queries grouped in conversations (clusters, `Design.per_cluster` queries each),
every query judged by `n_judges` autoraters in two settings that judge the same responses:
the baseline NoCtxGen-NoCtxEval and NoCtxGen-CtxEval. Judge j's latent preference for
candidate 1 on query i in setting s is

    z = quality + context_effect·[s = context] + u_conv + v_query + b_j + e,   e ~ logistic,

u_conv a conversation effect (latent ICC `Design.icc`), v_query a query effect shared by both
settings and all judges, b_j fixed judge leanings (summing to 0). The vote is C1 when
z > `tie_band`, C2 when z < −`tie_band`, else Tie; an output is Invalid (a safety refusal)
with probability `invalid` per setting, and the analyses count Invalid as Tie (the repo).
Truths (majority-vote win rates, the margin wr_C1 − wr_C2 and its change with context) are
ratios of expectations computed from the planted parameters by one large fixed-seed draw.

`ratings` — default-response relevance ratings (spec 002 §2.7) of `Design.n_clusters`
queries on the four WEIRD-mapped attributes by `n_raters` raters: the latent rating of
value v is 3 + gap_a·[v WEIRD] + w_{q,v} + b_r + e, rounded and clipped to 1–5; w_{q,v}
(shared by every rater of the query) makes one query's per-rater gaps correlated, with
latent ICC `Design.icc`. Truth per attribute: the expected within-query gap (after rounding),
by one large fixed-seed draw. Unparsed outputs occur at `missing` (MAR).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation

SETTINGS = ("NoCtxGen-NoCtxEval", "NoCtxGen-CtxEval")
REPO_IDS = ("gen_wo_ctx_eval_wo_ctx", "gen_wo_ctx_eval_w_ctx")
PAIR = "cand-a_vs_cand-b"
JUDGE_BIAS = (-0.3, -0.15, 0.0, 0.15, 0.3)
#: The WEIRD-mapped attributes of spec 002 §2.7: values, and which are WEIRD-aligned.
ATTRIBUTES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Cultural Context": (
        ("Western culture", "Eastern culture", "Indigenous culture", "Multicultural perspective"),
        ("Western culture",),
    ),
    "Economic Context": (
        ("Low-income", "Middle-income", "High-income", "Budget-conscious"),
        ("Middle-income", "High-income"),
    ),
    "Age Group": (
        ("Children", "Teenagers", "Young adults", "Middle-aged adults", "Seniors"),
        ("Young adults", "Middle-aged adults"),
    ),
    "Geographical / Regional Context": (
        ("North America", "Europe", "Asia", "Africa", "Latin America"),
        ("North America", "Europe"),
    ),
}
RATER_BIAS = (-0.2, -0.1, 0.0, 0.1, 0.2)
#: Defaults: 40 conversations × 5 queries (ICC 0.3); 50 queries × 4 attributes × 5 raters.
PAIRWISE_DESIGN = Design(n_clusters=40, per_cluster=5, icc=0.3, benchmark="sim-ce")
RATINGS_DESIGN = Design(n_clusters=50, per_cluster=4, icc=0.3, benchmark="sim-weird")
NOISE_SD = 0.8  # per-rating noise of the latent relevance


def _votes(z: np.ndarray, tie_band: float) -> np.ndarray:
    """0 = C1, 1 = C2, 2 = Tie from latent preferences."""
    return np.where(z > tie_band, 0, np.where(z < -tie_band, 1, 2))


def _latent(rng, n, design: Design, mean: float, judges: np.ndarray, query_sd: float):
    """Latent preferences (n queries × judges) with conversation and query effects."""
    per = design.per_cluster
    u = rng.normal(0.0, base.cluster_sd(design.icc), size=-(-n // per))
    shared = np.repeat(u, per)[:n] + rng.normal(0.0, query_sd, size=n)
    return shared, mean + judges[None, :] + rng.logistic(size=(n, len(judges)))


def _majority_counts(votes: np.ndarray) -> np.ndarray:
    """Per query: one-hot (n × 3) of the majority label (all zero without a majority)."""
    counts = np.stack([(votes == k).sum(axis=1) for k in range(3)], axis=1)
    return (counts * 2 > votes.shape[1]).astype(float)


@lru_cache(maxsize=64)
def pairwise_truth(
    quality: float,
    context_effect: float,
    icc: float,
    per: int,
    tie_band: float,
    query_sd: float,
    invalid: tuple[float, float],
) -> dict[str, float]:
    """Return the planted win rates (percent), margins and the margin's change by context."""
    rng = np.random.default_rng(20240)
    n = 400_000
    design = Design(n_clusters=-(-n // per), per_cluster=per, icc=icc)
    judges = np.asarray(JUDGE_BIAS)
    shared, noise = _latent(rng, n, design, quality, judges, query_sd)
    out = {}
    for k, s in enumerate(SETTINGS):
        z = shared[:, None] + noise + (context_effect if k else 0.0)
        if k:
            z = z - noise + quality + judges[None, :] + rng.logistic(size=noise.shape)
        v = _votes(z, tie_band)
        v = np.where(rng.random(v.shape) < invalid[k], 2, v)  # Invalid counts as Tie
        m = _majority_counts(v)
        n_m = m.sum()
        out[f"{s}|wr_c1"] = 100 * m[:, 0].sum() / n_m
        out[f"{s}|wr_tie"] = 100 * m[:, 2].sum() / n_m
        out[f"{s}|margin"] = 100 * (m[:, 0].sum() - m[:, 1].sum()) / n_m
        counts = np.stack([(v == j).sum(axis=1) for j in range(3)], axis=1)
        out[f"{s}|agreement"] = 100 * float(np.mean(counts.max(axis=1) / v.shape[1]))
    out["delta_margin"] = out[f"{SETTINGS[1]}|margin"] - out[f"{SETTINGS[0]}|margin"]
    out["delta_agreement"] = out[f"{SETTINGS[1]}|agreement"] - out[f"{SETTINGS[0]}|agreement"]
    return out


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


def _output(label: int, order: np.ndarray) -> np.ndarray:
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
    tables: bool = True,
) -> Simulation:
    """Return a ContextEval-shaped pairwise benchmark in two settings (see the module doc).

    Args:
        rng: The only source of randomness.
        design: Conversations (clusters) × queries per conversation, latent ICC.
        quality: Latent advantage of candidate 1 (0: the candidates are equally good).
        context_effect: Latent shift of the preference when evaluators see the context.
        tie_band: Latent half-width of a Tie verdict.
        query_sd: SD of the query effect shared by both settings and all judges.
        invalid: Invalid-output rate per setting (baseline, context).
        tables: Build the items and judgments tables (False: only `extra["examples"]`, for
            the calibration's speed; the same draws either way).

    Returns:
        A `Simulation`: items and judgments per setting (split = the repo's setting id),
        `extra["examples"]` (what `example_table(verdict_table(...))` gives on them),
        truths `<setting>|wr_c1`, `<setting>|wr_tie`, `<setting>|margin`,
        `<setting>|agreement` (A_all, percent), `delta_margin`, `delta_agreement`.
    """
    judges = np.asarray(JUDGE_BIAS)
    n = design.n_items
    shared, noise = _latent(rng, n, design, quality, judges, query_sd)
    ids, conv = base.item_ids(design)
    items, rows, examples = [], [], []
    for k, split in enumerate(REPO_IDS):
        z = shared[:, None] + noise if k == 0 else shared[:, None] + quality + judges[None, :]
        if k:
            z = z + context_effect + rng.logistic(size=noise.shape)
        v = _votes(z, tie_band)
        bad = base.missing_mask(rng, v.size, rate=invalid[k]).reshape(v.shape)
        order = rng.integers(0, 2, size=v.shape)
        cl = np.array([f"{design.benchmark}|conv|{c}" for c in conv], dtype=object)
        examples.append(_examples(v, bad, SETTINGS[k], ids, cl))
        if not tables:
            continue
        out = _output(v.ravel(), order.ravel())
        out[bad.ravel()] = "No response. Finish Reason: SAFETY"
        d = Design(design.n_clusters, design.per_cluster, design.icc, design.benchmark, split)
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
                    "item_id": np.repeat(ids, len(judges)),
                    "judge": np.tile([f"judge-{j}" for j in range(len(judges))], n),
                    "order": order.ravel(),
                    "sample": 0,
                    "output": out,
                    "verdict": out,
                    "cluster": np.repeat(np.asarray(it["cluster"], dtype=object), len(judges)),
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
    params.update(query_sd=query_sd, invalid=invalid, design=design)
    truth = pairwise_truth(
        quality, context_effect, design.icc, design.per_cluster, tie_band, query_sd, invalid
    )
    return Simulation(items_out, judgments, dict(truth), params, extra)


@lru_cache(maxsize=64)
def gap_truth(gaps: tuple[tuple[str, float], ...], icc: float) -> dict[str, float]:
    """Return the expected within-query WEIRD gap per attribute after rounding to 1–5."""
    out = {}
    for attr, g in gaps:
        values, weird = ATTRIBUTES[attr]
        w = np.array([v in weird for v in values])
        lat = _rating_latent(np.random.default_rng(777), 100_000, w, g, icc, RATER_BIAS)
        r = np.clip(np.round(lat), 1, 5)  # queries × raters × values
        out[attr] = float(np.mean(r[:, :, w].mean(axis=2) - r[:, :, ~w].mean(axis=2)))
    return out


def _rating_latent(rng, n, weird: np.ndarray, gap: float, icc: float, bias) -> np.ndarray:
    """Latent ratings (n × values) for one rater (or n × raters × values with `bias` array)."""
    sd_w = NOISE_SD * np.sqrt(icc / (1.0 - icc))
    bias = np.atleast_1d(np.asarray(bias, dtype=float))
    shared = 3.0 + gap * weird[None, :] + rng.normal(0.0, sd_w, size=(n, len(weird)))
    lat = shared[:, None, :] + bias[None, :, None]
    lat = lat + rng.normal(0.0, NOISE_SD, size=lat.shape)
    return lat[:, 0, :] if len(bias) == 1 else lat


def _long(design: Design, attr: str, values, rating: np.ndarray) -> pd.DataFrame:
    """Return the long ratings (`ratings_table` columns) of one attribute: q × rater × value."""
    nq, nr, nv = rating.shape
    qq, jj, kk = np.meshgrid(np.arange(nq), np.arange(nr), np.arange(nv), indexing="ij")
    qid = np.array([f"q{i:04d}" for i in range(nq)], dtype=object)
    unit = np.array([f"{design.benchmark}|query|{q}" for q in qid], dtype=object)
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
        design: `n_clusters` queries; every query is rated on each attribute of `ATTRIBUTES`
            (`per_cluster` is ignored: one item per query and attribute) by 5 raters.
        gaps: Latent WEIRD gap per attribute (missing attributes: 0).
        missing: Share of unparsed rating outputs (missing at random).
        tables: Build the items and judgments tables (False: only `extra["ratings"]`, for
            the calibration's speed; the same draws either way).

    Returns:
        A `Simulation`: items (query × attribute) and `ce.default_relevance` judgments, the
        long ratings in `extra["ratings"]` (what `ratings_table` reads from them), truths
        per attribute name (the expected gap).
    """
    gaps = {a: float((gaps or {}).get(a, 0.0)) for a in ATTRIBUTES}
    raters = np.asarray(RATER_BIAS)
    q = np.arange(design.n_clusters)
    items, judgments, longs = [], [], []
    for attr, (values, weird) in ATTRIBUTES.items():
        w = np.array([v in weird for v in values])
        lat = _rating_latent(rng, len(q), w, gaps[attr], design.icc, raters)
        r = np.clip(np.round(lat), 1, 5).astype(int)  # queries × raters × values
        bad = rng.random(r.shape[:2]) < missing
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
        d = Design(design.n_clusters, 1, design.icc, design.benchmark, "default")
        it = base.items_table(
            d, "pointwise", {"question": [f"query {i}" for i in q], "meta": meta}
        )
        it["item_id"] = ids
        it["cluster"] = [f"{design.benchmark}|query|q{i:04d}" for i in q]
        items.append(it)
        outs = []
        for i in q:
            for j in range(len(raters)):
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
                    "item_id": np.repeat(ids, len(raters)),
                    "judge": np.tile([f"rater-{j}" for j in range(len(raters))], len(q)),
                    "prompt": "ce.default_relevance",
                    "output": outs,
                    "verdict": outs,
                    "valid": ~bad.ravel(),
                }
            )
        )
    truth = gap_truth(tuple(sorted(gaps.items())), design.icc)
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


__all__ = ["ATTRIBUTES", "SETTINGS", "gap_truth", "pairwise", "pairwise_truth", "ratings"]
