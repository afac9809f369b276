"""Checks between passes 6 and 7: an anomaly changes no excluded object, and nothing the
auditor is told gives it away.

* E613: an anomaly that changes (targets, or has an effect on) an object the scene marks
  `benign` — a deliberate oddity that evaluation excludes — cannot be scored.
* E540: the scene description, the hint or an interactive object's name names a target
  together with a defect term of its category (`wac.compiler.giveaway`).
  An object only the faulty world has (spawned, anachronistic, extra) is given away by its name
  alone when no clean object is called that.
* W541: the task id does the same, or names a scene-wide anomaly's defect alone
  (`meadow_strobing_daylight`).  Task ids reach the auditor (context.json, the bundle
  directory) unless the build is sealed, so this is a warning that `--strict` makes an error;
  the shipped corpus gives neutral ids and builds clean with `--strict`.

Every text is normalised first (`wac.compiler.textnorm`: look-alike letters, invisible
characters), and read in the task's declared language as well as in English (`language CODE`;
`wac.compiler.lexicon`, `wac.compiler.foreign`):

* E544: a text is not in the declared language (`wac.compiler.language`), mixes scripts inside a
  word, or the declaration cannot be checked (an unknown code, a language without a lexicon, a
  target the lexicon cannot name, the default English hint in a task of another language).
* W546: the task id is in neither the task's language nor English (a warning, as W541).
* E545 (`check_target_names`, `wac.compiler.names`): a target without a name a report would use.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector
from wac.compiler.foreign import foreign_targets
from wac.compiler.giveaway import (
    Finding,
    ForeignTarget,
    Target,
    find_foreign_giveaways,
    find_foreign_names,
    find_giveaways,
    find_new_names,
    find_terms,
    foreign_words,
    sentences,
    words,
)
from wac.compiler.language import NAMES as LANGUAGE_NAMES
from wac.compiler.language import SUPPORTED, Foreign, code_for, foreign
from wac.compiler.language import name as language_name
from wac.compiler.lexicon import LEXICONS, Lexicon
from wac.compiler.names import check_names
from wac.compiler.spans import Span
from wac.compiler.textnorm import Trick, describe_tricks, mixed_script_words, normalise
from wac.taxonomy.registry import registry


def check_benign(
    built: Built, anomalies: tuple[N.Anomaly, ...], lowered: list[Lowered], diag: Collector
) -> None:
    benign = {b.object: b.reason for b in built.scene.benign}
    if not benign:
        return
    for a, low in zip(anomalies, lowered, strict=True):
        changed = list(dict.fromkeys([*low.targets, *(e.target for e in low.effects if e.target)]))
        for oid in changed:
            if oid not in benign:
                continue
            span = next((n.span for n in a.operand if n.text == oid), a.span)
            reason = f" ({benign[oid]})" if benign[oid] else ""
            diag.error(
                "E613",
                f"`{low.spec.name}` changes `{oid}`, which the scene marks `benign`{reason}",
                span,
                f"benign objects are excluded from evaluation, so a defect there is never scored; "
                f"pick another target or drop `benign {oid}` from the scene",
            )


def check_target_names(
    scene: N.SceneDecl,
    anomalies: tuple[N.Anomaly, ...],
    lowered: list[Lowered],
    built: Built,
    diag: Collector,
) -> None:
    """E545: every target has a name a correct report would use (`wac.compiler.names`), in the
    scene's language (an undeclared or unchecked one is E544's, reported with the give-aways)."""
    st = scene.body.setting("language")
    code = getattr(st.args[0], "text", "en") if st is not None and st.args else "en"
    check_names(anomalies, lowered, built, code if code in SUPPORTED else "en", diag)


def _targets(built: Built, lowered: list[Lowered], materials: dict[str, B.Material]) -> list[Target]:
    reg = registry()
    out = []
    for low in lowered:
        cat = reg.category(low.category)
        names: list[tuple[str, str]] = []
        clean: set[str] = set()
        for tid in low.targets:
            o = built.objects.get(tid) or next((n for n in low.new_objects if n.id == tid), None)
            if o is None:
                continue
            names += [(n, o.name) for n in (o.name, *o.synonyms, tid)]
            clean |= set(words(tid)) | set(words(o.prefab or "")) | set(words(o.kind))
            for p in o.parts:
                m = materials.get(p.material)
                clean |= set(words(p.material.split("~")[0]))
                if m is not None:
                    clean |= set(words(m.category))
        out.append(Target(tuple(names), tuple(low.spec.defect_terms + cat.defect_terms), frozenset(clean)))
    return out


def check_giveaway(
    task: N.TaskDecl,
    scene: N.SceneDecl,
    built: Built,
    lowered: list[Lowered],
    context: B.AgentContext,
    materials: dict[str, B.Material],
    diag: Collector,
) -> None:
    declared = declared_language(task, scene, diag)
    lang = declared.task
    check = _Checker(_targets(built, lowered, materials), *_new_names(built, lowered), diag)
    lex = LEXICONS.get(lang)
    if lex is not None:
        ftargets, fnew, uncovered = foreign_targets(lex, declared.scene, built, lowered, materials)
        check = dataclasses.replace(check, lexicon=lex, foreign=tuple(ftargets), foreign_new=tuple(fnew))
        for oid, name in uncovered:
            diag.error(
                "E544",
                f"the task declares `language {lang}`, but wac knows no {language_name(lang)} name for "
                f'`{oid}` ("{name}"): its give-aways cannot be checked in {language_name(lang)}',
                declared.span or task.span,
                f'give `{oid}` its {language_name(lang)} name as a synonym (`synonyms ["…"]`), '
                f"declare `language {lang}` in the scene and name its objects in {language_name(lang)}, "
                "or write the task in English",
            )
    desc = task.body.setting("description") or scene.body.setting("description")
    hint = task.body.setting("hint")
    names, ids = _vocabulary(built, scene, materials)
    texts = [
        ("the scene description", context.scene_description, False, desc.span if desc else task.span, lang)
    ]
    if hint is not None and context.hint:
        texts.append(("the hint", context.hint, False, hint.span, lang))
    elif lang != "en" and context.hint:
        diag.error(
            "E544",
            f"the task declares `language {lang}`, but its hint is the category's English name "
            f'("{context.hint}"), which the auditor reads',
            declared.span or task.span,
            f'give the task a `hint` in {language_name(lang)}, e.g. `hint "…"`',
        )
    # an interactive object's name reaches the agent through `interact` ("you try to use the …");
    # names belong to the scene, so they are in the scene's language
    for name in sorted({o.name for o in built.scene.objects if o.interactions}):
        decl = next(
            (built.things[o.id] for o in built.scene.objects if o.name == name and o.id in built.things), None
        )
        texts.append(
            ("an interactive object's name", name, True, decl.span if decl else task.span, declared.scene)
        )
    for where, text, whole, span, text_lang in texts:
        exempt = ids if whole else names | ids
        check.text(where, text, whole, span, text_lang, exempt)
    if (built.task_settings or {}).get("example", {}).get("flag"):
        return  # a demonstration is named for its category and shown as such
    _check_task_id(task, lowered, check, lang, names | ids | set(foreign_words(scene.name)), diag)


@dataclass(frozen=True)
class _Checker:
    """The give-away and language checks of one task's texts."""

    targets: list[Target]
    new: list[tuple[str, str]]
    clean: list[str]
    diag: Collector
    lexicon: Lexicon | None = None
    foreign: tuple[ForeignTarget, ...] = ()
    foreign_new: tuple[tuple[tuple[str, ...], str], ...] = ()

    def giveaways(self, where: str, text: str, whole: bool) -> list[Finding]:
        texts = [(where, text, whole)]
        found = find_giveaways(texts, self.targets) or find_new_names(texts, self.new, self.clean)
        if not found and self.lexicon is not None:
            c = self.lexicon.compounds
            found = find_foreign_giveaways(texts, self.foreign, c) or find_foreign_names(
                texts, self.foreign_new, c
            )
        return found

    def text(self, where: str, text: str, whole: bool, span: Span, lang: str, exempt: frozenset[str]) -> None:
        """E540 for a give-away (after normalisation), else E544 for mixed scripts or another language."""
        n = normalise(text)
        found = self.giveaways(where, n.skeleton, whole)
        if found:
            hidden = not self.giveaways(where, text, whole) and n.tricks
            for f in found:
                shown = _as_read(f.sentence, n, whole)
                note = f", written with {describe_tricks(_disguise(n.tricks, shown))}" if hidden else ""
                self.diag.error(
                    "E540", _message(dataclasses.replace(f, sentence=shown)) + note, span, _hint(f)
                )
            return
        mixed = mixed_script_words(n.text)
        if mixed:
            m = mixed[0]
            odd = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in m.odd[:3])
            self.diag.error(
                "E544",
                f'{where} mixes scripts inside one word: "{m.word}" has letters of '
                f"{' and '.join(s.title() for s in m.scripts)} ({odd})",
                span,
                f"the auditor reads {where}: retype the word in plain {language_name(lang)} letters; letters "
                "that only look alike hide words from readers and from the give-away check",
            )
            return
        f = foreign(n.text, lang, exempt)
        if f is not None:
            self.diag.error(
                "E544",
                f"{where} is not in {language_name(lang)}: {f.describe()}",
                span,
                _language_hint(f, lang),
            )


