"""`wac fmt`: print a parsed file back in canonical layout, keeping its comments.

Canonical layout: 4-space indentation, one statement per line, one space between words,
`(a, b)` tuples, `[a, b]` lists, a space between a number and its unit, a blank line
between top-level declarations.  Formatting never changes what a file means: the
formatted text parses to the same syntax tree (a property test holds us to that).
"""

from __future__ import annotations

from wac.compiler import syntax as S
from wac.compiler.parse import decode, parse, parse_comments

PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def _number(q: S.Quantity) -> str:
    text = q.text
    num = text.rstrip("abcdefghijklmnopqrstuvwxyz/ \t") if q.unit else text
    return f"{num.strip()} {q.unit}" if q.unit else num.strip()


_ESCAPE = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def _string(value: str) -> str:
    """A string literal using only the language's escapes (other control characters as \\uXXXX)."""
    out = []
    for ch in value:
        if ch in _ESCAPE:
            out.append(_ESCAPE[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def word(w: S.Word, prec: int = 0) -> str:
    if isinstance(w, S.Name):
        return w.text
    if isinstance(w, S.Quantity):
        return _number(w)
    if isinstance(w, S.Str):
        return _string(w.value)
    if isinstance(w, S.Tuple):
        return "(" + ", ".join(word(i) for i in w.items) + ")"
    if isinstance(w, S.List):
        return "[" + ", ".join(word(i) for i in w.items) + "]"
    if isinstance(w, S.Group):
        return "(" + word(w.inner) + ")"
    if isinstance(w, S.Neg):
        inner = word(w.operand, 3)
        return f"-{inner}"
    if isinstance(w, S.BinOp):
        p = PRECEDENCE[w.op]
        text = f"{word(w.left, p)} {w.op} {word(w.right, p + 1)}"
        return f"({text})" if p < prec else text
    raise AssertionError(type(w))


def _statement_words(st: S.Statement) -> str:
    head = f"{st.label.text}: " if st.label else ""
    words = []
    for w in st.words:
        text = word(w)
        if isinstance(w, S.Quantity) and w.value < 0 and words:
            text = f"-{_number(S.Quantity(-w.value, w.unit, w.text.lstrip('-'), w.span))}"
        words.append(text)
    return head + " ".join(words)


class _Printer:
    def __init__(self, comments: list[tuple[int, str]]) -> None:
        self.comments = sorted(comments)
        self.lines: list[str] = []
        self.last_line = 0  # source line of what was printed last, to keep one blank line where there was one

    def _gap(self, line: int) -> None:
        if (
            self.last_line
            and line > self.last_line + 1
            and self.lines
            and self.lines[-1] != ""
            and not self.lines[-1].endswith("{")
        ):
            self.lines.append("")

    def flush_comments(self, before_line: int, indent: str) -> None:
        while self.comments and self.comments[0][0] < before_line:
            line, text = self.comments.pop(0)
            self._gap(line)
            self.lines.append(indent + text)
            self.last_line = line

    def trailing(self, line: int) -> str:
        if self.comments and self.comments[0][0] == line:
            return "  " + self.comments.pop(0)[1]
        return ""

    def statement(self, st: S.Statement, depth: int) -> None:
        indent = "    " * depth
        self.flush_comments(st.span.line, indent)
        self._gap(st.span.line)
        text = indent + _statement_words(st)
        if st.block is None:
            self.lines.append(text + self.trailing(st.span.end_line))
            self.last_line = st.span.end_line
            return
        self.lines.append(text + " {" + self.trailing(st.span.line))
        self.last_line = st.span.line
        for inner in st.block:
            self.statement(inner, depth + 1)
        self.flush_comments(st.span.end_line, indent + "    ")
        self.lines.append(indent + "}" + self.trailing(st.span.end_line))
        self.last_line = st.span.end_line


def format_source(data: bytes, display: str = "<input>") -> str:
    src = decode(data, display, None)
    tree = parse(src)
    printer = _Printer(parse_comments(src))
    previous_block = False
    for i, st in enumerate(tree.statements):
        if i and (st.block is not None or previous_block) and printer.lines[-1] != "":
            printer.lines.append("")
            printer.last_line = 0
        printer.statement(st, 0)
        previous_block = st.block is not None
    printer.flush_comments(10**9, "")
    return "\n".join(printer.lines).rstrip() + "\n" if printer.lines else ""
