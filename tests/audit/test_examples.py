"""In-context examples (C.1): text from the taxonomy, figures rendered from the demonstration tasks."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from wac.audit import examples as ex_mod
from wac.audit.examples import (
    ExampleLibrary,
    bundle_target_kinds,
    choose_demo,
    default_cache_dir,
    example_conflicts,
    figure_choice,
    render_figures,
    target_kinds,
)
from wac.bundle.model import Rubric
from wac.taxonomy.registry import Demo, _demo, registry

REG = registry()
CATEGORY_IDS = [str(c.id) for c in REG.categories]
DEMOS = [(str(c.id), i) for c in REG.categories for i in range(len(c.demos))]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("example_cache")


@pytest.fixture(scope="module")
def library(built, cache):
    return ExampleLibrary(built, cache_dir=cache, width=160, height=120)


@pytest.mark.parametrize(("cid", "k"), DEMOS)
def test_every_demonstration_gives_an_example_with_its_own_figures(library, built, cid, k):
    """Each demonstration of a category (reached by avoiding the target kinds of those before it)
    gives the category's text with that demonstration's own captions, explanation and figures."""
    spec = REG.category(cid)
    demo = spec.demos[k]
    avoid = set().union(*(bundle_target_kinds(built / d.id) for d in spec.demos[:k]))
    ex = library.get(cid, avoid=avoid)
    assert ex is not None and ex.category == cid and ex.demo == demo.id
    assert len(ex.figures) == len(demo.figures) >= 1
    assert spec.name in ex.text and spec.definition in ex.text and demo.explanation in ex.text
    for i, (fig, (caption, png)) in enumerate(zip(demo.figures, ex.figures, strict=True), start=1):
        assert f"Figure {i}: {fig}" in ex.text
        assert fig in caption and caption.startswith(f"Example figure {i}")
        im = Image.open(io.BytesIO(png))
        assert im.format == "PNG" and im.size == (160, 120)
        assert not im.info.get("text") and not any(k.lower() in ("comment", "description") for k in im.info)
    assert "Reference answer" in ex.text and "different scene" in ex.text
    assert spec.demos[-1] is spec.demo  # the principal demonstration is the last resort


def test_unknown_categories_have_no_example(library):
    assert library.get("no_such_category") is None and library.get(None) is None and library.get("") is None


def test_examples_leak_nothing_of_the_tasks_being_audited(library, built):
    """Examples come from the demonstration tasks only: no rubric string, target id or task id of any task."""
    texts = {}
    for spec in REG.categories:
        for k, demo in enumerate(spec.demos):
            avoid = set().union(*(bundle_target_kinds(built / d.id) for d in spec.demos[:k]))
            ex = library.get(str(spec.id), avoid=avoid)
            texts[demo.id] = ex.text + "\n".join(c for c, _ in ex.figures)
    checked = 0
    for bundle in sorted(p for p in built.iterdir() if (p / "rubric.json").is_file()):
        task = json.loads((bundle / "task.json").read_text())
        if task["meta"].get("example"):
            continue
        rubric = Rubric.model_validate_json((bundle / "rubric.json").read_text())
        secrets = [e.target for e in rubric.entries] + [e.expected for e in rubric.entries]
        secrets += [e.inspection for e in rubric.entries] + [bundle.name]
        secrets += [t for an in task["anomalies"] for t in an["targets"]]
        for text in texts.values():
            for s in secrets:
                assert s not in text, (bundle.name, s)
        checked += 1
    assert checked >= 50


def test_the_cache_is_used_on_the_second_library(built, cache, library, monkeypatch):
    library.get("scale")  # rendered (or already cached) by the module's library: scale_plant_demo, 1 figure

    def boom(*a, **k):
        raise AssertionError("rendered again instead of reading the cache")

    monkeypatch.setattr(ex_mod, "render_figures", boom)
    again = ExampleLibrary(built, cache_dir=cache, width=160, height=120)
    assert again.get("scale").figures == library.get("scale").figures and again.rendered == 0
    slot = next((cache / "scale_plant_demo").iterdir())
    version = json.loads((built / "scale_plant_demo" / "manifest.json").read_text())["version_id"]
    assert slot.name.startswith(f"{version}-160x120-")
    monkeypatch.undo()
    other = ExampleLibrary(built, cache_dir=cache, width=96, height=72)  # another size is another key
    assert Image.open(io.BytesIO(other.get("scale").figures[0][1])).size == (96, 72) and other.rendered == 1


def test_without_a_build_the_demo_is_compiled_to_the_same_version(cache, library):
    library.get("historical")
    lib = ExampleLibrary(None, cache_dir=cache, width=160, height=120)
    try:
        assert lib.get("historical").figures == library.get("historical").figures
        assert lib.rendered == 0  # same manifest version id as `wac build`, so the cache hit
    finally:
        lib.close()


def test_rendering_is_deterministic_and_uses_the_clean_control(built):
    spec = REG.category("abnormal_trajectory")
    assert [v for v, _, _ in spec.demo.frames] == ["perturbed", "clean", "perturbed"]
    a = render_figures(built / "abnormal_trajectory_demo", spec.demo, 96, 72)
    b = render_figures(built / "abnormal_trajectory_demo", spec.demo, 96, 72)
    assert a == b and len(a) == 3
    assert a[1] != a[2]  # the clean control and the faulty result differ
    clean_only = Demo(spec.demo.task, spec.demo.figures[:1], "", (("clean", -1, ""),))
    assert render_figures(built / "abnormal_trajectory_demo", clean_only, 96, 72) == [a[1]]


def test_default_figure_choice_spreads_over_the_captioned_frames():
    demo = lambda n, frames=(): Demo("x.wa", tuple(f"f{i}" for i in range(n)), "e", frames)  # noqa: E731
    assert figure_choice(demo(3), 5) == [("perturbed", 0, ""), ("perturbed", 2, ""), ("perturbed", 4, "")]
    assert figure_choice(demo(2), 4) == [("perturbed", 0, ""), ("perturbed", 3, "")]
    assert figure_choice(demo(1), 4) == [("perturbed", 3, "")]
    assert figure_choice(demo(2), 1) == [("perturbed", 0, "")] * 2
    assert figure_choice(demo(2, (("clean", -1, ""), ("perturbed", 0, "wait 1"))), 4) == [
        ("clean", 3, ""),
        ("perturbed", 0, "wait 1"),
    ]


def test_figure_frames_are_checked_when_the_registry_loads():
    base = {"task": "x.wa", "figures": ["a", "b"], "explanation": "e"}
    assert _demo("c", base).frames == ()
    assert _demo("c", {**base, "figure_frames": [["clean", 0], ["perturbed", -1, "turn 90"]]}).frames == (
        ("clean", 0, ""),
        ("perturbed", -1, "turn 90"),
    )
    with pytest.raises(ValueError, match="one entry per figure"):
        _demo("c", {**base, "figure_frames": [["clean", 0]]})
    with pytest.raises(ValueError, match="'clean' or 'perturbed'"):
        _demo("c", {**base, "figure_frames": [["dirty", 0], ["clean", 0]]})


def test_cache_dir_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("WAC_CACHE_DIR", str(tmp_path / "wc"))
    assert default_cache_dir() == tmp_path / "wc"
    monkeypatch.delenv("WAC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "wac-examples"


def _targets(task: dict) -> set[str]:
    """Target kinds as the test sees them, written out independently of `target_kinds`."""
    objs = {o["id"]: o for o in task["scene"]["objects"]}
    for a in task["anomalies"]:
        for e in a["effects"]:
            if e.get("object"):
                objs[e["object"]["id"]] = e["object"]
    out = set()
    for a in task["anomalies"]:
        for t in a["targets"]:
            if t in objs:
                o = objs[t]
                prefab = (
                    [o["prefab"]]
                    if o.get("prefab") not in (None, "box", "cylinder", "sphere", "capsule", "cone", "mesh")
                    else []
                )
                out.update(n.lower() for n in (o["name"], *o.get("synonyms", ()), *prefab))
    return out


def _corpus(built):
    demos, tasks = {}, []
    for f in sorted(built.glob("*/task.json")):
        t = json.loads(f.read_text())
        if t["meta"].get("example"):
            demos[t["id"]] = t
        else:
            tasks.append(t)
    return demos, tasks


def test_no_example_shares_the_target_of_an_evaluation_task(built, library):
    """The example shown with a task never shows that task's target (e.g. the historical example's
    "cola bottle" was market_14's target; the scale example's chair was the target of chair
    tasks): every evaluation task against the example the library gives it."""
    demos, tasks = _corpus(built)
    shown: dict[str, set[str]] = {}
    for t in tasks:
        cid = t["anomalies"][0]["category"]
        ex = library.get(cid, avoid=target_kinds(t))
        assert ex is not None, t["id"]
        shared = _targets(demos[ex.demo]) & _targets(t)
        assert not shared, (t["id"], ex.demo, sorted(shared))
        shown.setdefault(cid, set()).add(ex.demo)
    # the choice reveals nothing about a shipped task: one demonstration per category serves them all
    assert all(len(v) == 1 for v in shown.values()), shown
    assert len(tasks) >= 213 and len(shown) == len(CATEGORY_IDS)


def test_the_corpus_check_reports_a_task_that_collides_with_every_demonstration(built, tmp_path):
    """`example_conflicts` is the build-time check: clean on the shipped corpus; a new task whose
    target is every demonstration's kind is an error, one that displaces the first a warning."""
    assert example_conflicts(built) == ([], [])
    spec = REG.category("scale")
    first, principal = spec.demos[0], spec.demos[-1]
    for d in spec.demos:
        (tmp_path / d.id).mkdir()
        (tmp_path / d.id / "task.json").write_text((built / d.id / "task.json").read_text())

    def task(tid, objects):
        return {
            "id": tid,
            "meta": {},
            "scene": {"objects": objects},
            "anomalies": [{"category": "scale", "targets": [o["id"] for o in objects], "effects": []}],
        }

    both = task(
        "plant_and_chair",
        [
            {"id": "p", "name": "Potted Plant", "prefab": "plant"},
            {"id": "c", "name": "stool", "synonyms": ["Wooden chair"]},
        ],
    )
    one = task("just_a_plant", [{"id": "p", "name": "fern", "prefab": "plant"}])
    for t in (both, one):
        (tmp_path / t["id"]).mkdir()
        (tmp_path / t["id"] / "task.json").write_text(json.dumps(t))
    errors, warnings = example_conflicts(tmp_path)
    assert len(errors) == 1 and errors[0].startswith("plant_and_chair:") and principal.id in errors[0]
    assert "index.yaml" in errors[0]
    assert len(warnings) == 1 and warnings[0].startswith("just_a_plant:") and first.id in warnings[0]
    assert target_kinds(one) == {"fern", "plant"}


