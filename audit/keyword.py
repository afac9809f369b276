"""The keyword judge: offline, deterministic term matching of a report's bugs against a rubric.

A bug matches a rubric entry when its description names the target (rubric `object_names`,
stem- and plural-tolerant), names the defect (`defect_terms`) in a clause that does not negate
it, and, for a dynamic anomaly, states the change's condition (cues per evidence kind).  Bugs
that name defects of many families, or many of the scene's objects, are not specific and never
match (the shotgun defence of `wac.audit.judge_limits`).  Rules: docs/evaluation.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from wac.bundle.model import RubricEntry

_WORD = re.compile(r"[a-z0-9]+")
_SPELLING = (("color", "colour"), ("center", "centre"), ("gray", "grey"), ("meter", "metre"))
# Whole words the suffix rules cannot reach: comparatives (suffix -er is too ambiguous in general:
# "poster" is no "post") and a few irregular verbs.
_WORDS = {
    "larger": "large",
    "largest": "large",
    "bigger": "big",
    "biggest": "big",
    "smaller": "small",
    "smallest": "small",
    "taller": "tall",
    "shorter": "short",
    "wider": "wide",
    "narrower": "narrow",
    "faster": "fast",
    "slower": "slow",
    "higher": "high",
    "lower": "low",
    "brighter": "bright",
    "darker": "dark",
    "longer": "long",
    "heavier": "heavy",
    "lighter": "light",
    "went": "go",
    "goes": "go",
    "ran": "run",
    "flew": "fly",
    "fell": "fall",
    "fallen": "fall",
    "shown": "show",
    "seen": "see",
    "saw": "see",
}
_DOUBLE = re.compile(r"([bdfgmnprt])\1$")  # not l, s, z: roll, pass, buzz

# Words that state the condition of a dynamic anomaly, per evidence kind of the taxonomy
# (taxonomy/categories.yaml `evidence`).  Matched like the rubric's terms (stems, phrases).
GENERIC_CUES = ("when", "whenever", "after", "while", "once", "as soon as", "until", "then", "if")
CONDITION_CUES: dict[str, tuple[str, ...]] = {
    "revisit": (
        "look away",
        "turn away",
        "turn back",
        "come back",
        "came back",
        "return",
        "revisit",
        "leave",
        "left",
        "went back",
        "go back",
        "again",
        "no longer",
        "before",
        "earlier",
        "previously",
        "later",
        "second time",
        "out of view",
        "out of sight",
    ),
    "time": (
        "over time",
        "wait",
        "second",
        "minute",
        "every",
        "periodically",
        "repeatedly",
        "by itself",
        "on its own",
        "suddenly",
        "abruptly",
        "later",
        "keep",
        "cycle",
        "instantly",
        "delay",
        "normal",
        "usual",
    ),
    "interaction": (
        "interact",
        "walk",
        "move",
        "push",
        "touch",
        "contact",
        "bump",
        "open",
        "close",
        "press",
        "toggle",
        "try",
        "tried",
        "attempt",
        "approach",
        "through",
        "into",
        "enter",
        "step",
        "collide",
        "hit",
        "kick",
        "operate",
        "use",
        "movement",
        "pass",
        "cross",
        "where",
    ),
    "several_views": (
        "from",
        "view",
        "viewpoint",
        "angle",
        "side",
        "distance",
        "far",
        "farther",
        "further",
        "closer",
        "close",
        "near",
        "up close",
        "approach",
        "behind",
        "in front of",
        "seen",
        "away",
        "perspective",
    ),
    "single_view": (),
}


def stem(word: str) -> str:
    """A crude, consistent stem: plural and -ing/-ed endings, doubled consonants, final e."""
    w = _WORDS.get(word.lower(), word.lower())
    for us, uk in _SPELLING:
        if us in w and uk not in w:
            w = w.replace(us, uk)
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif len(w) > 4 and w.endswith("es") and w[-3] in "sxz" or w.endswith(("ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    else:
        return w[:-1] if len(w) > 3 and w.endswith("e") else w
    if _DOUBLE.search(w):
        w = w[:-1]
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


def tokens(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(str(text).lower())]


def mentions(text_tokens: list[str], phrase: str) -> bool:
    """Whether the phrase's stemmed words occur consecutively (word boundaries, any case)."""
    p = tokens(phrase)
    if not p:
        return False
    n = len(p)
    return any(text_tokens[i : i + n] == p for i in range(len(text_tokens) - n + 1))


