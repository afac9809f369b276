"""An honest judge: blind "shotgun" reports score 0, negations are no findings, only the first
bugs count, false positives are measured, and judge failures never improve the SR (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_judge import BASKET, SACKS, WALL, bug

from wac.audit.judge import judge_run, keyword_match
from wac.audit.limits import MAX_COUNTED_BUGS, MAX_JUDGED_CHARS
from wac.audit.metrics import run_metrics
from wac.bundle.model import Rubric
from wac.taxonomy.registry import registry

# --- negation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The sack is not floating.",
        "The grain sack isn't hovering; it rests on the ground.",
        "There is no gap under the sack.",
        "The sack does not seem to be floating.",
        "I checked the sack: never floating, nothing unsupported.",
    ],
)
def test_negated_defects_are_no_finding(text):
    m = keyword_match(SACKS, [bug(text)])
    assert m.score == 0 and "negates" in m.reason


@pytest.mark.parametrize(
    "text",
    [
        "The sack has no visible support and floats above the ground.",
        "Not what I expected: the grain sack is floating in mid-air.",
        "The sack is floating, it does not touch the ground.",
    ],
)
def test_a_negation_in_another_clause_does_not_hide_the_finding(text):
    assert keyword_match(SACKS, [bug(text)]).score == 1


def test_no_longer_states_a_change_not_a_negation():
    text = "The basket is no longer there after I turned away and came back: it vanished."
    assert keyword_match(BASKET, [bug(text)]).score == 1
    assert keyword_match(BASKET, [bug("The basket did not vanish when I came back.")]).score == 0


# --- the cap and specificity -------------------------------------------------------------------------


def test_only_the_first_bugs_count(tmp_path):
    from test_judge import make_run

    wrong = [bug(f"The barrel {i} looks odd.", bid=f"b{i + 1}") for i in range(MAX_COUNTED_BUGS)]
    late = bug("The grain sack floats above the ground.", bid=f"b{MAX_COUNTED_BUGS + 1}")
    run = make_run(tmp_path, {"t1": ([SACKS], wrong + [late])})
    judge_run(run)
    j = json.loads((run / "tasks" / "t1" / "judgment.json").read_text())
    assert j["success"] is False and j["bugs_counted"] == MAX_COUNTED_BUGS
    assert (j["bugs_flagged"], j["bugs_matched"], j["false_positives"]) == (MAX_COUNTED_BUGS + 1, 0, 6)
    # the same finding among the first bugs counts
    run2 = make_run(tmp_path / "2", {"t1": ([SACKS], [late] + wrong)})
    judge_run(run2)
    j2 = json.loads((run2 / "tasks" / "t1" / "judgment.json").read_text())
    assert j2["success"] is True and (j2["bugs_matched"], j2["false_positives"]) == (1, MAX_COUNTED_BUGS)


def test_a_bug_naming_every_defect_family_is_not_specific():
    terms = [c.defect_terms[0] for c in registry().categories]
    text = "The grain sack is " + ", ".join(terms) + "."
    m = keyword_match(SACKS, [bug(text)])
    assert m.score == 0 and "not specific" in m.reason


def test_a_bug_naming_many_scene_objects_is_not_specific():
    names = (("sack",), ("barrel",), ("cart",), ("crate",), ("lamp",))
    text = "The sack, barrel, cart, crate and lamp are floating."
    m = keyword_match(SACKS, [bug(text)], names)
    assert m.score == 0 and "5 different objects" in m.reason
    assert keyword_match(SACKS, [bug("The sack next to the barrel floats.")], names).score == 1


def test_a_synonym_many_objects_share_names_one_of_them():
    """A room's tables all answer to "dining table": naming the one a bottle floats above does not
    name four objects; naming five objects by five names still does."""
    names = (
        ("bottle",),
        ("coffee table", "dining table", "table"),
        ("side table", "dining table", "table"),
        ("dining table", "table"),
        ("desk", "dining table", "table"),
    )
    text = "The sack floats 0.5 m above the dining table without any support."
    assert keyword_match(SACKS, [bug(text)], (("sack",), *names[1:])).score == 1
    many = "The sack, the coffee table, the side table, the desk and the bottle are floating."
    m = keyword_match(SACKS, [bug(many)], (("sack",), *names))
    assert m.score == 0 and "different objects" in m.reason


def test_a_place_finding_must_come_from_near_the_place():
    text = "An invisible wall blocked me when I walked along the path."
    where = ((-3.0, -1.0, 0.5), 7.0)
    far = {"b1": [{"x": 20.0, "y": 20.0}]}
    near = {"b1": [{"x": -1.0, "y": -2.0}]}
    assert keyword_match(WALL, [bug(text)], (), where, far).score == 0
    assert keyword_match(WALL, [bug(text)], (), where, {}).score == 0  # no position, no cited frame
    assert keyword_match(WALL, [bug(text)], (), where, near).score == 1


# --- the shotgun test: a blind universal report scores 0 on the shipped corpus ----------------------


def _corpus_words(built: Path) -> tuple[list[str], list[str]]:
    names, terms = [], []
    for f in sorted(built.glob("*/rubric.json")):
        for e in Rubric.model_validate_json(f.read_text()).entries:
            names += e.object_names
            terms += e.defect_terms
    for c in registry().categories:
        terms += c.defect_terms
    return list(dict.fromkeys(names)), list(dict.fromkeys(terms))


def _universal_reports(built: Path) -> dict[str, list[dict]]:
    """Reports written without looking at any scene, the same for every task."""
    names, terms = _corpus_words(built)
    cond = "when I walked up, turned away and came back, waited, interacted and viewed it from the side"
    fams: dict[str, list[str]] = {}
    for c in registry().categories:
        fams.setdefault(c.family.value, []).extend(c.defect_terms)
    return {
        "everything in one bug": [bug(f"The {', '.join(names)}: {', '.join(terms)}, {cond}.")],
        "one bug per family": [
            bug(f"The {', '.join(names)} {', '.join(t)} {cond}.", bid=f"b{i}")
            for i, t in enumerate(fams.values(), 1)
        ],
        "thirty vague bugs": [
            bug(f"Something is {t} {cond}.", bid=f"b{i}") for i, t in enumerate(terms[:30], 1)
        ],
        "one bug per object": [
            bug(f"The {n} is {', '.join(terms)} {cond}.", bid=f"b{i}") for i, n in enumerate(names, 1)
        ],
    }


def _run_of(tmp: Path, built: Path, bugs: list[dict]) -> Path:
    index = json.loads((built / "index.json").read_text())["tasks"]
    ids = [e["id"] for e in index if not e.get("example")]
    run = tmp / "run"
    (run / "tasks").mkdir(parents=True)
    (run / "run.json").write_text(
        json.dumps({"format": "wac.run/1", "agent": "blind", "build": str(built), "tasks": ids})
    )
    for tid in ids:
        d = run / "tasks" / tid
        d.mkdir()
        report = {"format": "wac.report/1", "task_id": tid, "done": True, "summary": "", "bugs": bugs}
        (d / "report.json").write_text(json.dumps(report))
    return run


def test_shotgun_a_blind_universal_report_scores_zero(built, tmp_path):
    """docs/evaluation.md "The shotgun test": every form of a report that lists every object name and
    defect term of the corpus, written without looking, scores 0 on every shipped task."""
    for i, (form, bugs) in enumerate(_universal_reports(built).items()):
        run = _run_of(tmp_path / str(i), built, bugs)
        statuses = judge_run(run)
        wins = [s["task_id"] for s in statuses if s.get("success")]
        assert wins == [], f"the blind report '{form}' wins {len(wins)} task(s): {wins[:5]}"
        # a report too long for the judge is a judge error: a failure, never a dropped task
        assert {s["status"] for s in statuses} <= {"judged", "judge_error"}
        assert run_metrics(run)["summary"]["sr"] == 0.0


# --- judge failures and precision in the metrics -----------------------------------------------------


def test_a_report_too_long_for_the_judge_is_a_failure_in_the_denominator(built, tmp_path):
    long = [bug("The sack floats. " + "x" * (MAX_JUDGED_CHARS // 2), bid=f"b{i}") for i in (1, 2, 3)]
    run = _run_of(tmp_path, built, long)
    statuses = judge_run(run)
    assert {s["status"] for s in statuses} == {"judge_error"}
    assert "too long" in statuses[0]["error"]
    s = run_metrics(run)["summary"]
    assert s["judge_error"] == s["tasks"] and s["sr"] == 0.0 and s["success"] == 0


def test_corrupt_report_is_that_episodes_error_and_the_run_goes_on(built, tmp_path, capsys):
    from wac.cli import main

    run = _run_of(tmp_path, built, [bug("The grain sack floats above the ground.")])
    ids = json.loads((run / "run.json").read_text())["tasks"]
    (run / "tasks" / ids[0] / "report.json").write_text("[1, 2]")
    (run / "tasks" / ids[1] / "report.json").write_text('{"bugs": 7}')
    statuses = {s["task_id"]: s for s in judge_run(run)}
    assert statuses[ids[0]]["status"] == "episode_error" and "not a report" in statuses[ids[0]]["error"]
    assert statuses[ids[1]]["status"] == "episode_error"
    assert statuses[ids[2]]["status"] == "judged"
    rows = {r["task_id"]: r for r in run_metrics(run)["tasks"]}
    assert rows[ids[0]]["status"] == "episode_error" and rows[ids[0]]["episode_error"] == "corrupt"
    (run / "tasks" / ids[2] / "judgment.json").write_text("[1, 2]")
    assert main(["report", str(run), "--out", str(tmp_path / "rep")]) == 0
    assert main(["judge", str(run)]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_precision_counts_false_positives_beside_the_sr(built, tmp_path):
    bugs = [
        bug("The grain sack floats above the ground.", bid="b1"),
        bug("The sky is a strange colour.", bid="b2"),
    ]
    run = _run_of(tmp_path, built, bugs)
    judge_run(run)
    s = run_metrics(run)["summary"]
    assert s["bugs_flagged"] == 2 * s["tasks"]
    assert s["precision"] is not None and s["precision"] <= 0.5
    assert s["false_positives"] >= s["tasks"]
