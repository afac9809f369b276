"""`wac validate` counts valid variations: a discarded one is replaced by another draw, within a cap."""

from __future__ import annotations

import pytest
from validation_helpers import ROOT, build

from wac.cli import main
from wac.validation import validate as V


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("draws") / "build"
    assert build([ROOT / "taxonomy" / "examples" / "missing_support.wa"], ROOT, out).ok
    return out / "missing_support_demo"


@pytest.fixture(autouse=True)
def _cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _fake(monkeypatch, judge):
    """Replace the simulation by `judge(n, variation-seed, lenient) -> Outcome` (n counts the runs from 1)."""
    runs = []

    def differential(bdir, task, plan, steps, rep, seed, lenient=True):
        runs.append(seed)
        return judge(len(runs), seed, lenient)

    monkeypatch.setattr(V, "differential", differential)
    return runs


def test_a_discarded_variation_is_replaced_until_the_wanted_number_are_valid(bundle, monkeypatch):
    runs = _fake(monkeypatch, lambda n, seed, lenient: V.Outcome(True, n % 2 == 1, None, None, "blocked"))
    res = V.validate_bundle(bundle, examples=6)
    assert res.passed
    assert res.valid == 6  # the plan and five more, not three
    assert res.examples == len(runs) == 11


def test_draws_are_capped_when_nearly_every_variation_is_discarded(bundle, monkeypatch):
    runs = _fake(
        monkeypatch, lambda n, seed, lenient: V.Outcome(True, not lenient, None, None, "out of sight")
    )
    res = V.validate_bundle(bundle, examples=4)
    assert res.passed and res.valid == 1
    assert res.examples == len(runs) == 4 * V.DRAWS_PER_EXAMPLE


def test_a_failure_is_still_found_and_shrunk_among_discarded_variations(bundle, monkeypatch):
    def judge(n, seed, lenient):
        if lenient and seed % 3 == 0:
            return V.Outcome(True, False, None, None, "blocked")
        if lenient and seed > 1000:
            return V.Outcome(False, True, None, None, "clean: the sack floats too")
        return V.Outcome(True, True, None, None, "")

    _fake(monkeypatch, judge)
    res = V.validate_bundle(bundle, examples=30)
    assert not res.passed
    assert res.counterexample.seed == 1001  # shrunk past the discarded 1002 to the smallest failing seed
    assert res.why == "clean: the sack floats too"


def test_the_verdict_says_how_many_were_wanted(bundle, monkeypatch, capsys):
    _fake(monkeypatch, lambda n, seed, lenient: V.Outcome(True, n in (1, 2, 5), None, None, "blocked"))
    assert main(["validate", str(bundle), "--examples", "4", "-j", "1"]) == 0
    out = capsys.readouterr().out
    assert "in all 3 valid variation(s) of 12 tried; 4 wanted, the other draws were discarded" in out

    _fake(monkeypatch, lambda n, seed, lenient: V.Outcome(True, n == 1, None, None, "blocked"))
    assert main(["validate", str(bundle), "--examples", "4", "-j", "1"]) == 0
    assert "only the plan itself could be tested" in capsys.readouterr().out


def test_the_same_seed_draws_the_same_variations(bundle, monkeypatch):
    """`--seed N` randomises the search reproducibly: a counterexample found with it can be found again."""

    def drawn(seed):
        seen = []

        def differential(bdir, task, plan, steps, rep, variation_seed, lenient=True):
            seen.append((variation_seed, V.actions_text(steps)))
            return V.Outcome(True, True, None, None, "")

        monkeypatch.setattr(V, "differential", differential)
        V.validate_bundle(bundle, examples=8, seed=seed)
        return seen

    assert drawn(5) == drawn(5)
    assert drawn(5) != drawn(6)
    assert drawn(None) == drawn(None)  # without a seed: the deterministic search