def condition_cues(entry: RubricEntry) -> tuple[str, ...]:
    from wac.taxonomy.registry import registry

    try:
        evidence = registry().category(entry.category).evidence
    except (StopIteration, KeyError, ValueError):  # not a taxonomy category: accept any cue
        evidence = tuple(CONDITION_CUES)
    cues = list(GENERIC_CUES)
    for kind in evidence:
        cues += [c for c in CONDITION_CUES.get(kind, ()) if c not in cues]
    return tuple(cues)


# --- negation and specificity ------------------------------------------------------------------------

# Clause boundaries: a negation only reaches the words after it in its own clause.
_PIECE = re.compile(r"[a-z0-9]+|[.;:!?,()\n]")
_BREAKS = frozenset(("and", "but", "however", "although", "though", "whereas", "yet", "while"))
NEGATIONS = frozenset(
    ("not", "no", "never", "t", "without", "nor", "neither", "none", "nothing", "cannot", "nobody", "nowhere")
)
NEGATION_WINDOW = 4  # words before a term that a negation reaches ("does not seem to be floating")
MAX_FAMILIES = 4  # a bug naming defect terms of more anomaly families than this is not specific
MAX_OBJECTS = 4  # ... nor one naming more of the scene's distinct objects than this


@dataclass(frozen=True)
class Text:
    """A description's words (for negations), their stems and the clause each belongs to."""

    raw: tuple[str, ...]
    stems: tuple[str, ...]
    clause: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> Text:
        raw, clause, k = [], [], 0
        for piece in _PIECE.findall(str(text).lower()):
            if not piece[0].isalnum():
                k += 1
                continue
            if piece in _BREAKS:
                k += 1
            raw.append(piece)
            clause.append(k)
        return cls(tuple(raw), tuple(stem(w) for w in raw), tuple(clause))

    def negated(self, i: int) -> bool:
        for j in range(max(0, i - NEGATION_WINDOW), i):
            if self.clause[j] != self.clause[i]:
                continue
            w = self.raw[j]
            if w in NEGATIONS and not (w == "no" and j + 1 < len(self.raw) and self.raw[j + 1] == "longer"):
                return True
        return False


def affirms(text: Text, phrase: str) -> bool:
    """Whether the phrase occurs without a negation in the words before it in its clause ("the sack
    is not floating" does not affirm "floating"; "no longer" states a change, not a negation)."""
    p = tuple(tokens(phrase))
    n = len(p)
    st = text.stems
    return bool(p) and any(st[i : i + n] == p and not text.negated(i) for i in range(len(st) - n + 1))


def _family_terms() -> dict[str, tuple[str, ...]]:
    from wac.taxonomy.registry import registry

    out: dict[str, list[str]] = {}
    for c in registry().categories:
        out.setdefault(c.family.value, []).extend(c.defect_terms)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def unspecific(text: Text, scene_names: tuple[tuple[str, ...], ...] = ()) -> str | None:
    """Why a description is too unspecific to identify one bug (None when it is specific): it
    affirms defects of more than MAX_FAMILIES anomaly families, or names more than MAX_OBJECTS of
    the scene's distinct objects (a "shotgun" report listing everything)."""
    st = list(text.stems)
    families = sorted(f for f, terms in _family_terms().items() if any(affirms(text, d) for d in terms))
    if len(families) > MAX_FAMILIES:
        return f"names defects of {len(families)} anomaly families ({', '.join(families)})"
    named = _objects_named(st, scene_names)
    if named > MAX_OBJECTS:
        return f"names {named} different objects of the scene"
    return None


