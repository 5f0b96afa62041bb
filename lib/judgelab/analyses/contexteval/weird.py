"""Which contexts are "default"? WEIRD default-context ratings and sensitivity (spec 002 §2.7-2.8).

Ratings come as judgments tables of the `ce.default_relevance` template (one 1-5 relevance
rating per attribute value of one default response; items = query x attribute) or of the
`ce.adapted_relevance` template (one rating of a value-adapted response; items = query x
attribute x value), as produced by `judgelab.judges.chain` (and loaded by
`judgelab.data.catalog.contexteval.load_ratings`):

- `paper_attributes`, `attribute_catalogue`: Table 8 (the fallback of the released attribute
  file) and one row per attribute with its WEIRD values;
- `ratings_table`: the long table `kind, query_id, attribute, value, value_order, rater,
  rating, parse_ok` (outputs re-parsed with the spec's §4.10/§4.11 parsers);
- `mean_ratings`: Figure 5, mean rating per attribute value with n and an interval over
  clusters (the restricted wild cluster bootstrap's, inverted: one query's raters and one
  cluster's queries are not independent; `cluster=None`: the earlier bootstrap over rows);
- `group_values`: WEIRD vs non-WEIRD values per attribute (`weird_map`, the paper's findings
  as the default); the gaps and their tests are in `weirdgap`;
- `max_differences`, `max_difference_distribution`, `sensitivity_summary`: Figure 6 (the
  mean max difference's interval likewise over clusters).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.contexteval.resampling import units, wild_estimate
from judgelab.core import estimates, stats
from judgelab.core.schema import read_meta
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice
from judgelab.judges import parsers

#: Table 8 of the paper [P] (spec 002 §1.12), in the paper's order: attribute -> (question,
#: values). The repo file differs only in "Professionals / Experts in the field".
TABLE8: dict[str, tuple[str, tuple[str, ...]]] = {
    "Level of Detail": (
        "How much detail do you prefer in the response?",
        ("One-sentence answer", "Key points only", "Moderate detailed", "Extensive detail"),
    ),
    "User Expertise": (
        "What is your level of expertise on this topic?",
        ("Complete beginner", "Basic understanding", "Intermediate", "Advanced", "Expert"),
    ),
    "Length": (
        "What is your preferred length for the response?",
        ("One sentence", "2-3 sentences", "One paragraph (>3 sentences)", "Several paragraphs"),
    ),
    "Format of response": (
        "What format would you prefer the response to be in?",
        ("Bulleted list", "Numbered steps", "Paragraph text", "Table or chart"),
    ),
    "Style": (
        "What style of response do you prefer?",
        ("Formal", "Informal", "Conversational", "Academic", "Technical"),
    ),
    "Intended Audience": (
        "Who is the intended audience for this response?",
        ("General public", "Children", "Students", "Professionals / Experts"),
    ),
    "Geographical / Regional Context": (
        "What region or country should this response be based on?",
        ("North America", "Europe", "Asia", "Africa", "Latin America"),
    ),
    "Cultural Context": (
        "What cultural perspective should be considered in the response?",
        ("Western culture", "Eastern culture", "Indigenous culture", "Multicultural perspective"),
    ),
    "Age Group": (
        "Which age group should this response be relevant for?",
        ("Children", "Teenagers", "Young adults", "Middle-aged adults", "Seniors"),
    ),
    "Economic Context": (
        "What economic situation should this response be relevant for?",
        ("Low-income", "Middle-income", "High-income", "Budget-conscious"),
    ),
    "Political Context": (
        "What political context should this response consider?",
        ("Liberal", "Conservative", "Centrist", "Socialist"),
    ),
    "Gender": (
        "Should the response consider any specific gender perspective?",
        ("Male", "Female", "Non-binary", "Gender-neutral"),
    ),
}
REPO_VALUE_STRINGS = {"Professionals / Experts": "Professionals / Experts in the field"}
VALUE_STRINGS = ("paper", "repo")

#: The WEIRD-aligned values per attribute (spec 002 §2.7). Cultural, economic and age follow
#: the paper's findings; the geographical mapping is a workbench choice [A]. Every other value
#: of a mapped attribute is "non-WEIRD"; unmapped attributes are not grouped.
WEIRD_MAP: dict[str, tuple[str, ...]] = {
    "Cultural Context": ("Western culture",),
    "Economic Context": ("Middle-income", "High-income"),
    "Age Group": ("Young adults", "Middle-aged adults"),
    "Geographical / Regional Context": ("North America", "Europe"),
}
RATING_TEMPLATES = {"ce.default_relevance": "default", "ce.adapted_relevance": "adapted"}


def paper_attributes(*, value_strings: str = "repo") -> pd.DataFrame:
    """Return Table 8 as a tidy table (`attribute, question, option, option_index`).

    Args:
        value_strings: `paper` (Table 8 verbatim) or `repo` (the released file's strings).
    """
    check_choice("value_strings", value_strings, VALUE_STRINGS)
    rows = []
    for attr, (question, values) in TABLE8.items():
        for k, v in enumerate(values):
            v = REPO_VALUE_STRINGS.get(v, v) if value_strings == "repo" else v
            rows.append({"attribute": attr, "question": question, "option": v, "option_index": k})
    return pd.DataFrame(rows)


def attribute_catalogue(
    attributes: pd.DataFrame, *, weird_map: Mapping[str, Sequence[str]] = WEIRD_MAP
) -> pd.DataFrame:
    """Return one row per attribute: question, values, number of values and WEIRD values.

    Args:
        attributes: Tidy attributes (`attribute, question, option, option_index`).
        weird_map: Attribute -> the values counted as WEIRD-aligned.
    """
    _require(attributes, ["attribute", "question", "option", "option_index"], "attributes")
    rows = []
    for attr, g in attributes.sort_values("option_index").groupby("attribute", sort=False):
        values = g["option"].tolist()
        rows.append(
            {
                "attribute": attr,
                "question": g["question"].iloc[0],
                "values": ", ".join(values),
                "n_values": len(values),
                "weird_values": ", ".join(v for v in values if v in weird_map.get(attr, ())),
            }
        )
    return pd.DataFrame(rows)


def ratings_table(judgments: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (judgment, attribute value): the long ratings table (§1.10).

    Args:
        judgments: Judgments of `ce.default_relevance` and/or `ce.adapted_relevance`
            (other prompts are ignored); needs `split, item_id, judge, prompt, output`.
        items: Their items; `meta` holds `query_id`, `attribute`, `values` and, for adapted
            items, `value`.

    Returns:
        `kind` (default/adapted), `query_id`, `attribute`, `value`, `value_order` (index in
        the attribute's values), `rater`, `rating` (1-5, NaN when unparseable), `parse_ok`,
        and `cluster` (the item's resampling unit) when `items` carry one.
    """
    _require(judgments, ["split", "item_id", "judge", "prompt", "output"], "judgments")
    _require(items, ["split", "item_id", "meta"], "items")
    meta = {
        (s, i): read_meta(m)
        for s, i, m in zip(items["split"], items["item_id"], items["meta"], strict=True)
    }
    unit = (
        dict(
            zip(zip(items["split"], items["item_id"], strict=True), items["cluster"], strict=True)
        )
        if "cluster" in items.columns
        else None
    )
    rows = []
    j = judgments[judgments["prompt"].isin(list(RATING_TEMPLATES))]
    for rec in j.itertuples(index=False):
        m = meta.get((rec.split, rec.item_id))
        if m is None:
            raise KeyError(f"judgment {rec.split}/{rec.item_id} has no item")
        values = list(m.get("values") or [])
        base = {
            "kind": RATING_TEMPLATES[rec.prompt],
            "query_id": str(m.get("query_id")),
            "attribute": m.get("attribute"),
            "rater": rec.judge,
        }
        if unit is not None:
            base["cluster"] = unit.get((rec.split, rec.item_id))
        output = rec.output if isinstance(rec.output, str) else None
        if rec.prompt == "ce.default_relevance":
            p = parsers.ce_relevance_by_value(output, values)
            got = json.loads(p.verdict) if p.verdict else {}
            for k, v in enumerate(values):
                r = got.get(v)
                rows.append(
                    {
                        **base,
                        "value": v,
                        "value_order": k,
                        "rating": float(r) if r is not None else np.nan,
                        "parse_ok": r is not None,
                    }
                )
        else:
            p = parsers.relevance_rating(output)
            v = m.get("value")
            rows.append(
                {
                    **base,
                    "value": v,
                    "value_order": values.index(v) if v in values else -1,
                    "rating": float(p.verdict) if p.valid else np.nan,
                    "parse_ok": bool(p.valid),
                }
            )
    cols = ["kind", "query_id", "attribute", "value", "value_order", "rater", "rating", "parse_ok"]
    return pd.DataFrame(rows, columns=cols + (["cluster"] if unit is not None else []))


def _attr_order(df: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    rank = {a: k for k, a in enumerate(order)}
    return df.assign(_a=[rank.get(a, len(rank)) for a in df["attribute"]])


#: The 1–5 rating scale (the bounds of a mean rating's interval).
SCALE = (1.0, 5.0)


def _mean_fields(
    g: pd.DataFrame,
    x: str,
    *,
    cluster: str | None,
    bounds: tuple[float, float],
    n_boot: int,
    seed: int,
    level: float,
    key: tuple,
) -> dict[str, object]:
    """Return `mean, ci_low, ci_high` and the clusters behind the mean of column `x`.

    Default: the interval of `core.estimates` over clusters (`cluster` column, else the
    query); `cluster=None`: the earlier bootstrap over rows (`stats.bootstrap_mean`).
    """
    g = g[g[x].notna()]
    v = g[x].to_numpy(dtype=float)
    if cluster is None:
        est = stats.bootstrap_mean(v, n_boot=n_boot, seed=seed, level=level)
        return {
            "mean": est.estimate,
            "ci_low": est.low,
            "ci_high": est.high,
            "n_clusters": len(v),
            "n_eff_clusters": np.nan,
            "few_clusters": None,
            "method": f"bootstrap over rows (B={n_boot})",
        }
    unit = units(g, cluster, ("query_id",))
    rng = estimates.seeded(seed, *key)
    e = wild_estimate(v, np.ones_like(v), unit, bounds=bounds, level=level, n_boot=n_boot, rng=rng)
    return {
        "mean": e.value,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "n_clusters": e.n_clusters,
        "n_eff_clusters": e.n_eff_clusters,
        "few_clusters": e.few_clusters,
        "method": e.method,
    }


def mean_ratings(
    ratings: pd.DataFrame,
    *,
    kind: str = "default",
    cluster: str | None = "cluster",
    n_boot: int = 1999,
    seed: int = 0,
    level: float = 0.95,
    attribute_order: Sequence[str] = tuple(TABLE8),
) -> pd.DataFrame:
    """Return the mean rating per attribute value (Figure 5) with n, SD and an interval.

    Args:
        ratings: The output of `ratings_table`.
        kind: Which ratings: `default` (§2.7) or `adapted` (§2.8).
        cluster: The unit column (absent: `query_id`): the interval is the restricted wild
            cluster bootstrap's over these units (`core.estimates`); None: the earlier
            bootstrap over rows, as if every (query, rater) rating were independent.
        n_boot: Bootstrap replicates for the interval.
        seed: Bootstrap seed (each row's generator is keyed by it and the value).
        level: Confidence level.
        attribute_order: Attribute order of the output (others follow).

    Returns:
        `attribute, value, value_order, n, n_unparsed, mean, sd, sem, ci_low, ci_high,
        n_clusters, n_eff_clusters, few_clusters, method`.
    """
    _require(ratings, ["kind", "attribute", "value", "value_order", "rating"], "ratings")
    r = ratings[ratings["kind"] == kind]
    rows = []
    opts = {"cluster": cluster, "n_boot": n_boot, "seed": seed, "level": level}
    for (attr, value, vo), g in r.groupby(["attribute", "value", "value_order"], sort=False):
        x = g["rating"].dropna().to_numpy(dtype=float)
        sd = float(np.std(x, ddof=1)) if len(x) > 1 else np.nan
        fields = _mean_fields(
            g, "rating", bounds=SCALE, key=("mean_ratings", kind, attr, value), **opts
        )
        rows.append(
            {
                "attribute": attr,
                "value": value,
                "value_order": int(vo),
                "n": len(x),
                "n_unparsed": int(g["rating"].isna().sum()),
                "mean": fields.pop("mean"),
                "sd": sd,
                "sem": sd / np.sqrt(len(x)) if len(x) > 1 else np.nan,
                **fields,
            }
        )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out = _attr_order(out, attribute_order).sort_values(["_a", "value_order"], kind="stable")
    return out.drop(columns="_a").reset_index(drop=True)


def group_values(
    ratings: pd.DataFrame, *, weird_map: Mapping[str, Sequence[str]] = WEIRD_MAP
) -> pd.DataFrame:
    """Return `ratings` with a `group` column: WEIRD, non-WEIRD, or "" (attribute not mapped).

    Args:
        ratings: Needs `attribute`, `value`.
        weird_map: Attribute -> the values counted as WEIRD-aligned (a parameter: the
            paper's findings are the default, `WEIRD_MAP`).
    """
    _require(ratings, ["attribute", "value"], "ratings")
    attr = ratings["attribute"].astype(object)
    pairs = pd.MultiIndex.from_arrays([attr, ratings["value"].astype(object)])
    weird = [(a, v) for a, values in weird_map.items() for v in values]
    is_weird = pairs.isin(pd.MultiIndex.from_tuples(weird, names=pairs.names)) if weird else False
    mapped = attr.isin(list(weird_map)).to_numpy()
    group = np.where(mapped, np.where(is_weird, "WEIRD", "non-WEIRD"), "")
    return ratings.assign(group=group.astype(object))


def max_differences(
    ratings: pd.DataFrame, *, kind: str = "adapted", require_all_values: bool = True
) -> pd.DataFrame:
    """Return, per query, rater and attribute, the max rating difference across values (§2.8).

    Args:
        ratings: The output of `ratings_table`.
        kind: Which ratings (the paper's Figure 6 uses `adapted`).
        require_all_values: Keep only queries rated on every value of the attribute (else at
            least 2 rated values suffice).

    Returns:
        `attribute, query_id, rater, n_values, maxdiff` (max − min rating, an integer 0-4),
        `argmin_value` (the first lowest-rated value), and `cluster` when `ratings` carry one.
    """
    _require(ratings, ["kind", "attribute", "query_id", "rater", "value", "rating"], "ratings")
    r = ratings[ratings["kind"] == kind]
    n_all = r.groupby("attribute")["value"].nunique()
    rows = []
    for (attr, q, rater), g in r.groupby(["attribute", "query_id", "rater"], sort=False):
        x = g.dropna(subset=["rating"])
        need = n_all[attr] if require_all_values else 2
        if len(x) < max(need, 2):
            continue
        lo = x["rating"].min()
        row = {
            "attribute": attr,
            "query_id": q,
            "rater": rater,
            "n_values": len(x),
            "maxdiff": int(x["rating"].max() - lo),
            "argmin_value": x.loc[x["rating"] == lo, "value"].iloc[0],
        }
        if "cluster" in g.columns:
            row["cluster"] = g["cluster"].iloc[0]
        rows.append(row)
    cols = ["attribute", "query_id", "rater", "n_values", "maxdiff", "argmin_value"]
    return pd.DataFrame(rows, columns=cols + (["cluster"] if "cluster" in r.columns else []))


def max_difference_distribution(
    maxdiffs: pd.DataFrame, *, attribute_order: Sequence[str] = tuple(TABLE8)
) -> pd.DataFrame:
    """Return the distribution of the max rating difference per attribute (Figure 6).

    Returns:
        One row per attribute and k in 0..4: `attribute, maxdiff, count, n, pct`.
    """
    _require(maxdiffs, ["attribute", "maxdiff"], "maxdiffs")
    rows = []
    for attr, g in maxdiffs.groupby("attribute", sort=False):
        for k in range(5):
            c = int((g["maxdiff"] == k).sum())
            rows.append(
                {"attribute": attr, "maxdiff": k, "count": c, "n": len(g), "pct": 100 * c / len(g)}
            )
    out = pd.DataFrame(rows, columns=["attribute", "maxdiff", "count", "n", "pct"])
    out = _attr_order(out, attribute_order).sort_values(["_a", "maxdiff"], kind="stable")
    return out.drop(columns="_a").reset_index(drop=True)


def sensitivity_summary(
    maxdiffs: pd.DataFrame,
    *,
    cluster: str | None = "cluster",
    n_boot: int = 1999,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return per attribute: n, mean max difference (with CI), % >= 3, hardest value.

    The hardest value is the one most often rated lowest ([X], spec 002 §2.8). Sorted by
    mean max difference, highest first. The interval is over clusters (`cluster`, else the
    query; see `mean_ratings`); `cluster=None`: the earlier bootstrap over rows.

    Returns:
        `attribute, n, mean_maxdiff, ci_low, ci_high, pct_ge3, hardest_value, n_clusters,
        n_eff_clusters, few_clusters, method`.
    """
    _require(maxdiffs, ["attribute", "maxdiff", "argmin_value"], "maxdiffs")
    rows = []
    opts = {"cluster": cluster, "n_boot": n_boot, "seed": seed, "level": level}
    for attr, g in maxdiffs.groupby("attribute", sort=False):
        x = g["maxdiff"].to_numpy(dtype=float)
        fields = _mean_fields(g, "maxdiff", bounds=(0.0, 4.0), key=("maxdiff", attr), **opts)
        rows.append(
            {
                "attribute": attr,
                "n": len(x),
                "mean_maxdiff": fields.pop("mean"),
                "ci_low": fields.pop("ci_low"),
                "ci_high": fields.pop("ci_high"),
                "pct_ge3": 100 * float(np.mean(x >= 3)),
                "hardest_value": g["argmin_value"].value_counts().index[0],
                **fields,
            }
        )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    return out.sort_values("mean_maxdiff", ascending=False, kind="stable").reset_index(drop=True)


def rating_counts(ratings: pd.DataFrame) -> pd.DataFrame:
    """Return per kind and attribute: raters, queries, ratings and unparsed ratings."""
    _require(ratings, ["kind", "attribute", "query_id", "rater", "rating"], "ratings")
    g = ratings.groupby(["kind", "attribute"], sort=False)
    return pd.DataFrame(
        {
            "n_raters": g["rater"].nunique(),
            "n_queries": g["query_id"].nunique(),
            "n_ratings": g["rating"].size(),
            "n_unparsed": g["rating"].apply(lambda s: int(s.isna().sum())),
        }
    ).reset_index()
