"""Pass 1, parse: source bytes to the syntax tree (`wac.compiler.syntax`).

Lark runs in LALR mode with the contextual lexer.  No `lark.Tree` and no lark exception
leaves this module: syntax errors become diagnostics with a span, a caret and a hint.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from wac.compiler import syntax as S
from wac.compiler.diagnostics import Diagnostic
from wac.compiler.spans import Source, Span
from wac.errors import SourceErrors

_UNIT_RE = re.compile(r"^(.*?)[ \t]*(m/s|deg/s|deg|rad|cm|mm|ms|kg|m|s|g)?$")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}
MAX_NESTING = 64  # brackets and braces open at once; operators in one expression item
_OPENERS = {"(": ")", "[": "]", "{": "}"}
# what the nesting scan looks at: strings and comments (skipped whole), newlines, brackets, operators
_NESTING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*|[\n()\[\]{}+\-*/,;]')


class _BracketNewlines:
    """Post-lexer: newlines inside `()` and `[]` do not end a statement."""

    always_accept = ("_NL",)

    def __init__(self) -> None:
        self.open: list[Token] = []  # brackets still open where lexing stopped (for diagnostics)

    def process(self, stream):
        self.open = []
        for tok in stream:
            if tok.type in ("LPAR", "LSQB"):
                self.open.append(tok)
            elif tok.type in ("RPAR", "RSQB"):
                if self.open:
                    self.open.pop()
            elif tok.type == "_NL" and self.open:
                continue
            yield tok


_COMMENTS: list[Token] = []


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("wac.grammar").joinpath("wac.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
        postlex=_BracketNewlines(),
        strict=False,
        lexer_callbacks={"COMMENT": _COMMENTS.append},  # comments are ignored tokens; fmt keeps them
    )


def _span(source: Source, meta) -> Span:
    return Span(source, meta.line, meta.column, meta.end_line, meta.end_column)


def _tok_span(source: Source, tok: Token) -> Span:
    return Span(source, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + 1)


def unescape(raw: str, span: Span) -> str:
    """Decode a string literal's escapes; an unknown escape is a diagnostic."""
    out: list[str] = []
    i = 1
    end = len(raw) - 1
    while i < end:
        ch = raw[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = raw[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", raw[i + 2 : i + 6] or ""):
            out.append(chr(int(raw[i + 2 : i + 6], 16)))
            i += 6
        else:
            col = span.column + i
            bad = Span(span.source, span.line, col, span.line, col + 2)
            raise SourceErrors(
                (
                    Diagnostic(
                        "E004",
                        f"unknown escape `\\{nxt}` in string",
                        bad,
                        'known escapes are \\" \\\\ \\n \\t \\r \\0 and \\uXXXX; write `\\\\` for a backslash',
                    ),
                )
            )
    return "".join(out)


@v_args(meta=True)
class _ToSyntax(Transformer):
    def __init__(self, source: Source) -> None:
        super().__init__(visit_tokens=False)
        self.source = source

    def _sp(self, meta) -> Span:
        return _span(self.source, meta)

    def start(self, meta, items):
        return tuple(items)

    def statement(self, meta, items):
        label = None
        block = None
        words = []
        for it in items:
            if isinstance(it, tuple) and it and it[0] == "label":
                label = it[1]
            elif isinstance(it, tuple) and it and it[0] == "block":
                block = it[1]
            else:
                words.append(it)
        return S.Statement(label, tuple(words), block, self._sp(meta))

    def label(self, meta, items):
        tok = items[0]
        return ("label", S.Name(str(tok), _tok_span(self.source, tok)))

    def block(self, meta, items):
        return ("block", tuple(items))

    def name(self, meta, items):
        tok = items[0]
        return S.Name(str(tok), _tok_span(self.source, tok))

    def quantity(self, meta, items):
        tok = items[0]
        return self._quantity(tok, negative=False)

    def neg_quantity(self, meta, items):
        q = self._quantity(items[0], negative=True)
        return S.Quantity(q.value, q.unit, "-" + q.text, self._sp(meta))

    def _quantity(self, tok: Token, negative: bool) -> S.Quantity:
        text = str(tok)
        m = _UNIT_RE.match(text)
        number, unit = m.group(1), m.group(2)
        value = float(number)
        return S.Quantity(-value if negative else value, unit, text, _tok_span(self.source, tok))

    def string(self, meta, items):
        tok = items[0]
        sp = _tok_span(self.source, tok)
        return S.Str(unescape(str(tok), sp), sp)

    def group(self, meta, items):
        return S.Group(items[0], self._sp(meta))

    def tuple(self, meta, items):
        return S.Tuple(tuple(items), self._sp(meta))

    def list(self, meta, items):
        return S.List(tuple(items), self._sp(meta))

    def add(self, meta, items):
        return S.BinOp("+", items[0], items[1], self._sp(meta))

    def sub(self, meta, items):
        return S.BinOp("-", items[0], items[1], self._sp(meta))

    def mul(self, meta, items):
        return S.BinOp("*", items[0], items[1], self._sp(meta))

    def div(self, meta, items):
        return S.BinOp("/", items[0], items[1], self._sp(meta))

    def neg(self, meta, items):
        return S.Neg(items[0], self._sp(meta))


_TOKEN_WORDS = {
    "RBRACE": "`}`",
    "LBRACE": "`{`",
    "RPAR": "`)`",
    "LPAR": "`(`",
    "RSQB": "`]`",
    "LSQB": "`[`",
    "COLON": "`:`",
    "COMMA": "`,`",
    "SEMICOLON": "`;`",
    "NAME": "a name",
    "QUANTITY": "a number",
    "STRING": "a string",
    "MINUS": "`-`",
    "PLUS": "`+`",
    "STAR": "`*`",
    "SLASH": "`/`",
    "_NL": "end of line",
    "$END": "end of file",
}


_CONTROL_NAMES = {
    "\r": "CARRIAGE RETURN",
    "\v": "LINE TABULATION",
    "\x0c": "FORM FEED",
    "\x85": "NEXT LINE",
    "\x7f": "DELETE",
    "\x1b": "ESCAPE",
}


def _char_name(ch: str) -> str:
    """`x` for a visible ASCII character; `U+000D CARRIAGE RETURN` for anything else."""
    if ch.isascii() and ch.isprintable() and not ch.isspace():
        return f"`{ch}`"
    name = _CONTROL_NAMES.get(ch) or unicodedata.name(ch, "") or "CONTROL CHARACTER"
    visible = (
        f" `{ch}`" if ch.isprintable() and not ch.isspace() and unicodedata.category(ch)[0] != "C" else ""
    )
    return f"U+{ord(ch):04X} {name}{visible}"


def _describe(types) -> str:
    names = sorted({_TOKEN_WORDS.get(t, t) for t in types})
    if len(names) > 6:
        names = names[:6] + ["…"]
    return ", ".join(names)


def decode(data: bytes, source_display: str, path) -> Source:
    """Decode UTF-8 source bytes; malformed bytes are a diagnostic, not a crash."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", errors="replace")
        line = prefix.count("\n") + 1
        col = len(prefix) - (prefix.rfind("\n") + 1) + 1
        src = Source(path, source_display, data.decode("utf-8", errors="replace"))
        raise SourceErrors(
            (
                Diagnostic(
                    "E001",
                    f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                    Span(src, line, col, line, col + 1),
                    "save the file as UTF-8",
                ),
            )
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\0" in text:
        idx = text.index("\0")
        line = text.count("\n", 0, idx) + 1
        col = idx - (text.rfind("\n", 0, idx) + 1) + 1
        src = Source(path, source_display, text.replace("\0", " "))
        raise SourceErrors(
            (
                Diagnostic(
                    "E001",
                    "file contains a NUL byte",
                    Span(src, line, col, line, col + 1),
                    "is this a binary file?",
                ),
            )
        )
    lone_cr = re.search(r"\r(?!\n)", text)
    if lone_cr:  # a comment would swallow the rest of the file: never let that pass silently
        idx = lone_cr.start()
        line = text.count("\n", 0, idx) + 1
        col = idx - (text.rfind("\n", 0, idx) + 1) + 1
        src = Source(path, source_display, text)
        raise SourceErrors(
            (
                Diagnostic(
                    "E002",
                    f"unexpected character {_char_name(chr(13))}",
                    Span(src, line, col, line, col + 1),
                    "the file has carriage-return (CR-only) line ends: save it with LF or CR LF line ends",
                ),
            )
        )
    return Source(path, source_display, text)


def _too_deep(source: Source) -> Diagnostic | None:
    """E005 at the first bracket or brace nested deeper than `MAX_NESTING`, or at an operator
    past the `MAX_NESTING`th of one expression item (`1+1+…`, `- - -…`: each nests the tree).

    Checked before parsing, so that no nesting depth reaches Python's recursion limit in the
    parser or the tree transformer.  Strings and comments are skipped; unbalanced brackets
    are left to the parser.
    """
    text = source.text
    depth = ops = 0
    for m in _NESTING_RE.finditer(text):
        tok = m.group()
        ch = tok[0]
        if ch in '"#':
            continue  # strings and comments
        if ch == "\n":
            ops = 0
            continue
        if ch in _OPENERS:
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in "+-*/":
            ops += 1
        else:  # , ;
            ops = 0
        if depth > MAX_NESTING or ops > MAX_NESTING:
            what = (
                f"more than {MAX_NESTING} brackets and blocks open here"
                if depth > MAX_NESTING
                else f"more than {MAX_NESTING} operators in one expression"
            )
            i = m.start()
            line = text.count("\n", 0, i) + 1
            col = i - (text.rfind("\n", 0, i) + 1) + 1
            return Diagnostic(
                "E005",
                f"nested too deeply: {what}",
                Span(source, line, col, line, col + 1),
                "flatten it: declare the inner part separately, or compute the value in fewer steps",
            )
    return None


def _deepest(source: Source) -> Diagnostic:
    lines = source.text.splitlines() or [""]
    n = max(range(len(lines)), key=lambda i: len(lines[i])) + 1
    return Diagnostic("E005", "expression or block nested too deeply", Span(source, n, 1, n, 2), "flatten it")


def parse(source: Source) -> S.File:
    """Parse one decoded source into its syntax tree, or raise `SourceErrors` (first error only)."""
    text = source.text
    if not text.endswith("\n"):
        text += "\n"
    deep = _too_deep(source)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        _COMMENTS.clear()
        first = _syntax_diagnostic(source, exc)
        if deep is not None and deep.span.line <= first.span.line:
            first = deep
        raise SourceErrors((first,)) from None
    _COMMENTS.clear()  # only `parse_comments` keeps them; a long-lived server must not pile them up
    if deep is not None:
        raise SourceErrors((deep,))
    try:
        statements = _ToSyntax(source).transform(tree)
    except RecursionError:  # not reached below MAX_NESTING; kept so no depth can crash
        raise SourceErrors((_deepest(source),)) from None
    except Exception as exc:  # lark wraps transformer errors
        inner = getattr(exc, "orig_exc", None)
        if isinstance(inner, SourceErrors):
            raise inner from None
        if isinstance(inner, RecursionError):
            raise SourceErrors((_deepest(source),)) from None
        raise
    return S.File(source, statements)


def _syntax_diagnostic(source: Source, exc: UnexpectedInput) -> Diagnostic:
    line = max(1, getattr(exc, "line", 1) or 1)
    column = max(1, getattr(exc, "column", 1) or 1)
    if isinstance(exc, UnexpectedCharacters):
        ch = source.text[exc.pos_in_stream] if exc.pos_in_stream < len(source.text) else "?"
        span = Span(source, line, column, line, column + 1)
        hint = None
        shown = _char_name(ch)
        if ch == "\r":
            hint = "the file has carriage-return (CR-only or CR CR LF) line ends: save it with LF or CR LF line ends"
        elif ch in "\u201c\u201d\u201e\u2018\u2019":
            hint = 'strings use straight double quotes: "like this"'
        elif shown != f"`{ch}`":
            hint = "an invisible or look-alike character (often pasted from a web page or word processor): delete it"
        elif ch == "'":
            hint = 'strings use double quotes: "like this"'
        elif ch == '"':
            hint = "this string is not closed before the end of the line"
        elif ch in "=":
            hint = "values follow their keyword without `=`: write `yaw 30 deg`"
        elif ch == "{" or ch == "}":
            hint = "check the braces around this block"
        return Diagnostic("E002", f"unexpected character {shown}", span, hint)
    if isinstance(exc, UnexpectedEOF):
        last = len(source.text.splitlines()) or 1
        span = Span(source, last, 1, last, 2)
        return Diagnostic(
            "E003",
            "file ends too early",
            span,
            f"expected {_describe(exc.expected)}; is a closing `}}`, `)` or `]` missing?",
        )
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    if tok.type == "$END":
        last = len(source.text.splitlines()) or 1
        span = Span(source, last, max(1, len(source.line(last))), last, max(2, len(source.line(last)) + 1))
        return Diagnostic("E003", "file ends too early", span, "a closing `}`, `)` or `]` is missing")
    shown = "end of line" if tok.type == "_NL" else f"`{tok}`"
    still_open = [t for t in _parser().options.postlex.open if (t.line, t.column) < (tok.line, tok.column)]
    if still_open and tok.type not in ("RPAR", "RSQB", "COMMA"):
        b = still_open[-1]
        closer = ")" if b.type == "LPAR" else "]"
        span = Span(source, b.line, b.column, b.line, b.column + 1)
        return Diagnostic(
            "E008",
            f"`{b}` is never closed",
            span,
            f"add `{closer}` (found {shown} at line {tok.line}, column {tok.column} first)",
        )
    span = Span(
        source,
        line,
        column,
        tok.end_line or line,
        (tok.end_column or column + 1) if tok.type != "_NL" else column + 1,
    )
    expected = exc.expected or set()
    hint = None
    if tok.type == "_NL" and expected & {"RPAR", "RSQB", "COMMA"}:
        hint = "a bracket is not closed"
    elif tok.type == "RBRACE" and "RBRACE" not in expected:
        hint = "this `}` has no matching `{`"
    elif tok.type == "COLON":
        hint = "a label (`name:`) must start the statement: `sack_1: sack at (1, 2)`"
    elif tok.type == "LBRACE":
        hint = "a block `{` must follow a statement's words on the same line"
    elif expected:
        hint = f"expected {_describe(expected)}"
    return Diagnostic("E002", f"unexpected {shown}", span, hint)


def parse_comments(source: Source) -> list[tuple[int, str]]:
    """The comments of a source as (line, text), for the formatter (collected while lexing)."""
    text = source.text if source.text.endswith("\n") else source.text + "\n"
    _COMMENTS.clear()
    _parser().parse(text)
    comments = [(tok.line, str(tok).rstrip()) for tok in _COMMENTS]
    _COMMENTS.clear()
    return comments


def name_tokens(text: str) -> list[tuple[str, int, int]]:
    """Every name in `text` as the lexer sees it (never inside a string or a comment): (name, 1-based
    line, column); a character the language does not know ends the list there.  For the language
    server's references and renames."""
    out: list[tuple[str, int, int]] = []
    try:
        for tok in _parser().lex(text):
            if tok.type == "NAME":
                out.append((str(tok), tok.line, tok.column))
    except UnexpectedInput:
        pass
    return out
