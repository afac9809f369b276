"""The language agent-visible text is written in (pass 6b: E544, W546).

A task declares its language (`language de`; default `en`), and what the auditor reads must be
written in it: a hint in German in an English task hides its give-away from the English matcher.

Character n-gram detectors fail on the short texts tasks are made of ("crate" reads as Romanian,
"plavayushchiy yashchik" as Uzbek), so the rule asks a question about each *word* instead, against
the word frequencies of the `wordfreq` package (offline data, the same answer on every machine):

* a word is **foreign** when another Latin-script language uses it at least `MARGIN` (1.5 Zipf
  units, 30x) more often than the declared one ("der", "caisse", "flottante" against English);
* a word is **unknown** when the declared language's large word list lacks it altogether
  ("plavayushchiy": a transliteration, a made-up or misspelt word).

Foreign words are looked for in the languages whose short words English lists too (`DECIDING`:
"der", "la", "el", "de"); a word of a rarer language is unknown in English anyway.  Single
letters, numbers and the scene's own vocabulary (object ids, names, synonyms, prefab and material
names) are not counted.

A text is not in the declared language when at least two of its words are unknown or foreign for
one and the same other language, and they are more than half of its words: "der schwebende Sack"
(2 of 3), "la caisse flottante" (3 of 3) and "plavayushchiy yashchik" (2 of 2) are caught, while a
short English id, name or hint is not ("hay bale", "Missing support / floating", "a piazza with a
loggia and a fiesta stall"; "bin" is a German word and "door" a Dutch one, so "bin door" is
neither).  The language named is the one most of those words belong to; when more of
them are unknown everywhere than belong to any language, the text reads as a transliteration.

A word in a script the declared language does not use (Cyrillic, Han, kana, …) makes the text
foreign whatever its length; its script names the language.
"""

from __future__ import annotations

import gzip
import importlib.util
import math
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import msgpack

from wac.compiler.textnorm import letter_words, word_scripts

MARGIN = 1.5  # Zipf units a foreign language must lead the declared one by, for one word
# Languages whose give-aways wac checks (compiler/lexicon.py holds their terms and nouns).
SUPPORTED = ("en", "de", "fr", "es")
# The languages a word of the declared one is tested against (the common sources of words that
# English also writes: "der", "la", "el"); a word of a rarer language is unknown in English anyway.
DECIDING = ("de", "en", "es", "fr", "it", "nl", "pt")
# The Latin-script languages wordfreq has word lists for: what a foreign text may be written in.
LATIN_CANDIDATES = (
    "ca", "cs", "da", "de", "en", "es", "fi", "fr", "hu", "id", "is", "it", "lt", "lv",
    "ms", "nb", "nl", "pl", "pt", "ro", "sk", "sl", "sv", "tr", "vi",
)  # fmt: skip
SCRIPTS_OF = {"en": {"LATIN"}, "de": {"LATIN"}, "fr": {"LATIN"}, "es": {"LATIN"}}
# The language a script says a text is in, where one script is one language (or its main one).
SCRIPT_LANGUAGE = {
    "HIRAGANA": "ja",
    "KATAKANA": "ja",
    "HANGUL": "ko",
    "HAN": "zh",
    "GREEK": "el",
    "HEBREW": "he",
    "THAI": "th",
    "GEORGIAN": "ka",
    "ARMENIAN": "hy",
    "BENGALI": "bn",
    "TAMIL": "ta",
    "DEVANAGARI": "hi",
    "ETHIOPIC": "am",
    "KHMER": "km",
}
SCRIPT_CANDIDATES = {"CYRILLIC": ("ru", "uk", "bg", "mk"), "ARABIC": ("ar", "fa", "ur")}

