"""E545: every anomaly's target has a name a correct report would use (pass 6b).

The judge matches a report to the rubric by the target's name and synonyms (`rubric.object_names`).
A report names what the auditor saw, so a target is unmatchable when its name is

* **missing**: a bare shape (`box`, `cylinder`, …) or mesh without `name`, whose rubric name is its
  id with the number cut off ("box", "prop", "b") — judged like a written name, so `wall_1: box`
  ("wall") passes and `box_3: box` ("box") or `prop_2: box` ("prop") does not;
* **a placeholder**: nothing but words like "prop", "object", "thing", "item", "asset", "mesh",
  "model", with at most numbers, colours, sizes or positions beside them ("red prop", "item 2");
* **an id**: underscores, camelCase, or a trailing number or letter ("crate_3", "box 2", "stool a");
* **no word**: a word that neither English (wordfreq's large list) nor the scene's declared
  language knows ("barel", "zorblax crate"): a typo or a made-up word no report repeats;
* **another prefab's**: an instance of a standard prefab named as a different standard prefab
  ("crate" for a `barrel`, "bench" for a `car`) — an observer calls it by what it looks like.  Two
  prefabs whose names or synonyms share a word (`chair` and `stool` are both a "seat") count as
  the same thing.

Checked for every target of every anomaly and for what an anomaly adds (`spawn`, `anachronism`, …).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector
from wac.compiler.giveaway import head_noun, stem
from wac.compiler.language import name as language_name
from wac.compiler.language import zipf
from wac.compiler.schema import SHAPES
from wac.compiler.spans import Span

PLACEHOLDERS = frozenset(
    """prop props object objects obj objs thing things item items asset assets mesh meshes model
    models entity node element geometry primitive primitives shape cuboid placeholder dummy unnamed
    untitled default instance actor stuff anomaly misc generic todo tbd temp tmp foo baz qux xxx test
    sample example target""".split()
)
# Words that say which one or what it looks like, but not what it is.
MODIFIERS = frozenset(
    """a an the some this that one red green blue yellow black white grey gray brown orange purple
    pink big small large tiny huge little tall short long wide first second third left right middle
    top bottom front back main other another extra new old random""".split()
)
# an underscore, camelCase ("grainSack", not "iPhone"), a trailing number ("box 2", "crate3") or letter
_ID_LIKE = re.compile(r"_|[a-z]{2}[A-Z][a-z]|\d$|\s[A-Za-z]$")


@dataclass(frozen=True, slots=True)
class PrefabNames:
    name: str
    synonyms: tuple[str, ...]

    def words(self, pid: str) -> frozenset[str]:
        """Every name of the prefab and the head noun of each, stemmed: what it may be called."""
        names = (self.name, *self.synonyms, pid.replace("_", " "))
        return frozenset(_key(n) for n in names) | {stem(head_noun(n)) for n in names if head_noun(n)}


@lru_cache(maxsize=1)
def standard_prefabs() -> dict[str, PrefabNames]:
    """The standard library's prefabs with their default name and synonyms."""
    from wac.compiler.resolve import load_stdlib

    out = {}
    for mod in load_stdlib():
        for pf in mod.prefabs:
            name = pf.body.setting("name")
            syn = pf.body.setting("synonyms")
            text = (
                name.args[0].value if name and hasattr(name.args[0], "value") else pf.name.replace("_", " ")
            )
            synonyms: tuple[str, ...] = ()
            if syn is not None and syn.args:
                word = syn.args[0]
                items = getattr(word, "items", None)
                synonyms = tuple(i.value for i in items) if items is not None else (word.value,)
            out[pf.name] = PrefabNames(text, synonyms)
    return out


def _key(name: str) -> str:
    return " ".join(stem(w) for w in re.findall(r"[a-z]+", name.lower()))


def problem(name: str, derived: bool, lang: str = "en") -> str | None:
    """Why no report would use `name` (None when one would); `derived`: the name came from an id."""
    if _ID_LIKE.search(name.strip()):
        return "it is written like an id"
    words = [w.lower() for w in re.findall(r"[^\W\d_]+", name)]
    if derived and len(words) == 1 and words[0] in SHAPES:
        return f'its rubric name is its shape, "{words[0]}"'
    nouns = [w for w in words if len(w) > 1 and w not in MODIFIERS]
    if not nouns or all(w in PLACEHOLDERS for w in nouns):
        return "it is a placeholder, not a name" if nouns else "it names no thing"
    unknown = [w for w in nouns if zipf(w, lang, large=True) == 0 and zipf(w, "en", large=True) == 0]
    if unknown:
        return f'"{unknown[0]}" is not {_article(lang)} word'
    for w in nouns:
        meant = _misspelt(w) if lang == "en" else None
        if meant is not None:
            return f'"{w}" looks like a misspelling of "{meant}"'
    return None


