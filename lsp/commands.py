"""`wac lsp`: the command that starts the language server (its packages are the `lsp` extra)."""

from __future__ import annotations

from wac.errors import UsageError


def cmd_lsp(args) -> int:
    try:
        from wac.lsp.server import serve
    except ModuleNotFoundError as exc:
        if exc.name not in ("pygls", "lsprotocol") and not (exc.name or "").startswith(
            ("pygls.", "lsprotocol.")
        ):
            raise
        raise UsageError("`wac lsp` needs pygls and lsprotocol: pip install 'wac[lsp]'") from None
    serve()
    return 0


def register(sub) -> None:
    p = sub.add_parser("lsp", help="the language server for editors (LSP over stdio; see docs/editors.md)")
    p.add_argument(
        "--stdio", action="store_true", help="talk over stdin/stdout (the default and only transport)"
    )
    p.set_defaults(func=cmd_lsp)
