"""Pass 7b, give-away text: nothing the auditor is told names a target together with its defect.

Every string of the agent context (task id, scene description, hint, interactive objects'
names) is cut into sentences; a sentence gives the anomaly away when it names one of its
targets (the rubric's object names and synonyms, or the object's id) and also a defect term
of its operator or category (the taxonomy's `defect_terms`).  Words are compared by a light
stem (`floats`, `floating`, `floated` -> `float`) after splitting on anything that is not a
letter and on camelCase, so `floating_crate`, `FloatingCrate` and "the crates float" match.

Material words ("stone", "wooden") count only right beside the name ("a stone barrel", "the
barrel made of stone"): a scene description lists many objects with their materials.
Terms that describe the clean target itself (its id words, prefab kind and clean materials:
"the wooden crate" is no give-away for a material swap) and a few words that describe clean
scenes as often as defects (`GENERIC`) are not counted.

Text in another language (a task's `language de`) is matched by `find_foreign_giveaways` with the
nouns and terms of `compiler/lexicon.py`: lower-case words without accents, stems that match word
beginnings (and, in German, the inside of compounds).  The texts come here normalised
(`compiler/textnorm.py`), so look-alike letters and invisible characters are already undone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SENTENCE_RE = re.compile(r"[.!?;\n]+")
_SUFFIXES = (("ying", "y"), ("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("ly", ""))

# Defect terms that, alone, name a place, a size or a light as often as a defect.
GENERIC = frozenset(
    {
        "two",
        "180",
        "above",
        "inside",
        "through",
        "on top",
        "open",
        "light",
        "far",
        "position",
        "distance",
        "day",
        "night",
        "dark",
        "bright",
        "flat",
        "different",
        "wrong",
        "new",
        "floor",
        "ground",
        "surface",
        "solid",
        "placed",
        "off",
        "size",
        "large",
        "small",
        "wide",
        "narrow",
        "material",
        "texture",
        "color",
        "colour",
        "red",
        "lit",
        "lighting",
        "static",
        "fast",
        "speed",
        "interact",
        "reach",
        "behind",
        "obstacle",
        "enter",
        "pushed",
        "moves",
        "moving",
        "facing",
        "away",
        "era",
        "century",
        "door",
        "lamp",
        "box",
        "walk on",
        "stand on",
    }
)


# Terms that count only beside the target's name (before it, or up to 3 words after it).
ADJACENT = frozenset(
    {
        "wood",
        "wooden",
        "metal",
        "metallic",
        "stone",
        "glass",
        "leather",
        "fabric",
        "cloth",
        "plastic",
        "brick",
        "concrete",
        "cardboard",
        "paper",
        "rubber",
        "marble",
        "iron",
        "steel",
        "ceramic",
        "straw",
        "gold",
        "golden",
        "transparent",
        "translucent",
    }
)


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light English stem: plural, -ing, -ed and -ly endings and a final `e` removed."""
    w = word.lower()
    for suffix, repl in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not (suffix == "s" and w.endswith("ss")):
            w = w[: -len(suffix)] + repl
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # flipped -> flipp -> flip
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


@lru_cache(maxsize=1 << 16)
def words(text: str) -> tuple[str, ...]:
    """Stemmed words of a text, split on non-letters and camelCase; numbers dropped."""
    return tuple(stem(w) for w in _WORD_RE.findall(text) if not w.isdigit())


@dataclass(frozen=True)
class Target:
    """What names one anomaly's target and what names its defect."""

    names: tuple[tuple[str, str], ...]  # (object name, synonym or id as written, the name to report)
    terms: tuple[str, ...]  # defect terms, as written
    clean_words: frozenset[str] = frozenset()  # stems that describe the clean target


@dataclass(frozen=True)
class Finding:
    where: str  # "the task id", "the hint", …
    sentence: str
    name: str
    term: str


def _phrases(items: Iterable[str]) -> dict[tuple[str, ...], str]:
    """Each item's stemmed words, and a phrase of several words also written as one
    (`pass through` -> `passthrough`, as ids often spell it)."""
    out: dict[tuple[str, ...], str] = {}
    for item in items:
        ws = words(item)
        if ws:
            out.setdefault(ws, item)
        if len(ws) > 1:
            out.setdefault((stem("".join(w.lower() for w in _WORD_RE.findall(item))),), item)
    return out


