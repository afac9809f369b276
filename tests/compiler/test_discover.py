"""Which files a directory on the command line stands for."""

from __future__ import annotations

from wac.compiler.resolve import discover


def test_hidden_files_and_directories_are_left_out(tmp_path):
    """Scratch files (`.derive-x.wa` while `wac derive` runs, editors' backups) are not sources."""
    for rel in ("a.wa", "sub/b.wa", ".draft.wa", ".cache/c.wa", "sub/.d.wa", "notes.txt"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in discover([tmp_path])] == ["a.wa", "sub/b.wa"]
    hidden = tmp_path / ".draft.wa"
    assert discover([hidden]) == [hidden.resolve()]  # a file named on the command line is taken as given