def _check_task_id(
    task: N.TaskDecl, lowered: list[Lowered], check: _Checker, lang: str, exempt: set[str], diag: Collector
) -> None:
    """W541 when the task id names target and defect (in English or the task's language) or the
    operator or a scene-wide defect; W546 when it is not in the task's language."""
    the_id = [("the task id", task.name, True)]
    found = check.giveaways(*the_id[0])
    for f in found:
        diag.warn("W541", _message(f), task_name_span(task), _hint(f))
    if found:
        return
    id_words = words(task.name)
    for low in lowered:  # an id may name the defect alone: `market_invisible_wall`, `factory_floor_hole`
        op = words(low.spec.name)
        if any(id_words[i : i + len(op)] == op for i in range(len(id_words) - len(op) + 1)):
            diag.warn(
                "W541",
                f'the task id gives the anomaly away: "{task.name}" names its operator ({low.spec.name})',
                task_name_span(task),
                "the auditor reads the task id: rename the task so that its id does not name the defect, "
                "or seal the build",
            )
            return
    reg = registry()
    scene_wide = [
        t
        for low in lowered
        if not low.targets
        for t in low.spec.defect_terms + reg.category(low.category).defect_terms
    ]
    found = find_terms(the_id, scene_wide)[:1]  # a scene-wide anomaly (no target) named by its defect
    for f in found:
        diag.warn("W541", _message(f), task_name_span(task), _hint(f))
    if found:
        return
    # an id in English is read by the English matcher whatever the task's language
    as_words = task.name.replace("_", " ")
    f = foreign(as_words, lang, frozenset(exempt))
    if f is not None and (lang == "en" or foreign(as_words, "en", frozenset(exempt)) is not None):
        diag.warn(
            "W546",
            f'the task id is not in {language_name(lang)}: "{task.name}": {f.describe()}',
            task_name_span(task),
            f"the auditor reads the task id: name the task in {language_name(lang)} words, or seal the build",
        )


