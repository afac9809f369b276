"""A task's targets named in the language it declares (pass 6b; `compiler/lexicon.py`).

For a task written in German, each anomaly's targets are named by the lexicon's German nouns for
the English head nouns of their names, synonyms and prefab ("wine barrel" -> "Fass", "Tonne"),
and by their names as written; its defect by the lexicon's terms for its category.  A target with
no name in the language is *uncovered*: the give-away check could not see it named, so the task
is refused (E544) rather than checked in part.  A target is covered when the lexicon translates
one of its nouns, when its scene is written in the language (its names are then that language's),
or when one of its synonyms is a word of the language (wordfreq).
"""

from __future__ import annotations

from functools import lru_cache

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.giveaway import ForeignTarget, foreign_words, head_noun, stem, stems
from wac.compiler.language import zipf
from wac.compiler.lexicon import LEXICONS, Lexicon
from wac.compiler.names import standard_prefabs

Phrase = tuple[tuple[str, ...], str]  # (stems, the name or term to report)


@lru_cache(maxsize=8)
def _nouns(code: str) -> dict[str, tuple[str, ...]]:
    return {stem(k): v for k, v in LEXICONS[code].nouns.items()}


def _english_heads(o: B.SceneObject) -> set[str]:
    names = [o.name, *o.synonyms]
    pf = standard_prefabs().get(o.prefab or "")
    if pf is not None:
        names += [pf.name, *pf.synonyms]
    return {stem(h) for h in (head_noun(n) for n in names) if h}


def _translations(lex: Lexicon, o: B.SceneObject) -> list[str]:
    nouns = _nouns(lex.code)
    return sorted({t for h in _english_heads(o) for t in nouns.get(h, ())})


def _is_word_of(name: str, lang: str) -> bool:
    """Whether a name's last word is a word of `lang` more than of English ("Kiste", not "crate")."""
    ws = foreign_words(name)
    if not ws:
        return False
    w = ws[-1]
    return zipf(w, lang, large=True) >= 2.0 and zipf(w, lang, large=True) >= zipf(w, "en", large=True)


def foreign_targets(
    lex: Lexicon, scene_lang: str, built: Built, lowered: list[Lowered], materials: dict[str, B.Material]
) -> tuple[list[ForeignTarget], list[Phrase], list[tuple[str, str]]]:
    """(each anomaly's target in `lex`'s language, the names of objects only the perturbed world has,
    the targets and added objects the language has no name for: (id, name))."""
    uncovered: list[tuple[str, str]] = []

    def names_of(o: B.SceneObject) -> list[Phrase]:
        translated = _translations(lex, o)
        written = [(stems(n), o.name) for n in (o.name, *o.synonyms) if stems(n)]
        covered = translated or scene_lang == lex.code or any(_is_word_of(s, lex.code) for s in o.synonyms)
        if not covered:
            uncovered.append((o.id, o.name))
        return written + [(stems(t), f'{o.name}, as "{t}"') for t in translated]

    out = []
    for low in lowered:
        names: list[Phrase] = []
        clean_materials: set[str] = set()
        for tid in low.targets:
            o = built.objects.get(tid) or next((n for n in low.new_objects if n.id == tid), None)
            if o is None:
                continue
            names += names_of(o)
            for p in o.parts:
                m = materials.get(p.material)
                for word in (p.material.split("~")[0], m.category if m is not None else ""):
                    clean_materials.update(lex.materials.get(word, ()))
        terms = tuple((stems(t), t) for t in lex.terms[low.category])
        adjacent: tuple[Phrase, ...] = ()
        if low.category == "material":
            adjacent = tuple(
                (stems(t), t) for ts in lex.materials.values() for t in ts if t not in clean_materials
            )
        out.append(ForeignTarget(tuple(names), terms, adjacent))
    clean = {t for o in built.objects.values() for t in _translations(lex, o)}
    clean |= {w for o in built.objects.values() for n in (o.name, *o.synonyms) for w in [" ".join(stems(n))]}
    new: list[Phrase] = []
    for low in lowered:
        for o in low.new_objects:
            new += [(p, shown) for p, shown in names_of(o) if " ".join(p) not in clean]
    return out, new, list(dict.fromkeys(uncovered))