# ISO 639-1: every code, with its English name.
_ISO = (
    "aa:Afar ab:Abkhazian ae:Avestan af:Afrikaans ak:Akan am:Amharic an:Aragonese ar:Arabic "
    "as:Assamese av:Avaric ay:Aymara az:Azerbaijani ba:Bashkir be:Belarusian bg:Bulgarian "
    "bi:Bislama bm:Bambara bn:Bengali bo:Tibetan br:Breton bs:Bosnian ca:Catalan ce:Chechen "
    "ch:Chamorro co:Corsican cr:Cree cs:Czech cu:Church_Slavic cv:Chuvash cy:Welsh da:Danish "
    "de:German dv:Divehi dz:Dzongkha ee:Ewe el:Greek en:English eo:Esperanto es:Spanish "
    "et:Estonian eu:Basque fa:Persian ff:Fulah fi:Finnish fj:Fijian fo:Faroese fr:French "
    "fy:Western_Frisian ga:Irish gd:Scottish_Gaelic gl:Galician gn:Guarani gu:Gujarati gv:Manx "
    "ha:Hausa he:Hebrew hi:Hindi ho:Hiri_Motu hr:Croatian ht:Haitian hu:Hungarian hy:Armenian "
    "hz:Herero ia:Interlingua id:Indonesian ie:Interlingue ig:Igbo ii:Sichuan_Yi ik:Inupiaq "
    "io:Ido is:Icelandic it:Italian iu:Inuktitut ja:Japanese jv:Javanese ka:Georgian kg:Kongo "
    "ki:Kikuyu kj:Kuanyama kk:Kazakh kl:Kalaallisut km:Khmer kn:Kannada ko:Korean kr:Kanuri "
    "ks:Kashmiri ku:Kurdish kv:Komi kw:Cornish ky:Kyrgyz la:Latin lb:Luxembourgish lg:Ganda "
    "li:Limburgish ln:Lingala lo:Lao lt:Lithuanian lu:Luba-Katanga lv:Latvian mg:Malagasy "
    "mh:Marshallese mi:Maori mk:Macedonian ml:Malayalam mn:Mongolian mr:Marathi ms:Malay "
    "mt:Maltese my:Burmese na:Nauru nb:Norwegian_Bokmal nd:North_Ndebele ne:Nepali ng:Ndonga "
    "nl:Dutch nn:Norwegian_Nynorsk no:Norwegian nr:South_Ndebele nv:Navajo ny:Chichewa "
    "oc:Occitan oj:Ojibwa om:Oromo or:Oriya os:Ossetian pa:Punjabi pi:Pali pl:Polish ps:Pashto "
    "pt:Portuguese qu:Quechua rm:Romansh rn:Rundi ro:Romanian ru:Russian rw:Kinyarwanda "
    "sa:Sanskrit sc:Sardinian sd:Sindhi se:Northern_Sami sg:Sango si:Sinhala sk:Slovak "
    "sl:Slovenian sm:Samoan sn:Shona so:Somali sq:Albanian sr:Serbian ss:Swati st:Southern_Sotho "
    "su:Sundanese sv:Swedish sw:Swahili ta:Tamil te:Telugu tg:Tajik th:Thai ti:Tigrinya "
    "tk:Turkmen tl:Tagalog tn:Tswana to:Tonga tr:Turkish ts:Tsonga tt:Tatar tw:Twi ty:Tahitian "
    "ug:Uyghur uk:Ukrainian ur:Urdu uz:Uzbek ve:Venda vi:Vietnamese vo:Volapuk wa:Walloon "
    "wo:Wolof xh:Xhosa yi:Yiddish yo:Yoruba za:Zhuang zh:Chinese zu:Zulu"
)
NAMES = {k: v.replace("_", " ") for k, v in (pair.split(":") for pair in _ISO.split())}


def name(code: str) -> str:
    return NAMES.get(code, code)


def code_for(word: str) -> str | None:
    """The ISO 639-1 code a written language name or code stands for (`German`, `deutsch` -> de)."""
    w = word.lower()
    if w in NAMES:
        return w
    by_name = {v.lower(): k for k, v in NAMES.items()}
    return by_name.get(w) or _OTHER_SPELLINGS.get(w)


# Native names and ISO 639-2/3 codes of the supported languages, for "did you mean `language de`".
_OTHER_SPELLINGS = {
    "deutsch": "de",
    "francais": "fr",
    "français": "fr",
    "espanol": "es",
    "español": "es",
    "castellano": "es",
    "eng": "en",
    "ger": "de",
    "deu": "de",
    "fra": "fr",
    "fre": "fr",
    "spa": "es",
}


@lru_cache(maxsize=1 << 16)
def zipf(word: str, lang: str, large: bool = False) -> float:
    """How common `word` (lower-case) is in `lang`: Zipf scale, 0 = not in the list, 7 = "the"."""
    return _zipfs(lang, large).get(unicodedata.normalize("NFC", word.casefold()), 0.0)


@lru_cache(maxsize=64)
def _zipfs(lang: str, large: bool) -> dict[str, float]:
    """wordfreq's list for `lang` as {word: Zipf}: the large list where the language has one and
    `large` is asked for (rarer words), else the small one.  Read straight from the package's data
    files in their documented cBpack format (`wordfreq.read_cBpack`): importing `wordfreq` itself
    costs 0.3 s a process for code the check does not use."""
    path = _data_file(lang, large)
    packed = None
    if path is not None:
        with gzip.open(path, "rb") as f:
            packed = msgpack.load(f, raw=False)
    header = packed[0] if packed else None
    if not isinstance(header, dict) or header.get("format") != "cB" or header.get("version") != 1:
        from wordfreq import get_frequency_dict  # another layout: the same lists through the API

        freqs = get_frequency_dict(lang, "best" if large else "small")
        return {w: round(math.log10(f) + 9, 2) for w, f in freqs.items()}
    out: dict[str, float] = {}
    for i, bucket in enumerate(packed[1:]):  # bucket i: the words of frequency 10 ** (-i / 100)
        out.update(dict.fromkeys(bucket, round(9 - i / 100, 2)))
    return out