def _misspelt(word: str) -> str | None:
    """The standard name a rare word is one slip away from (`barel` -> `barrel`), if any."""
    rare = zipf(word, "en", large=True)
    if rare >= 2.5 or len(word) < 4 or word in _vocabulary():
        return None
    for close in _vocabulary():
        if _one_slip(word, close) and zipf(close, "en", large=True) >= rare + 1.5:
            return close
    return None


def _one_slip(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter added, dropped, changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[str, ...]:
    """The words of the standard prefabs' names and synonyms."""
    words = {w for p in standard_prefabs().values() for n in (p.name, *p.synonyms) for w in n.lower().split()}
    return tuple(sorted(words))


def _article(lang: str) -> str:
    n = language_name(lang)
    return ("an " if n[0] in "AEIOU" else "a ") + n


def conflicting_prefab(o: B.SceneObject) -> str | None:
    """The other standard prefab whose name `o`'s name is, when `o` is a standard prefab unrelated to it."""
    prefabs = standard_prefabs()
    own = prefabs.get(o.prefab or "")
    if own is None:
        return None
    key = _key(o.name)
    own_words = own.words(o.prefab or "")
    if key in own_words or stem(head_noun(o.name)) in own_words:
        return None
    for pid, other in sorted(prefabs.items()):
        if pid == o.prefab or key not in (_key(other.name), _key(pid.replace("_", " "))):
            continue
        if own_words & other.words(pid):
            return None  # related kinds (a chair and a stool are both a seat)
        return pid
    return None


def check_names(
    anomalies: tuple[N.Anomaly, ...], lowered: list[Lowered], built: Built, lang: str, diag: Collector
) -> None:
    """E545 for each target and added object whose name no correct report would use."""
    seen: set[str] = set()
    for a, low in zip(anomalies, lowered, strict=True):
        added = {o.id: o for o in low.new_objects}
        for oid in dict.fromkeys([*low.targets, *added]):
            o = built.objects.get(oid) or added.get(oid)
            if o is None or oid in seen:
                continue
            seen.add(oid)
            thing = a.new_object if oid in added else built.things.get(oid)
            clause = thing.clause("name") if thing is not None else None
            at = next((n.span for n in a.operand if n.text == oid), a.span)
            _check_one(o, clause, at, lang, diag)


def _check_one(o: B.SceneObject, clause: N.Clause | None, at: Span, lang: str, diag: Collector) -> None:
    shape = o.prefab in SHAPES
    why = problem(o.name, derived=clause is None and shape, lang=lang)
    other = conflicting_prefab(o) if why is None and clause is not None and lang == "en" else None
    if why is None and other is None:
        return
    span = clause.span if clause is not None else at
    if other is not None:
        diag.error(
            "E545",
            f'`{o.id}` is a `{o.prefab}` named "{o.name}", the name of another standard prefab '
            f"(`{other}`): a report names it by what it looks like",
            span,
            f'give it the name an observer would use: `name "{standard_prefabs()[o.prefab or ""].name}"`, '
            f"or make it a `{other}` if that is what it should be",
        )
        return
    if clause is None and shape:
        source = f'has no `name`: its rubric name "{o.name}" comes from its id'
    elif clause is None:
        source = f'is named "{o.name}" after its prefab `{o.prefab}`'
    else:
        source = f'is named "{o.name}"'
    diag.error(
        "E545",
        f"`{o.id}` {source}, which no correct report would use: {why}",
        span,
        _name_hint(o),
    )


def _name_hint(o: B.SceneObject) -> str:
    meant = _suggest(o)
    if meant != "…":
        return f'give it the name an observer would use: `name "{meant}"`'
    return 'give it the name an observer would use for what it looks like: `name "…"` in its declaration'


def _suggest(o: B.SceneObject) -> str:
    """A name to offer: the prefab's, a close standard name, or a placeholder for the author."""
    pf = standard_prefabs().get(o.prefab or "")
    if pf is not None:
        return pf.name
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", o.name)]
    vocab = sorted({n for p in standard_prefabs().values() for n in (p.name, *p.synonyms)})
    close = difflib.get_close_matches(" ".join(words), vocab, n=1, cutoff=0.75)
    return close[0] if close else "…"
