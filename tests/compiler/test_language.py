"""Agent-visible text after normalisation, in the declared language; names a report would use
(issue 27, families 3 and 4: `textnorm`, `language`, `lexicon`, `names`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wac.bundle import model as B
from wac.compiler.giveaway import Target, find_foreign_giveaways, find_giveaways, head_noun, stem, stems
from wac.compiler.language import SUPPORTED, code_for, foreign
from wac.compiler.lexicon import LEXICONS
from wac.compiler.names import conflicting_prefab, problem, standard_prefabs
from wac.compiler.textnorm import mixed_script_words, normalise
from wac.taxonomy.registry import registry

ROOT = Path(__file__).resolve().parents[2]

CRATE = Target(names=(("crate", "crate"),), terms=("floating", "hovering", "mid-air"))

# -- the normaliser: each trick that hides "the floating crate" from a plain word matcher -----------

TRICKS = {
    "Cyrillic о": "the fl\u043eating crate",
    "Greek omicron, capitals": "THE FL\u039fATING CRATE",
    "fullwidth letters": "the \uff46\uff4c\uff4f\uff41\uff54\uff49\uff4e\uff47 crate",
    "mathematical bold": "the \U0001d41f\U0001d425\U0001d428\U0001d41a\U0001d42d\U0001d422\U0001d427\U0001d420 crate",
    "zero-width joiner": "the flo\u200dating crate",
    "zero-width space": "the fl\u200boating cr\u200bate",
    "soft hyphen": "the flo\u00adating crate",
    "combining mark": "the flo\u0301ating crate",
    "combining mark on a consonant": "the f\u0301loating crate",
    "dotless i": "the crate is mid-a\u0131r",
    "digit zero": "the fl0ating crate",
    "word joiner and bidi mark": "the flo\u2060ating\u200e crate",
}


@pytest.mark.parametrize("text", TRICKS.values(), ids=TRICKS.keys())
def test_each_trick_is_undone_and_the_giveaway_found(text):
    assert not find_giveaways([("the hint", text, False)], [CRATE]), "the trick should fool a plain matcher"
    n = normalise(text)
    assert n.skeleton.lower() in ("the floating crate", "the crate is mid-air")
    assert n.tricks, "what was undone is listed for the message"
    (f,) = find_giveaways([("the hint", n.skeleton, False)], [CRATE])
    assert f.name == "crate" and f.term in ("floating", "mid-air")


def test_the_trick_is_named():
    (t,) = normalise("the fl\u043eating crate").tricks
    assert t.describe() == 'a look-alike letter U+043E CYRILLIC SMALL LETTER O (reads as "o")'
    (t,) = normalise("cra\u200bte").tricks
    assert t.describe() == "an invisible character U+200B ZERO WIDTH SPACE"


def test_honest_accents_are_folded_for_the_matcher_and_kept_as_read():
    n = normalise("A café with a naïve mural; Größe")
    assert n.skeleton == "A cafe with a naive mural; Große"  # ß has no ASCII look-alike
    assert n.text == "A café with a naïve mural; Größe"


def test_a_word_that_mixes_scripts_is_found():
    (m,) = mixed_script_words(normalise("look at the fl\u043eating crate").text)
    assert m.word == "fl\u043eating" and m.scripts == ("CYRILLIC", "LATIN") and m.odd == ("\u043e",)
    (m,) = mixed_script_words("\u0391IR")  # Greek capital alpha before Latin
    assert "GREEK" in m.scripts


@pytest.mark.parametrize("text", ["a café", "日本語のテキスト", "한국어 漢字", "плавающий ящик", "100 m²"])
def test_words_of_one_script_or_of_scripts_used_together_are_not_mixed(text):
    assert mixed_script_words(normalise(text).text) == []


# -- the language rule ------------------------------------------------------------------------------

FOREIGN = {
    "der schwebende Sack": "de",
    "Ein Fass schwebt über dem Boden": "de",
    "la caisse flottante": "fr",
    "Une caisse flotte dans les airs": "fr",
    "El saco flotante": "es",
    "la cassa galleggia": "it",
    "de kist zweeft": "nl",
    "skrzynia unosi się": "pl",
}


@pytest.mark.parametrize("text, lang", FOREIGN.items())
def test_a_sentence_in_another_language_is_named(text, lang):
    f = foreign(normalise(text).text, "en")
    assert f is not None and f.language == lang and f.script is None


@pytest.mark.parametrize("text", ["plavayushchiy yashchik", "bochka visit v vozdukhe", "piaofu de xiangzi"])
def test_a_transliteration_is_no_language(text):
    f = foreign(normalise(text).text, "en")
    assert f is not None and f.language is None
    assert "transliteration" in f.describe()


@pytest.mark.parametrize(
    "text, lang, script",
    [("浮いている箱", "ja", "HAN, HIRAGANA"), ("плавающий ящик", "ru", "CYRILLIC"), ("κουτί", "el", "GREEK")],
)
def test_another_script_names_its_language_even_in_one_word(text, lang, script):
    f = foreign(normalise(text).text, "en")
    assert f is not None and (f.language, f.script) == (lang, script)


SHORT_ENGLISH = [
    "crate",
    "hay bale",
    "bin door",  # "bin" is also German, "door" Dutch: two languages, neither
    "Missing support / floating",
    "Something here is not as it should be.",
    "a piazza with a loggia and a fiesta stall",
    "A small café terrace with a table and chairs.",
    "platform bin pair",
    "ute",
    "Look at the trebuchet",
]


@pytest.mark.parametrize("text", SHORT_ENGLISH)
def test_short_english_texts_pass(text):
    assert foreign(normalise(text).text, "en") is None


def test_the_scenes_own_words_are_not_counted():
    assert foreign("the yashchik kotelok", "en") is not None
    assert foreign("the yashchik kotelok", "en", frozenset({"yashchik", "kotelok"})) is None


def test_a_declared_language_is_held_to_its_own_words():
    assert foreign("Eine kleine Terrasse mit einem Tisch und zwei Stühlen.", "de") is None
    f = foreign("A small terrace with a table and two chairs.", "de")
    assert f is not None and f.language == "en"


def _shipped_texts() -> list[str]:
    """Every description and hint the shipped sources write, and every task id as words."""
    out = []
    for path in sorted((ROOT / "tasks_src").rglob("*.wa")) + sorted(
        (ROOT / "taxonomy/examples").rglob("*.wa")
    ):
        text = path.read_text(encoding="utf-8")
        out += re.findall(r'^\s*(?:description|hint)\s+"([^"]*)"', text, flags=re.M)
        out += [t.replace("_", " ") for t in re.findall(r"^task (\w+)", text, flags=re.M)]
    return out


def test_no_shipped_text_is_taken_for_another_language():
    texts = _shipped_texts()
    assert len(texts) > 300
    flagged = [(t, f.describe()) for t in texts if (f := foreign(normalise(t).text, "en"))]
    assert flagged == []


@pytest.mark.parametrize("lang, large", [("en", True), ("de", True), ("fr", False), ("pt", False)])
def test_word_lists_read_directly_agree_with_wordfreq(lang, large):
    from wordfreq import zipf_frequency

    from wac.compiler.language import zipf

    for w in ("the", "crate", "samovar", "der", "schwebende", "caisse", "über", "säcke", "zorblax"):
        assert zipf(w, lang, large) == pytest.approx(
            zipf_frequency(w, lang, wordlist="best" if large else "small"), abs=0.011
        )


def test_language_codes_and_names():
    assert code_for("German") == "de" and code_for("deutsch") == "de" and code_for("en") == "en"
    assert code_for("Klingon") is None
    assert set(LEXICONS) == set(SUPPORTED) - {"en"}


# -- the lexicon -----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(LEXICONS))
def test_every_category_has_terms_in_every_language(code):
    lex = LEXICONS[code]
    missing = [c.id.value for c in registry().categories if not lex.terms.get(c.id.value)]
    assert missing == []
    assert set(lex.terms) <= {c.id.value for c in registry().categories}


@pytest.mark.parametrize("code", sorted(LEXICONS))
def test_lexicon_entries_are_written_as_the_matcher_reads_them(code):
    lex = LEXICONS[code]
    entries = [e for table in (lex.terms, lex.materials, lex.nouns) for es in table.values() for e in es]
    bad = [e for e in entries if " ".join(stems(e)) != e]
    assert bad == [], "lower-case, no accents, words separated by single spaces"


@pytest.mark.parametrize("code", sorted(LEXICONS))
def test_every_standard_prefab_has_a_noun_in_every_language(code):
    nouns = {stem(k) for k in LEXICONS[code].nouns}
    missing = [pid for pid, p in standard_prefabs().items() if stem(head_noun(p.name)) not in nouns]
    assert missing == []


@pytest.mark.parametrize(
    "code, text, name",
    [
        ("de", "Die Holzkiste schwebt", 'crate, as "kiste"'),
        ("de", "Eine Kiste frei in der Luft", 'crate, as "kiste"'),
        ("fr", "La caisse flotte au-dessus du sol", 'crate, as "caisse"'),
        ("es", "Una caja flota en el aire", 'crate, as "caja"'),
    ],
)
def test_a_giveaway_in_a_declared_language_is_found(code, text, name):
    from wac.compiler.giveaway import ForeignTarget

    lex = LEXICONS[code]
    noun = lex.nouns["crate"][0]
    target = ForeignTarget(
        names=((stems(noun), name),), terms=tuple((stems(t), t) for t in lex.terms["missing_support"])
    )
    (f,) = find_foreign_giveaways([("the hint", normalise(text).skeleton, False)], [target], lex.compounds)
    assert f.name == name
    neutral = {
        "de": "Ein glücklicher Hof mit Kisten",
        "fr": "Une cour avec des caisses",
        "es": "Un patio con cajas",
    }
    assert not find_foreign_giveaways([("the hint", neutral[code], False)], [target], lex.compounds)


# -- names a report would use ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, derived, why",
    [
        ("crate_3", False, "written like an id"),
        ("box 2", False, "written like an id"),
        ("crate3", False, "written like an id"),
        ("grainSack", False, "written like an id"),
        ("stool a", False, "written like an id"),
        ("prop", False, "placeholder"),
        ("red prop", False, "placeholder"),
        ("thing", True, "placeholder"),
        ("model", False, "placeholder"),
        ("box", True, 'its shape, "box"'),
        ("mesh", True, "its shape"),
        ("b", True, "names no thing"),
        ("zorblax crate", False, '"zorblax" is not an English word'),
        ("barel", False, 'misspelling of "barrel"'),
    ],
)
def test_names_no_report_would_use(name, derived, why):
    assert why in (problem(name, derived) or "")


@pytest.mark.parametrize(
    "name, derived",
    [
        ("wall", True),  # a bare box whose id says what it is
        ("box", False),  # written by the author: it looks like a box
        ("samovar", False),
        ("quadrat", False),
        ("windsock", False),
        ("ship model", False),
        ("archery target", False),
        ("gas cylinder", False),
        ("ranger's four-wheel drive", False),
        ("kids' table", False),
        ("iPhone", False),
        ("bollard", False),
        ("flowerpot", False),
    ],
)
def test_real_names_pass(name, derived):
    assert problem(name, derived) is None


def _instance(prefab: str, name: str) -> B.SceneObject:
    return B.SceneObject.model_construct(id="x_1", name=name, prefab=prefab, synonyms=())


@pytest.mark.parametrize(
    "prefab, name, other",
    [
        ("barrel", "crate", "crate"),
        ("car", "bench", "bench"),
        ("bench", "crate", "crate"),
        ("barrel", "wine barrel", None),
        ("barrel", "cask", None),
        ("crate", "box", None),  # a synonym of its own
        ("chair", "stool", None),  # both a "seat"
        ("oil_drum", "barrel", None),  # an oil drum is also a "barrel"
        ("workbench", "bench", None),
        ("barrel", "rain butt", None),  # no standard prefab's name
    ],
)
def test_an_instance_named_as_another_standard_prefab(prefab, name, other):
    assert conflicting_prefab(_instance(prefab, name)) == other
