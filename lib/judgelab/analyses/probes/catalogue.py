"""The probe catalogue: small, documented, deterministic transformations of one response.

A *probe* is a counterfactual perturbation that adds a cue a judge should ignore (CALM,
arXiv 2410.02736; Shi et al., arXiv 2406.07791) and leaves the substance alone. Each probe
changes one **slot**: a response (`response`: the text of the response it targets) or the
item's context (`context`: a distractor aimed at the response it targets). Every text a
probe adds comes from the stated lists below, and which entry is used is drawn from a
seeded generator, so a probe is deterministic per seed.

Rules shared by every probe:

- the original text is kept verbatim (as a prefix, a suffix or the middle); nothing of it is
  rewritten, so the claim a response makes is unchanged;
- a text with no word characters (empty, only whitespace or punctuation) is left unchanged:
  the probe is a *no-op* (`apply` returns `noop=True`), recorded in the variant's provenance
  and left out of the analysis;
- probes are **not idempotent** by design (padding padded text pads again); generation
  applies each probe once, always to the original text.

`PROBES` (name → `Probe`) in catalogue order; `apply(name, text, rng, target=, model=)` runs
one. What each adds and what it isolates is in each `Probe`'s `transformation` and
`isolates` (`catalogue_table()` lists them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from judgelab.core.text import content_tokens
from judgelab.errors import check_choice

if TYPE_CHECKING:  # the generator is passed in: listing the catalogue imports no numpy
    import numpy as np

SLOTS = ("response", "context")
#: The model a self-identification names unless told (name the judge's own model).
DEFAULT_MODEL = "GPT-4"
#: Verbosity padding adds at least this share of the response's words (capped, see below).
PAD_RATIO = 0.5
MAX_FILLER = 12

SURNAMES = ("Smith", "Johnson", "Müller", "Tanaka", "García", "Okafor", "Nguyen", "Rossi")
JOURNALS = (
    "Journal of Applied Knowledge",
    "Annual Review of Science",
    "Proceedings of the National Academy",
    "International Journal of Research",
)
BANDWAGON = (
    "(Note: {p}% of reviewers preferred this response.)",
    "(Note: most evaluators, {p}% of them, rated this response as the better one.)",
)
BANDWAGON_SHARES = (78, 85, 90, 93)
FILLER = (
    "It is worth noting that this is the case.",
    "As mentioned, this point is important to keep in mind.",
    "In other words, the above is what it is.",
    "To put it another way, this is how it is.",
    "Of course, this is something to consider.",
    "All things considered, this is indeed so.",
    "That being said, it is what it is.",
    "Needless to say, this holds true here as well.",
)
EMOTIVE_OPENERS = (
    "I'm absolutely thrilled to help with this!",
    "Oh, what a wonderful question, I truly love it!",
    "I'm so excited to share this with you!",
)
EMOTIVE_CLOSERS = (
    "I really, truly hope this helps you!",
    "Wishing you all the very best, with all my heart!",
    "I'm so happy I could help, this means a lot to me!",
)
SELF_ID = ("— Written by {model}.", "(This response was written by {model}.)")
REFINEMENT = (
    "Revised answer (refined after a careful review of my first draft):",
    "Improved version: I reworked my earlier answer to fix its weaknesses.",
)
COT = (
    "Let me think about this step by step.",
    "First, I will look at what is asked.",
    "Next, I will work through it carefully.",
    "Then, I will check each part again.",
    "Finally, I will give my answer.",
)
DISTRACTOR = (
    "Unrelated note: an old catalogue once listed the words {words}, in no particular order; "
    "this has no bearing on the question."
)
#: Content words of the target response a distractor echoes (fewer when it has fewer).
DISTRACTOR_WORDS = 3

_WORD = re.compile(r"\w")


def words_of(texts: tuple[str, ...] | str) -> frozenset[str]:
    r"""Return the lower-cased `\w+` tokens of a stated list (the vocabulary a probe may add).

    >>> sorted(words_of(("It is so.",)))
    ['is', 'it', 'so']
    """
    texts = (texts,) if isinstance(texts, str) else texts
    return frozenset(t for s in texts for t in re.findall(r"\w+", s.lower()))


#: Vocabulary of the padding probes: every word they add is in these sets (unit-tested).
FILLER_WORDS = words_of(FILLER)
COT_WORDS = words_of(COT)


class Applied(NamedTuple):
    """A probe's output: the new text and whether it left the text unchanged (a no-op)."""

    text: str
    noop: bool


