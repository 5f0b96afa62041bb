"""Every probe changes only what it says: verbatim original, stated vocabulary, seeded."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from judgelab.analyses.probes import catalogue as cat
from judgelab.core.text import content_tokens

TEXT = (
    "Paris is the capital of France. It has about 2.1 million inhabitants! "
    "The Seine flows through it."
)
TARGET = "The Eiffel tower was completed in 1889 for the World's Fair."


def _apply(name: str, text: str = TEXT, seed: int = 0, **kw) -> cat.Applied:
    return cat.apply(name, text, np.random.default_rng(seed), **kw)


def _words(text: str) -> Counter:
    return Counter(re.findall(r"\w+", text.lower()))


def _added(before: str, after: str) -> Counter:
    return _words(after) - _words(before)


@pytest.mark.parametrize("name", list(cat.PROBES))
def test_every_probe_is_deterministic_per_seed_and_keeps_the_original(name):
    kw = {"target": TARGET} if cat.PROBES[name].slot == "context" else {}
    a, b = _apply(name, seed=3, **kw), _apply(name, seed=3, **kw)
    assert a == b and not a.noop and a.text != TEXT
    if name != "repetition":  # repetition inserts inside; checked on its own below
        assert TEXT in a.text  # the original text is kept verbatim
    # some seed gives another variant (every probe draws something), never another original
    others = {_apply(name, seed=s, **kw).text for s in range(12)}
    assert len(others) > 1


@pytest.mark.parametrize("name", list(cat.PROBES))
def test_no_words_is_a_documented_noop(name):
    for text in ("", "   ", "?!", None):
        out = cat.apply(name, text, np.random.default_rng(0), target=text)
        assert out.noop and out.text == ("" if text is None else text)


def test_authority_appends_a_citation_and_leaves_the_claim_alone():
    out = _apply("authority").text
    assert out.startswith(TEXT + "\n\n")
    cite = out[len(TEXT) + 2 :]
    assert re.fullmatch(
        r"\[Source: \w+ et al\. \(\d{4}\), [A-Za-z ]+, \d+\(\d+\), pp\. \d+–\d+\.\]", cite
    )
    assert any(s in cite for s in cat.SURNAMES) and any(j in cite for j in cat.JOURNALS)


def test_verbosity_adds_only_filler_words_and_enough_of_them():
    for seed in range(20):
        out = _apply("verbosity", seed=seed).text
        added = _added(TEXT, out)
        assert set(added) <= cat.FILLER_WORDS, set(added) - cat.FILLER_WORDS
        assert sum(added.values()) >= cat.PAD_RATIO * len(TEXT.split())
        # the filler is whole sentences of the stated list, before and after the original
        head, tail = out.split(TEXT)
        for part in (head, tail):
            for sentence in re.split(r"(?<=\.)\s+", part.strip()):
                assert not sentence or sentence in cat.FILLER
    # no content word beyond the list, also measured as content tokens
    extra = set(content_tokens(out)) - set(content_tokens(TEXT))
    assert extra <= cat.FILLER_WORDS
    long = " ".join(["word"] * 400)  # capped at MAX_FILLER sentences
    pad = _apply("verbosity", text=long).text.replace(long, "")
    assert len(re.findall(r"\.", pad)) == cat.MAX_FILLER


def test_cot_padding_prefixes_only_stated_reasoning_steps():
    for seed in range(10):
        out = _apply("cot_padding", seed=seed).text
        assert out.endswith("\n\n" + TEXT)
        pre = out[: -len(TEXT) - 2]
        assert pre.startswith(cat.COT[0]) and pre.endswith(cat.COT[-1])
        assert set(_added(TEXT, out)) <= cat.COT_WORDS


def test_repetition_adds_no_new_word_and_repeats_one_sentence():
    for seed in range(10):
        out = _apply("repetition", seed=seed).text
        added = _added(TEXT, out)
        assert set(added) <= set(_words(TEXT))  # only words already there
        sentences = re.split(r"(?<=[.!?])\s+", TEXT)
        repeated = [s for s in sentences if out.count(s) == 2]
        assert len(repeated) == 1 and out.replace(repeated[0], "", 1).count(repeated[0]) == 1
        assert sum(added.values()) == len(re.findall(r"\w+", repeated[0]))
    one = _apply("repetition", text="Just one sentence").text
    assert one == "Just one sentence Just one sentence"


def test_appending_probes_use_their_stated_text():
    band = _apply("bandwagon").text
    assert band.startswith(TEXT + "\n\n") and "% of" in band and "this response" in band
    me = _apply("self_identification", model="judge-x").text
    assert me.startswith(TEXT + "\n\n") and "judge-x" in me and "ritten by" in me
    ref = _apply("refinement").text
    assert ref.endswith("\n\n" + TEXT) and ref[: -len(TEXT) - 2] in cat.REFINEMENT
    emo = _apply("emotive").text
    head, tail = emo.split(" " + TEXT + " ")
    assert head in cat.EMOTIVE_OPENERS and tail in cat.EMOTIVE_CLOSERS


def test_distractor_appends_to_the_context_echoing_only_target_words():
    context = "Some context about Paris."
    out = _apply("distractor", text=context, target=TARGET)
    assert out.text.startswith(context + "\n\n") and not out.noop
    note = out.text[len(context) + 2 :]
    template = set(_words(cat.DISTRACTOR.replace("{words}", "")))
    echoed = set(_words(note)) - template
    assert echoed and echoed <= set(content_tokens(TARGET))
    assert len(re.findall(r"'(\w+)'", note)) == 3
    # no context yet: the note becomes the context; a target without words: a no-op
    alone = _apply("distractor", text=None, target=TARGET)
    assert alone.text.startswith("Unrelated note:")
    assert _apply("distractor", text=context, target="1889 ...").noop


def test_unknown_probe_and_catalogue_table():
    with pytest.raises(ValueError, match="probe must be one of"):
        _apply("flattery")
    rows = cat.catalogue_table()
    assert [r["probe"] for r in rows] == list(cat.PROBES)
    assert all(r["slot"] in cat.SLOTS and r["isolates"] and r["origin"] for r in rows)
