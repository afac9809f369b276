"""Agent-visible text normalised before the give-away and language checks (pass 6b).

A sentence can name a target and its defect so that a reader sees the words and a plain word
matcher does not: a Cyrillic "о" inside "floating", a Greek "Α", fullwidth or mathematical
letters, a zero-width joiner or soft hyphen inside a word, a combining mark on a letter, a digit
zero for an "o".  `normalise` undoes each of these the way Unicode says a reader perceives them:

1. NFKC (UAX #15): compatibility forms become their plain letters (fullwidth "ｆ", mathematical
   "𝐟", ligature "ﬁ", superscripts).
2. Default-ignorable and format characters (Unicode's Default_Ignorable_Code_Point and category
   Cf: zero-width spaces and joiners, soft hyphens, bidi controls, variation selectors) are dropped.
   Steps 1-2 give `Normalised.text`, the text as read, which the language check reads.
3. A letter with combining marks becomes its base letter where that base is ASCII ("é" -> "e").
4. A non-ASCII letter that Unicode TR39's confusables table maps to one ASCII letter becomes that
   letter (Cyrillic "о" -> "o", Greek "Α" -> "A", dotless "ı" -> "i"); the table comes from the
   `confusable-homoglyphs` package, which ships TR39's data.
5. A `0` or `1` between letters becomes `o` or `l` (their TR39 prototypes): "fl0ating".
   Steps 1-5 give `Normalised.skeleton`, which the give-away matcher reads.

`Normalised.tricks` lists every character these steps changed; a message shows them only where a
give-away needed them to be found (an accent is honest in "café" and a disguise in "flóating").  `mixed_script_words` finds words
that mix scripts (Latin with Cyrillic or Greek letters), which no honest text does.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from confusable_homoglyphs import categories as _scripts
from confusable_homoglyphs import confusables as _confusables

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties.txt) beyond category Cf.
_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Scripts that one word may honestly combine (TR39's "highly restrictive" sets): Japanese writes
# Han with kana, Korean Han with Hangul, Chinese Han with Bopomofo.
_TOGETHER = (
    frozenset({"HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"HAN", "HANGUL"}),
    frozenset({"HAN", "BOPOMOFO"}),
)
_NEUTRAL = frozenset({"COMMON", "INHERITED", "Unknown"})
_LATIN = frozenset({"LATIN"})
_DIGIT_IN_WORD = re.compile(r"(?<=[A-Za-z])[01](?=[A-Za-z])")
_ASCII_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True, slots=True)
class Trick:
    """One character a reader does not see as written: what it is and what it reads as."""

    char: str
    reads_as: str  # "" for a dropped character
    why: str  # "invisible character", "compatibility form", "accented letter", "combining mark",
    # "look-alike letter", "digit"

    def describe(self) -> str:
        name = unicodedata.name(self.char, f"U+{ord(self.char):04X}")
        code = f"U+{ord(self.char):04X} {name}"
        article = "an" if self.why[0] in "aeiou" else "a"
        if not self.reads_as:
            return f"{article} {self.why} {code}"
        return f'{article} {self.why} {code} (reads as "{self.reads_as}")'


@dataclass(frozen=True, slots=True)
class Normalised:
    text: str  # NFKC, without ignorable and format characters: the text as a reader reads it
    skeleton: str  # also folded to ASCII letters where a reader would see them
    tricks: tuple[Trick, ...]  # what was undone that honest text does not need


@dataclass(frozen=True, slots=True)
class MixedWord:
    word: str
    scripts: tuple[str, ...]  # e.g. ("CYRILLIC", "LATIN")
    odd: tuple[str, ...]  # the letters of the word's minority scripts


def ignorable(ch: str) -> bool:
    if unicodedata.category(ch) == "Cf":
        return True
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _IGNORABLE_RANGES)


@lru_cache(maxsize=4096)
def script(ch: str) -> str:
    """The Unicode script of a character (`LATIN`, `CYRILLIC`, `HAN`, `COMMON`, …)."""
    return _scripts.alias(ch)


@lru_cache(maxsize=4096)
def _ascii_look_alike(ch: str) -> str | None:
    """The one ASCII letter TR39 says `ch` is confusable with, if any."""
    found = _confusables.is_confusable(ch, preferred_aliases=[])
    for entry in found or ():
        for glyph in entry["homoglyphs"]:
            c = glyph["c"]
            if len(c) == 1 and c.isascii() and c.isalpha():
                return c
    return None


def _fold_marks(ch: str) -> tuple[str, bool]:
    """(`ch` without its combining marks where the base is ASCII, whether it had any)."""
    parts = unicodedata.normalize("NFD", ch)
    base = "".join(c for c in parts if not unicodedata.combining(c))
    if base.isascii() and base:
        return base, base != ch
    return ch, False


@lru_cache(maxsize=1 << 14)
def normalise(text: str) -> Normalised:
    """`text` as read (`text`) and as its ASCII skeleton (`skeleton`), with what was undone."""
    tricks: dict[str, Trick] = {}
    if text.isascii():  # most text: nothing to fold but a digit for a letter
        return _digits(text, text, tricks)
    kept = []
    for ch in text:
        if ignorable(ch):
            tricks.setdefault(ch, Trick(ch, "", "invisible character"))
        else:
            kept.append(ch)
    raw = "".join(kept)
    for ch in dict.fromkeys(raw):
        if unicodedata.category(ch)[0] in "LN" and not ch.isascii():
            plain = unicodedata.normalize("NFKC", ch)
            if plain != ch and plain.isascii() and plain.isalnum():
                tricks.setdefault(ch, Trick(ch, plain, "compatibility form"))
    read = "".join(c for c in unicodedata.normalize("NFKC", raw) if not ignorable(c))
    read = unicodedata.normalize("NFC", read)
    out = []
    for ch in read:
        if ch.isascii():
            out.append(ch)
            continue
        if unicodedata.combining(ch):  # a mark left over: no precomposed letter carries it
            tricks.setdefault(ch, Trick(ch, "", "combining mark"))
            continue
        folded, had_marks = _fold_marks(ch)
        if had_marks:  # honest in "café", a disguise in "flóating": listed, shown only for a give-away
            tricks.setdefault(ch, Trick(ch, folded, "accented letter"))
            out.append(folded)
            continue
        look = _ascii_look_alike(ch) if ch.isalpha() else None
        if look is not None:
            tricks.setdefault(ch, Trick(ch, look, "look-alike letter"))
            out.append(look)
            continue
        out.append(ch)
    return _digits(read, "".join(out), tricks)


def _digits(read: str, skeleton: str, tricks: dict[str, Trick]) -> Normalised:
    """Step 5, and the result."""

    def digit(m: re.Match) -> str:
        tricks.setdefault(m.group(0), Trick(m.group(0), "o" if m.group(0) == "0" else "l", "digit"))
        return "o" if m.group(0) == "0" else "l"

    skeleton = _DIGIT_IN_WORD.sub(digit, skeleton)
    return Normalised(read, skeleton, tuple(tricks.values()))


def letter_words(text: str) -> list[str]:
    """Runs of letters (with their combining marks): the words of any script."""
    if text.isascii():
        return _ASCII_WORD.findall(text)
    out, cur = [], []
    for ch in text:
        if ch.isalpha() or (cur and unicodedata.combining(ch)):
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def word_scripts(word: str) -> frozenset[str]:
    if word.isascii():
        return _LATIN if any(c.isalpha() for c in word) else frozenset()
    return frozenset(s for s in (script(c) for c in word) if s not in _NEUTRAL)


def mixed_script_words(text: str) -> list[MixedWord]:
    """Words of `text` (as read) whose letters come from scripts no word combines."""
    if text.isascii():
        return []
    found = []
    for w in letter_words(text):
        scripts = word_scripts(w)
        if len(scripts) < 2 or any(scripts <= ok for ok in _TOGETHER):
            continue
        counts = {s: sum(1 for c in w if script(c) == s) for s in scripts}
        main = max(sorted(counts), key=lambda s: counts[s])
        odd = tuple(dict.fromkeys(c for c in w if script(c) in scripts and script(c) != main))
        found.append(MixedWord(w, tuple(sorted(scripts)), odd))
    return found


def describe_tricks(tricks: tuple[Trick, ...], limit: int = 3) -> str:
    shown = [t.describe() for t in tricks[:limit]]
    more = len(tricks) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