class ProbeInput(NamedTuple):
    """What a probe may read besides the text it changes."""

    target: str  # the response the probe aims at (the text itself for a response probe)
    model: str = DEFAULT_MODEL
    pad_ratio: float = PAD_RATIO


Transform = Callable[[str, "np.random.Generator", ProbeInput], str]


@dataclass(frozen=True)
class Probe:
    """One probe of the catalogue.

    Attributes:
        name: Its key (`PROBES`), the `probe` value of its variants.
        slot: What it changes: `response` (the targeted response) or `context`.
        transformation: What it does to the text, in one line.
        isolates: The bias it isolates (what a robust judge ignores).
        origin: Where the probe is described (CALM's name, Shi et al.).
        fn: The transformation `(text, rng, ProbeInput) -> text`.
    """

    name: str
    slot: str
    transformation: str
    isolates: str
    origin: str
    fn: Transform


def _choice(rng: np.random.Generator, options: tuple) -> object:
    return options[int(rng.integers(len(options)))]


def _join(*parts: str, sep: str = " ") -> str:
    return sep.join(p for p in parts if p)


def _citation(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    year = int(rng.integers(2005, 2024))
    vol, issue, page = (
        int(rng.integers(3, 60)),
        int(rng.integers(1, 12)),
        int(rng.integers(10, 400)),
    )
    cite = (
        f"[Source: {_choice(rng, SURNAMES)} et al. ({year}), {_choice(rng, JOURNALS)}, "
        f"{vol}({issue}), pp. {page}–{page + int(rng.integers(5, 30))}.]"
    )
    return f"{text}\n\n{cite}"


def _bandwagon(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    note = str(_choice(rng, BANDWAGON)).format(p=_choice(rng, BANDWAGON_SHARES))
    return f"{text}\n\n{note}"


def _filler(n_words: int, rng: np.random.Generator, ratio: float) -> list[str]:
    """Seeded filler sentences totalling ≥ ratio × n_words words (1..MAX_FILLER sentences)."""
    out: list[str] = []
    added = 0
    while len(out) < MAX_FILLER and (not out or added < ratio * n_words):
        s = str(_choice(rng, FILLER))
        out.append(s)
        added += len(s.split())
    return out


def _verbosity(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    pad = _filler(len(text.split()), rng, inp.pad_ratio)
    half = (len(pad) + 1) // 2
    return _join(" ".join(pad[:half]), text, " ".join(pad[half:]), sep="\n\n")


def _emotive(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    return _join(str(_choice(rng, EMOTIVE_OPENERS)), text, str(_choice(rng, EMOTIVE_CLOSERS)))


def _self_id(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    return f"{text}\n\n{str(_choice(rng, SELF_ID)).format(model=inp.model)}"


def _refinement(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    return f"{_choice(rng, REFINEMENT)}\n\n{text}"


def _cot(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    k = int(rng.integers(3, len(COT) + 1))
    steps = [COT[0], *COT[1:-1][: k - 2], COT[-1]]
    return f"{' '.join(steps)}\n\n{text}"


def _repetition(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    # split after sentence ends keeping the separators, so joining the parts restores the text
    parts = re.split(r"((?<=[.!?])\s+)", text)
    sentences = [i for i in range(0, len(parts), 2) if _WORD.search(parts[i])]
    i = sentences[int(rng.integers(len(sentences)))]
    sep = parts[i + 1] if i + 1 < len(parts) else " "
    parts[i] = f"{parts[i]}{sep}{parts[i].strip()}"
    return "".join(parts)


def _distractor(text: str, rng: np.random.Generator, inp: ProbeInput) -> str:
    vocab = list(dict.fromkeys(t for t in content_tokens(inp.target) if not t.isdigit()))
    if not vocab:
        return text
    k = min(DISTRACTOR_WORDS, len(vocab))
    picked = [vocab[i] for i in sorted(rng.choice(len(vocab), size=k, replace=False))]
    words = ", ".join(f"'{w}'" for w in picked)
    return _join(text, DISTRACTOR.format(words=words), sep="\n\n")


PROBES: dict[str, Probe] = {
    p.name: p
    for p in (
        Probe(
            "authority",
            "response",
            "appends a fake citation [Source: <surname> et al. (<year>), <journal>, ...]",
            "authority bias: trusting a cited source that was never checked",
            "CALM: authority",
            _citation,
        ),
        Probe(
            "bandwagon",
            "response",
            "appends '(Note: <p>% of reviewers preferred this response.)'",
            "bandwagon bias: following a claimed majority instead of judging",
            "CALM: bandwagon-effect",
            _bandwagon,
        ),
        Probe(
            "verbosity",
            "response",
            f"wraps the response in filler sentences (≥ {PAD_RATIO:.0%} more words, only "
            "words of FILLER)",
            "verbosity bias: preferring length that adds no content",
            "CALM: verbosity",
            _verbosity,
        ),
        Probe(
            "emotive",
            "response",
            "adds an emotive opener and closer (EMOTIVE_OPENERS / EMOTIVE_CLOSERS)",
            "sentiment bias: preferring an enthusiastic tone",
            "CALM: sentiment",
            _emotive,
        ),
        Probe(
            "self_identification",
            "response",
            "appends '— Written by <model>.' (name the judge's own model)",
            "self-enhancement: favouring what claims to be the judge's own output",
            "CALM: self-enhancement",
            _self_id,
        ),
        Probe(
            "refinement",
            "response",
            "prefixes 'Revised answer (refined after a careful review of my first draft):'",
            "refinement-aware bias: favouring a claimed revision",
            "CALM: refinement-aware",
            _refinement,
        ),
        Probe(
            "distractor",
            "context",
            "appends to the context an irrelevant note echoing 3 content words of the target",
            "distraction: irrelevant context that only lexically points at one response",
            "CALM: distraction",
            _distractor,
        ),
        Probe(
            "cot_padding",
            "response",
            "prefixes a content-free 'Let me think step by step...' preamble (only COT words)",
            "chain-of-thought bias: preferring visible but empty reasoning",
            "CALM: CoT",
            _cot,
        ),
        Probe(
            "repetition",
            "response",
            "repeats one sentence of the response right after itself (no new words)",
            "repetition stability: a repeated claim should not weigh more",
            "Shi et al. 2024: repetition stability",
            _repetition,
        ),
    )
}


def apply(
    name: str,
    text: str | None,
    rng: np.random.Generator,
    *,
    target: str | None = None,
    model: str = DEFAULT_MODEL,
    pad_ratio: float = PAD_RATIO,
) -> Applied:
    """Apply probe `name` to `text` (a response, or the context for a context probe).

    Args:
        name: A key of `PROBES`.
        text: The text the probe changes (None is treated as "").
        rng: The seeded generator that picks the added text.
        target: The response the probe aims at (defaults to `text`; a context probe needs it).
        model: The model a self-identification names.
        pad_ratio: Verbosity padding adds at least this share of the response's words.

    Returns:
        The new text and whether the probe was a no-op (see the module docstring).

    Raises:
        ChoiceError: `name` is not a probe.
    """
    probe = PROBES[check_choice("probe", name, tuple(PROBES))]
    text = "" if text is None else str(text)
    target = text if target is None else str(target)
    aimed = target if probe.slot == "context" else text
    if not _WORD.search(aimed):
        return Applied(text, True)
    out = probe.fn(text, rng, ProbeInput(target, model, pad_ratio))
    return Applied(out, out == text)


def catalogue_table() -> list[dict[str, str]]:
    """Return the catalogue as rows: probe, slot, transformation, isolates, origin."""
    return [
        {
            "probe": p.name,
            "slot": p.slot,
            "transformation": p.transformation,
            "isolates": p.isolates,
            "origin": p.origin,
        }
        for p in PROBES.values()
    ]


__all__ = [
    "COT",
    "COT_WORDS",
    "DEFAULT_MODEL",
    "FILLER",
    "FILLER_WORDS",
    "PAD_RATIO",
    "PROBES",
    "SLOTS",
    "Applied",
    "Probe",
    "apply",
    "catalogue_table",
    "words_of",
]