def _objects_named(st: list[str], scene_names: tuple[tuple[str, ...], ...]) -> int:
    """How many of the scene's distinct objects the text names.  A phrase that several objects
    answer to (a prefab's synonym such as "dining table" for every table of a room) names one of
    them, whichever it is, not all: the count is the smaller of the objects reached and the phrases
    used to reach them."""
    reached = [group for group in scene_names if any(mentions(st, n) for n in group)]
    phrases = {n for group in reached for n in group if mentions(st, n)}
    return min(len(reached), len(phrases))


@dataclass(frozen=True)
class Match:
    score: int
    reason: str
    bug: str | None


def _near(poses: list[dict], where: tuple[tuple[float, float, float], float]) -> bool:
    (x, y, _), limit = where
    return any(math.hypot(p["x"] - x, p["y"] - y) <= limit for p in poses if "x" in p and "y" in p)


def keyword_match(
    entry: RubricEntry,
    bugs: list[dict],
    scene_names: tuple[tuple[str, ...], ...] = (),
    where: tuple[tuple[float, float, float], float] | None = None,
    poses: dict[str, list[dict]] | None = None,
    unshown=None,
) -> Match:
    """Score one rubric entry against a report's bugs; retracted bugs never count, negated defects
    and unspecific bugs never match.  An entry without object names (an invisible wall, a hole) is
    a place: with `where` (its point and the coverage distance) and `poses` (per bug id, where it
    was flagged and its cited frames' poses) the bug must come from within that distance.  `unshown(bug)`
    (the evidence rule, audit/evidence.py) says why a bug's evidence does not show the target, or None."""
    live = [b for b in bugs if b.get("status") != "retracted"]
    if not live:
        return Match(0, "no bug was reported", None)
    cues = condition_cues(entry) if entry.dynamic else ()
    near = []
    for b in live:
        text = Text.of(b.get("description", ""))
        t = list(text.stems)
        obj = next((n for n in entry.object_names if mentions(t, n)), None)
        if entry.object_names and obj is None:
            continue
        defect = next((d for d in entry.defect_terms if affirms(text, d)), None)
        if defect is None:
            negated = next((d for d in entry.defect_terms if mentions(t, d)), None)
            why = f"negates the defect ('{negated}')" if negated else "not the defect"
            near.append(f"{b.get('id')} names the {obj} but {why}" if obj else f"{b.get('id')} {why}")
            continue
        vague = unspecific(text, scene_names)
        if vague is not None:
            near.append(f"{b.get('id')} is not specific: it {vague}")
            continue
        if not entry.object_names and where is not None and poses is not None:
            if not _near(poses.get(str(b.get("id")), []), where):
                near.append(
                    f"{b.get('id')} names the defect but was neither flagged nor cites a frame "
                    f"within {where[1]:g} m of the target place"
                )
                continue
        what = f"names the {obj} and the defect ('{defect}')" if obj else f"names the defect ('{defect}')"
        if entry.dynamic:
            cue = next((c for c in cues if mentions(t, c)), None)
            if cue is None:
                near.append(f"{b.get('id')} {what} but not the change's condition")
                continue
            what += f" with its condition ('{cue}')"
        missing = unshown(b) if unshown is not None else None
        if missing is not None:
            near.append(f"{b.get('id')} {what}, but {missing.removeprefix(str(b.get('id')) + ' ')}")
            continue
        return Match(1, f"{b.get('id')} {what}.", b.get("id"))
    names = ", ".join(entry.object_names[:4]) or "the target location"
    if near:
        return Match(0, "; ".join(near) + ".", None)
    return Match(0, f"no reported bug names the target ({names}) with its defect.", None)
