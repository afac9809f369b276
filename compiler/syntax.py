"""The syntax tree: what the parser produces, before statements are given meaning.

A file is a list of statements; a statement is an optional label, a list of words and
an optional block of nested statements.  Words are names, quantities (numbers with an
optional unit), strings, tuples, lists and arithmetic expressions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wac.compiler.spans import Source, Span


@dataclass(frozen=True, slots=True)
class Name:
    text: str
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Quantity:
    value: float
    unit: str | None
    text: str = field(compare=False)
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Str:
    value: str
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Tuple:
    items: tuple[Expr, ...]
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class List:
    items: tuple[Word, ...]
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # one of + - * /
    left: Expr
    right: Expr
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Expr
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Group:
    """A parenthesised scalar expression, `(h - 0.05)`."""

    inner: Expr
    span: Span = field(compare=False, repr=False)


Expr = Name | Quantity | BinOp | Neg | Group | Tuple
Word = Name | Quantity | Str | Tuple | List | BinOp | Neg | Group


@dataclass(frozen=True, slots=True)
class Statement:
    label: Name | None
    words: tuple[Word, ...]
    block: tuple[Statement, ...] | None
    span: Span = field(compare=False, repr=False)

    @property
    def head(self) -> Word:
        return self.words[0]


@dataclass(frozen=True, slots=True)
class File:
    source: Source = field(compare=False, repr=False)
    statements: tuple[Statement, ...]