def _disguise(tricks: tuple[Trick, ...], sentence: str) -> tuple[Trick, ...]:
    """The characters of the sentence that hid its give-away: accents only when nothing else did
    (honest in "café", a disguise in "flóating")."""
    here = tuple(t for t in tricks if t.char in sentence or t.why == "invisible character") or tricks
    return tuple(t for t in here if t.why != "accented letter") or here


def _as_read(sentence: str, n, whole: bool) -> str:
    """The sentence of the text as read that the skeleton's `sentence` comes from."""
    skel, read = sentences(n.skeleton, whole), sentences(n.text, whole)
    if len(skel) == len(read) and sentence in skel:
        return read[skel.index(sentence)]
    return sentence


def _language_hint(f: Foreign, lang: str) -> str:
    own = language_name(lang)
    if f.language is None:
        return (
            f"write it in {own}: a transliteration is no language the give-away check reads; a task in "
            "another language declares it (`language de`) and is written in that language's own script"
        )
    other = language_name(f.language)
    if f.language in SUPPORTED:
        return f"write it in {own}, or declare `language {f.language}` in the task and write all its text in {other}"
    checked = ", ".join(c for c in SUPPORTED)
    return (
        f"write it in {own}: wac checks give-aways in {checked} only, so a task cannot be written in {other}"
    )


def declared_language(task: N.TaskDecl, scene: N.SceneDecl, diag: Collector) -> Declared:
    """The language of the task's text and of the scene's names (`language`; default `en`)."""
    scene_st, task_st = scene.body.setting("language"), task.body.setting("language")
    scene_lang = _language(scene_st, diag) or "en"
    task_lang = _language(task_st, diag) if task_st is not None else scene_lang
    return Declared(
        task_lang or "en", scene_lang, (task_st or scene_st).span if task_st or scene_st else None
    )


@dataclass(frozen=True, slots=True)
class Declared:
    task: str  # the language of the task's text
    scene: str  # the language of the scene's description and names
    span: Span | None  # the statement that declares the task's language (None: the default)


