"""The language server (`wac lsp`): live diagnostics, completion, hover and navigation for `.wa` files."""
