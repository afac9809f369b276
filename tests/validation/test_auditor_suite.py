"""The auditor's-way suite (issue 27): tasks judged as an auditor who never sees the clean world.

`tests/validation/auditor/broken/*.wa` are invalid tasks a careless author plausibly writes; each
file's first line says who must catch it and with which words:

    # expect: compiler "words of the diagnostic"
    # expect: selfcheck "words of a reason"
    # expect: validate "words of the counterexample"

`tests/validation/auditor/valid/*.wa` are valid but unusual tasks (open doors, roofs, long and thin
targets, several anomalies, every family): each must build without errors and pass its self-check
(`# expect: valid`).  A false rejection fails as surely as a miss.  The recall by stage is printed by
`test_recall_by_stage` and reported in docs/performance.md.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from validation_helpers import HERE, build

from wac.validation.bundlecheck import check_bundle

SUITE = HERE / "auditor"
STAGES = ("compiler", "selfcheck", "validate")
_EXPECT = re.compile(r"^#\s*expect:\s*(\w+)\s*(.*)$")


def expectation(path: Path) -> tuple[str, str]:
    """(stage or 'valid', the words the message must contain) from the file's first line."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    m = _EXPECT.match(first)
    if m is None:
        raise AssertionError(f'{path.name}: the first line must be `# expect: STAGE "words"`')
    stage, rest = m.group(1), m.group(2).strip()
    words = shlex.split(rest)[0] if rest else ""
    if stage not in (*STAGES, "valid"):
        raise AssertionError(f"{path.name}: unknown stage {stage!r}")
    return stage, words


BROKEN = sorted((SUITE / "broken").glob("*.wa"))
VALID = sorted((SUITE / "valid").glob("*.wa"))
_caught: dict[str, str] = {}


def _catch(path: Path, tmp_path: Path, through: str) -> tuple[str, str]:
    """(who caught it, the message): 'compiler', 'selfcheck', 'validate' or 'nobody'."""
    out = tmp_path / "out"
    result = build([path], SUITE, out)
    if result.diagnostics:
        errors = [d for d in result.diagnostics if d.severity == "error"]
        if errors:
            return "compiler", "\n".join(d.render() for d in errors)
    bundles = [p for p in out.iterdir() if p.is_dir()]
    reasons = []
    for bundle in bundles:
        res = check_bundle(bundle)
        reasons += res.reasons
    if reasons:
        return "selfcheck", "\n".join(reasons)
    if through != "validate":
        return "nobody", ""
    from wac.validation.validate import validate_bundle

    why = []
    for bundle in bundles:
        v = validate_bundle(bundle)
        if not v.passed:
            why.append(f"{v.actions}: {v.why}")
    return ("validate", "\n".join(why)) if why else ("nobody", "")


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_each_invalid_task_is_caught(path: Path, tmp_path: Path) -> None:
    stage, words = expectation(path)
    caught_by, message = _catch(path, tmp_path, stage)
    _caught[path.name] = caught_by if caught_by == stage and words in message else "nobody"
    assert caught_by == stage, f"{path.name}: expected the {stage} to catch it, got {caught_by}:\n{message}"
    assert words in message, f"{path.name}: the message lacks {words!r}:\n{message}"


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_each_valid_task_builds_and_passes(path: Path, tmp_path: Path) -> None:
    stage, _ = expectation(path)
    assert stage == "valid", f"{path.name}: a task under valid/ must say `# expect: valid`"
    out = tmp_path / "out"
    result = build([path], SUITE, out)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert not errors, f"{path.name} was rejected:\n" + "\n".join(d.message for d in errors)
    for bundle in (p for p in out.iterdir() if p.is_dir()):
        res = check_bundle(bundle)
        assert res.passed, f"{path.name} failed its self-check:\n" + "\n".join(res.reasons)


def test_recall_by_stage(capsys) -> None:
    if len(_caught) < len(BROKEN):
        pytest.skip("run together with the per-task tests (it reports their results)")
    with capsys.disabled():
        parts = []
        for stage in STAGES:
            want = [p.name for p in BROKEN if expectation(p)[0] == stage]
            got = sum(1 for n in want if _caught[n] == stage)
            parts.append(f"{stage} {got}/{len(want)}")
        caught = sum(1 for n in _caught.values() if n != "nobody")
        print(
            f"\nauditor suite recall: {caught}/{len(BROKEN)} ({', '.join(parts)}); valid tasks: {len(VALID)}"
        )
    assert caught == len(BROKEN)