def _language(st: N.Setting | None, diag: Collector) -> str | None:
    """The declared code, or None (with E544) when wac cannot check text in it."""
    if st is None or not st.args:
        return None
    word = st.args[0]
    code = getattr(word, "text", None) or getattr(word, "value", "")
    span = getattr(word, "span", st.span)
    if code not in LANGUAGE_NAMES:
        meant = code_for(code)
        diag.error(
            "E544",
            f"`{code}` is not an ISO 639-1 language code",
            span,
            f"write `language {meant}`" if meant else "write a two-letter ISO 639-1 code, e.g. `language en`",
        )
        return None
    if code not in SUPPORTED:
        checked = ", ".join(c for c in SUPPORTED)
        diag.error(
            "E544",
            f"wac cannot check give-aways in {language_name(code)}: a task declared `language {code}` "
            "could name its anomaly unchecked",
            span,
            f"write the task in a language wac checks: {checked}",
        )
        return None
    return code


def _vocabulary(
    built: Built, scene: N.SceneDecl, materials: dict[str, B.Material]
) -> tuple[frozenset[str], frozenset[str]]:
    """The scene's own words, which the language check does not count: (names and synonyms, ids,
    prefab and material names).  The same for every task of a scene but for the task's own objects."""
    local = tuple((o, built.objects[o].name, built.objects[o].synonyms) for o in sorted(built.task_local))
    # the cached key holds the scene declaration, so its id is not reused while the entry lives
    return _vocabulary_of(_Keyed((id(scene), scene.name, local, tuple(materials)), (built, scene)))


@dataclass(frozen=True)
class _Keyed:
    """A value that caches by its key alone."""

    key: tuple
    value: tuple = dataclasses.field(compare=False, hash=False)


@lru_cache(maxsize=64)
def _vocabulary_of(keyed: _Keyed) -> tuple[frozenset[str], frozenset[str]]:
    built: Built = keyed.value[0]  # type: ignore[index]
    names: set[str] = set()
    ids: set[str] = set(foreign_words(keyed.key[1]))
    for o in built.objects.values():
        for n in (o.name, *o.synonyms):
            names.update(foreign_words(n))
        ids.update(foreign_words(o.id))
        ids.update(foreign_words(o.prefab or ""))
    for m in keyed.key[3]:
        ids.update(foreign_words(m.split("~")[0]))
    return frozenset(names), frozenset(ids)


def _new_names(built: Built, lowered: list[Lowered]) -> tuple[list[tuple[str, str]], list[str]]:
    """Names of the objects only the perturbed world has, and what the clean scene's objects are
    called (names, synonyms, prefab kinds)."""
    new = [(n, o.name) for low in lowered for o in low.new_objects for n in (o.name, *o.synonyms, o.id)]
    clean = [n for o in built.objects.values() for n in (o.name, *o.synonyms, o.prefab or "", o.kind) if n]
    return new, clean


def _message(f: Finding) -> str:
    if not f.term:
        return f'{f.where} gives the anomaly away: "{f.sentence}" names {f.name}, which only the faulty world has'
    if not f.name:
        return f'{f.where} gives the anomaly away: "{f.sentence}" names the defect ({f.term}) of a scene-wide anomaly'
    return f'{f.where} gives the anomaly away: "{f.sentence}" names the target ({f.name}) and its defect ({f.term})'


_FIXES = {
    "the scene description": "describe the scene without saying what is wrong with the {name}",
    "the hint": "hint at the kind of defect without naming the {name}",
    "an interactive object's name": "name the object for what it is, not for its defect",
    "the task id": "rename the task so that its id does not name both the {name} and its defect, or seal the build",
}


def _hint(f: Finding) -> str:
    f = dataclasses.replace(f, name=f.name.split(', as "')[0])  # the target, not its translation
    if not f.name:
        return f"the auditor reads {f.where}: name the place, not what goes wrong in it"
    if not f.term:
        return f"the auditor reads {f.where}: leave out the {f.name}, which the clean scene does not have"
    return f"the auditor reads {f.where}: " + _FIXES[f.where].format(name=f.name)


def task_name_span(task: N.TaskDecl) -> Span:
    sp = task.span
    line = sp.source.line(sp.line)
    m = re.compile(rf"task\s+({re.escape(task.name)})\b").search(line, sp.column - 1)
    if m is None:
        return sp
    return Span(sp.source, sp.line, m.start(1) + 1, sp.line, m.end(1) + 1)