def test_choose_demo_takes_the_first_demonstration_with_no_shared_target_kind():
    kinds = {"a": frozenset({"chair", "seat"}), "b": frozenset({"plant"}), "c": frozenset({"lamp"})}
    assert choose_demo("abc", kinds.get) == "a"
    assert choose_demo("abc", kinds.get, {"Seat"}) == "b"  # case does not matter
    assert choose_demo("abc", kinds.get, {"seat", "plant"}) == "c"
    assert choose_demo("abc", kinds.get, {"chair", "plant", "lamp"}) is None


def test_target_kinds_reads_names_synonyms_and_prefabs_of_targets_only():
    task = {
        "scene": {
            "objects": [
                {"id": "b1", "name": "Bench", "synonyms": ["park bench"], "prefab": "bench"},
                {"id": "w", "name": "shop wall", "prefab": "box"},
                {"id": "l", "name": "lamp", "prefab": "street_lamp"},
            ]
        },
        "anomalies": [
            {
                "targets": ["b1", "w", "new"],
                "effects": [{"object": {"id": "new", "name": "ghost sack", "prefab": "sack"}}],
            }
        ],
    }
    assert target_kinds(task) == {
        "bench",
        "park bench",
        "shop wall",
        "ghost sack",
        "sack",
    }  # no "box", no lamp


def test_sessions_give_the_example_that_avoids_their_task_target(built, cache, tmp_path):
    """The session (harness side) passes its task's target kinds: a scale task about a chair is shown
    the plant demonstration, never the chair one, through observe and read_example alike."""
    from wac.audit.session import AuditSession, SessionOptions

    demos, tasks = _corpus(built)
    chair = next(t for t in tasks if t["anomalies"][0]["category"] == "scale" and "chair" in _targets(t))
    lib = ExampleLibrary(built, cache_dir=cache, width=160, height=120)
    s = AuditSession(built / chair["id"], tmp_path / "ep", SessionOptions(width=160, height=120), lib)
    try:
        res = s.call("read_example", {})
        assert not res.error and REG.category("scale").demos[0].explanation in res.text
        assert REG.category("scale").demo.explanation not in res.text
        assert "chair" in _targets(demos["scale_demo"]) and s.example_avoid & {"chair"}
    finally:
        s.close()
        lib.close()