def _name_phrases(names: Iterable[tuple[str, str]]) -> dict[tuple[str, ...], str]:
    """Each name as a whole and by its head noun (`grain sack` -> `sack`; `bag of grain` -> `bag`)."""
    return dict(_name_phrases_of(tuple(names)))


@lru_cache(maxsize=256)  # a scene's names, asked again for every text of every task in the scene
def _name_phrases_of(names: tuple[tuple[str, str], ...]) -> tuple[tuple[tuple[str, ...], str], ...]:
    out: dict[tuple[str, ...], str] = {}
    for name, shown in names:
        ws = tuple(w for w in words(name) if len(w) >= 3)
        if not ws:
            continue
        out.setdefault(ws, shown)
        raw = [w.lower() for w in _WORD_RE.findall(name) if not w.isdigit()]
        head = raw[raw.index("of") - 1] if "of" in raw[1:] else raw[-1]
        if len(head) >= 3:
            out.setdefault((stem(head),), shown)
    return tuple(out.items())


def _find(sentence: tuple[str, ...], phrase: tuple[str, ...]) -> list[range]:
    n = len(phrase)
    return [range(i, i + n) for i in range(len(sentence) - n + 1) if sentence[i : i + n] == phrase]


def sentences(text: str, whole: bool = False) -> list[str]:
    if whole:
        return [text]
    return [s.strip() for s in _SENTENCE_RE.split(text) if s.strip()]


def find_giveaways(texts: Iterable[tuple[str, str, bool]], targets: Iterable[Target]) -> list[Finding]:
    """Sentences of `texts` ((where, text, whole)) that name a target together with its defect."""
    compiled = []
    for t in targets:
        names = _name_phrases(t.names)
        generic = {words(g) for g in GENERIC}
        terms = {
            p: raw
            for p, raw in _phrases(t.terms).items()
            if p not in generic and not (len(p) == 1 and p[0] in t.clean_words)
        }
        compiled.append((names, terms))
    return _scan(
        texts,
        lambda ws: next((hit for names, terms in compiled if (hit := _first_pair(ws, names, terms))), None),
    )


def _scan(texts: Iterable[tuple[str, str, bool]], match) -> list[Finding]:
    """A finding for each sentence of `texts` whose stemmed words `match` maps to (name, term)."""
    found: list[Finding] = []
    for where, text, whole in texts:
        for sent in sentences(text, whole):
            hit = match(words(sent))
            if hit:
                found.append(Finding(where, sent, *hit))
    return found


def _first_pair(ws, names, terms) -> tuple[str, str] | None:
    for nphrase, name in names.items():
        for nr in _find(ws, nphrase):
            for tphrase, term in terms.items():
                for tr in _find(ws, tphrase):
                    if not set(nr).isdisjoint(tr):
                        continue
                    if tphrase in _ADJACENT and not (
                        nr.start - 2 <= tr.start < nr.start or nr.stop <= tr.start <= nr.stop + 2
                    ):
                        continue
                    return name, term
    return None


_ADJACENT = {words(a) for a in ADJACENT}


def find_new_names(
    texts: Iterable[tuple[str, str, bool]], new: Iterable[tuple[str, str]], clean: Iterable[str]
) -> list[Finding]:
    """Sentences that name an object only the perturbed world has (`new`: (name or synonym, name
    to report)) by a phrase no object of the clean scene is called (`clean`: names, synonyms,
    prefab kinds): "the cola bottle" in a medieval market gives an anachronism away on its own."""
    clean_phrases = set(_name_phrases((c, c) for c in sorted(clean)))
    names = {p: shown for p, shown in _name_phrases(new).items() if p not in clean_phrases}
    return _scan(texts, lambda ws: next(((shown, "") for p, shown in names.items() if _find(ws, p)), None))


def find_terms(texts: Iterable[tuple[str, str, bool]], terms: Iterable[str]) -> list[Finding]:
    """Sentences that use one of `terms` (other than the `GENERIC` ones) at all: a scene-wide
    anomaly has no target to name, so its defect named alone gives it away ("strobing_daylight")."""
    generic = {words(g) for g in GENERIC}
    phrases = {p: raw for p, raw in _phrases(terms).items() if p not in generic}
    return _scan(texts, lambda ws: next((("", raw) for p, raw in phrases.items() if _find(ws, p)), None))


def head_noun(name: str) -> str:
    """The word a name is about: the last one, or the one before `of` (`bag of grain` -> `bag`)."""
    raw = [w.lower() for w in _WORD_RE.findall(name) if not w.isdigit()]
    if not raw:
        return ""
    return raw[raw.index("of") - 1] if "of" in raw[1:] else raw[-1]