def _data_file(lang: str, large: bool) -> Path | None:
    spec = importlib.util.find_spec("wordfreq")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(spec.submodule_search_locations[0]) / "data"
    names = ([f"large_{lang}.msgpack.gz"] if large else []) + [f"small_{lang}.msgpack.gz"]
    return next((data / n for n in names if (data / n).is_file()), None)


@dataclass(frozen=True, slots=True)
class Foreign:
    """Why a text is not in the declared language."""

    language: str | None  # the ISO code it reads as; None: no language wac knows (a transliteration)
    words: tuple[str, ...]  # the words that show it
    script: str | None = None  # a script the declared language does not write in

    def describe(self) -> str:
        quoted = ", ".join(f'"{w}"' for w in self.words[:4])
        if self.script is not None:
            lang = f" ({name(self.language)})" if self.language else ""
            return f"{quoted} {'is' if len(self.words) == 1 else 'are'} written in {self.script.title()} script{lang}"
        if self.language is None:
            return f"{quoted} are no words of any language wac knows (a transliteration?)"
        return f"it reads as {name(self.language)} ({quoted})"


def foreign(text: str, declared: str, exempt: frozenset[str] = frozenset()) -> Foreign | None:
    """Why `text` (as read: `textnorm.normalise(...).text`) is not in `declared`, or None."""
    words = [w.casefold() for w in letter_words(text)]
    own = SCRIPTS_OF.get(declared, {"LATIN"})
    odd = [w for w in words if word_scripts(w) - own]
    if odd:
        return _other_script(odd)
    counted = [w for w in words if len(w) >= 2 and w not in exempt]
    if len(counted) < 2:
        return None
    verdicts = {w: _word(w, declared) for w in dict.fromkeys(counted)}
    # the words of one other language (the one most of them are from), and words of none
    langs = sorted({lang for v in verdicts.values() for lang in v or ()})
    other = max(langs, key=lambda lang: sum(1 for w in counted if lang in (verdicts[w] or ())), default=None)
    not_ours = [
        w for w in counted if verdicts[w] == () or (other is not None and other in (verdicts[w] or ()))
    ]
    if len(not_ours) < 2 or 2 * len(not_ours) <= len(counted):
        return None
    words = list(dict.fromkeys(not_ours))
    return Foreign(_language_of(words, declared), tuple(words))


def _language_of(words: list[str], declared: str) -> str | None:
    """The language most of `words` belong to; None when more of them belong to none."""
    langs = {
        w: tuple(
            lang
            for lang in LATIN_CANDIDATES
            if lang != declared and zipf(w, lang) - zipf(w, declared, large=True) >= MARGIN
        )
        for w in words
    }
    support = _support(langs)
    # a rarer word is missing from the small lists: look for it in the leading languages' large ones
    leaders = sorted(support, key=lambda lang: (-support[lang], lang))[:3]
    for w in words:
        if not langs[w]:
            langs[w] = tuple(lang for lang in leaders if zipf(w, lang, large=True) > 0)
    support = _support(langs)
    if not support:
        return None
    best = min(support, key=lambda lang: (-support[lang], -sum(zipf(w, lang) for w in words), lang))
    nowhere = sum(1 for w in words if not langs[w])
    return best if support[best] > nowhere else None


def _support(langs: dict[str, tuple[str, ...]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ls in langs.values():
        for lang in ls:
            out[lang] = out.get(lang, 0) + 1
    return out


@lru_cache(maxsize=1 << 15)
def _word(word: str, declared: str) -> tuple[str, ...] | None:
    """None for a word of `declared`; else the languages that use it far more (() for none)."""
    ours = zipf(word, declared, large=True)
    others = tuple(lang for lang in DECIDING if lang != declared and zipf(word, lang) - ours >= MARGIN)
    if others:
        return others
    return () if ours == 0 else None


def _other_script(words: list[str]) -> Foreign:
    scripts = sorted({s for w in words for s in word_scripts(w)} - {"LATIN"})
    lang = next((SCRIPT_LANGUAGE[s] for s in ("HIRAGANA", "KATAKANA", "HANGUL") if s in scripts), None)
    if lang is None:
        for s in scripts:
            if s in SCRIPT_CANDIDATES:
                cands = SCRIPT_CANDIDATES[s]
                lang = max(cands, key=lambda c: (sum(zipf(w, c) for w in words), -cands.index(c)))
                break
            if s in SCRIPT_LANGUAGE:
                lang = SCRIPT_LANGUAGE[s]
                break
    return Foreign(lang, tuple(dict.fromkeys(words)), ", ".join(scripts))
