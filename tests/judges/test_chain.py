"""The §6/§7 chain end to end against the loopback OpenAI-compatible server, with caching."""

import re

import pytest

from judgelab.analyses import contexteval as wc
from judgelab.core import paths, schema
from judgelab.data import catalog
from judgelab.judges import chain
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.openai_server import OpenAIServer

ATTRS = ["Cultural Context", "Age Group"]


def responder(body):
    """Deterministic answers in each template's format (no model)."""
    text = body["messages"][-1]["content"]
    if "Follow-up Question:" in text:  # attribute filter: q2 is not kept for Age Group
        drop = "Query 2?" in text and "age group" in text
        return '{"1": "Yes", "2": "%s", "3": "Yes"}' % ("No" if drop else "Yes")
    if "Respond to the query" in text:
        query = re.search(r"Query: (.*)\n", text).group(1)
        ctx = re.search(r"Context: (.*)\n", text)
        return f"Answer to {query}" + (f" for {ctx.group(1)}" if ctx else "")
    if "possible answers to this question" in text:  # default relevance, Table 15
        fmt = re.search(r"\*\*output: (\{.*?\})\*\*", text).group(1)
        values = re.findall(r"'([^']+)': \{'relevance'", fmt)
        weird = {"Western culture", "Young adults", "Middle-aged adults"}
        return "**output: " + str({v: {"relevance": 5 if v in weird else 3} for v in values})
    # adapted relevance: 2 for "Children", else 4
    return '{"relevance": %d}' % (2 if "Children" in text.split("Context:")[1] else 4)


@pytest.fixture()
def specs(monkeypatch):
    monkeypatch.setenv("JL_CHAIN_KEY", "sk-" + "test-chain-0123456789")
    with OpenAIServer(responder=responder) as server:

        def make(template):
            return spec_mod.from_dict(
                {
                    "endpoint": "openai-compatible",
                    "model": "m",
                    "base_url": server.url,
                    "api_key_env": "JL_CHAIN_KEY",
                    "template": template,
                    "backoff_s": 0.001,
                }
            )

        yield server, make


def test_chain_end_to_end_with_cache(specs, tmp_path):
    server, make = specs
    queries = schema.new_items(
        [
            {
                "benchmark": "q",
                "split": "s",
                "item_id": f"q{i}",
                "task": "qa",
                "question": f"Query {i}?",
            }
            for i in range(3)
        ]
    )
    attrs = wc.paper_attributes()
    attrs = attrs[attrs["attribute"].isin(ATTRS)]
    kw = dict(
        generator=make("ce.response"),
        rater=make("ce.default_relevance"),
        filter_judge=make("ce.attribute_filter"),
        adapted=True,
        progress=False,
    )
    with RequestCache(tmp_path / "cache.sqlite") as cache:
        first = chain.run_chain(queries, attrs, cache=cache, **kw)
        # filter 3 x 2 = 6; defaults 3; ratings 6 - 1 dropped = 5; adapted: Cultural 3 x 4
        # values + Age 2 x 5 = 22 responses and 22 ratings -> 6 + 3 + 5 + 22 + 22 = 58.
        assert first.requested == server.total == 58
        second = chain.run_chain(queries, attrs, cache=cache, **kw)
    assert second.requested == 0 and server.total == 58  # everything came from the cache
    assert second.ratings.equals(first.ratings)
    assert first.selected.groupby("attribute").size().to_dict() == {
        "Cultural Context": 3,
        "Age Group": 2,
    }
    r = wc.ratings_table(first.ratings, first.rating_items)
    assert len(r) == 3 * 4 + 2 * 5 and r["parse_ok"].all()
    gap = wc.weird_gap(r, n_boot=50).set_index("attribute")
    # Cultural: Western 5 vs the other three 3 -> gap 2 in every query.
    assert gap.loc["Cultural Context", "gap"] == 2.0
    assert gap.loc["Age Group", "gap"] == 2.0 and gap.loc["Age Group", "n_queries"] == 2
    adapted = wc.ratings_table(first.adapted_ratings, first.adapted_rating_items)
    md = wc.max_differences(adapted).set_index(["attribute", "query_id"])["maxdiff"]
    # adapted: Children 2, every other value 4 -> Age Group maxdiff 2; Cultural 0.
    assert set(md.loc["Age Group"]) == {2} and set(md.loc["Cultural Context"]) == {0}
    # each step's items and judgments were written where `judgelab judge` finds them
    assert (paths.items() / "contexteval_default_ratings.parquet").exists()
    assert list((paths.judgments() / "contexteval_default_ratings").glob("*.parquet"))
    loaded = catalog.contexteval.load_ratings(
        ["contexteval_default_ratings", "contexteval_adapted_ratings"]
    )
    assert not loaded.is_sample and len(wc.ratings_table(loaded.judgments, loaded.items)) == 44


def test_chain_rejects_the_wrong_template(specs):
    _, make = specs
    q = schema.new_items(
        [{"benchmark": "q", "split": "s", "item_id": "q", "task": "qa", "question": "Q?"}]
    )
    with pytest.raises(ValueError, match="expected 'ce.default_relevance'"):
        chain.run_chain(
            q,
            wc.paper_attributes(),
            generator=make("ce.response"),
            rater=make("ce.response"),
            write_tables=False,
        )


def test_select_pairs_is_seeded_and_capped():
    q = schema.new_items(
        [
            {
                "benchmark": "q",
                "split": "s",
                "item_id": f"q{i}",
                "task": "qa",
                "question": f"Q{i}?",
            }
            for i in range(10)
        ]
    )
    attrs = wc.paper_attributes()
    a = chain.select_pairs(q, attrs, max_queries_per_attr=3, seed=4)
    b = chain.select_pairs(q, attrs, max_queries_per_attr=3, seed=4)
    assert a.equals(b) and len(a) == 12 * 3
    assert a.groupby("attribute").size().eq(3).all()


def test_prompt_pieces_of_an_attribute():
    assert chain.slug("Geographical / Regional Context") == "geographical_regional_context"
    line = chain.attribute_line("Which age?", ["Children", "Seniors"])
    assert line == 'Q: Which age? A: ["Children", "Seniors"]'