# -- other languages (compiler/lexicon.py) ------------------------------------------------------

_LETTERS_RE = re.compile(r"[^\W\d_]+")
_SHORT_ENDINGS = ("", "e", "en", "n", "s", "es", "er")  # inflections a stem of <= 3 letters may take

# In a language that glues compounds, a noun of 4 letters or more names its thing inside a longer
# word ("Weinfass", "Holzkiste"); a defect term needs 5 ("freischwebend"), since short ones hide in
# unrelated words ("luck" in "glücklich").
NOUN_INSIDE, TERM_INSIDE = 4, 5


@lru_cache(maxsize=1 << 16)
def foreign_words(text: str) -> tuple[str, ...]:
    """The words of a text lower-case and without accents (`Säcke` -> `sacke`, `Straße` -> `strasse`),
    as the lexicon writes them."""
    folded = unicodedata.normalize("NFD", text.casefold())
    return tuple(_LETTERS_RE.findall("".join(c for c in folded if not unicodedata.combining(c))))


def stems(item: str) -> tuple[str, ...]:
    """A lexicon entry or a name as a phrase of stems."""
    return foreign_words(item)


@dataclass(frozen=True)
class ForeignTarget:
    """One anomaly's target names and defect terms in a language of `compiler/lexicon.py`."""

    names: tuple[tuple[tuple[str, ...], str], ...]  # (phrase of stems, the name to report)
    terms: tuple[tuple[tuple[str, ...], str], ...]  # (phrase of stems, the term as written)
    adjacent: tuple[tuple[tuple[str, ...], str], ...] = ()  # material terms: only beside the name


def _stem_matches(word: str, stem_: str, inside: int) -> bool:
    """Whether `word` is `stem_` inflected, or (for stems of `inside` letters or more, in a language
    that glues compounds) holds it inside."""
    if len(stem_) <= 3:
        return any(word == stem_ + e for e in _SHORT_ENDINGS)
    return word.startswith(stem_) or (0 < inside <= len(stem_) and stem_ in word)


def _find_stems(ws: tuple[str, ...], phrase: tuple[str, ...], inside: int) -> list[range]:
    n = len(phrase)
    inside = inside if n == 1 else 0
    return [
        range(i, i + n)
        for i in range(len(ws) - n + 1)
        if all(_stem_matches(ws[i + k], phrase[k], inside) for k in range(n))
    ]


def find_foreign_giveaways(
    texts: Iterable[tuple[str, str, bool]], targets: Iterable[ForeignTarget], compounds: bool
) -> list[Finding]:
    """Like `find_giveaways`, for text in another language: sentences naming a target (by a noun
    of the lexicon or a name as written) together with a defect term of its category."""
    targets = tuple(targets)

    def match(ws: tuple[str, ...]) -> tuple[str, str] | None:
        for t in targets:
            for nphrase, name in t.names:
                for nr in _find_stems(ws, nphrase, NOUN_INSIDE if compounds else 0):
                    for tphrase, term in t.terms + t.adjacent:
                        near = (tphrase, term) in t.adjacent
                        for tr in _find_stems(ws, tphrase, TERM_INSIDE if compounds else 0):
                            if not set(nr).isdisjoint(tr):
                                continue
                            if near and not (
                                nr.start - 2 <= tr.start < nr.start or nr.stop <= tr.start <= nr.stop + 2
                            ):
                                continue
                            return name, " ".join(ws[tr.start : tr.stop])  # as the sentence says it
        return None

    found = []
    for where, text, whole in texts:
        for sent in sentences(text, whole):
            hit = match(foreign_words(sent))
            if hit:
                found.append(Finding(where, sent, *hit))
    return found


def find_foreign_names(
    texts: Iterable[tuple[str, str, bool]], names: Iterable[tuple[tuple[str, ...], str]], compounds: bool
) -> list[Finding]:
    """Sentences that name, in another language, an object only the perturbed world has."""
    names = tuple(names)
    found = []
    for where, text, whole in texts:
        for sent in sentences(text, whole):
            ws = foreign_words(sent)
            hit = next(
                (shown for p, shown in names if _find_stems(ws, p, NOUN_INSIDE if compounds else 0)), None
            )
            if hit:
                found.append(Finding(where, sent, hit, ""))
    return found
