"""The in-context examples of C.1: a category's definition, figures and reference answer.

Text comes from the taxonomy registry (`categories.yaml`: name, definition, the demonstration's
figure captions and reference explanation), laid out like the paper's in-context examples
("Figure 1: ...", then the reference explanation).  A category has one or more demonstrations
(`CategorySpec.demos`: the alternatives of `taxonomy/examples/incontext/index.yaml`, then the
principal `taxonomy/examples/<category>.wa`); the one shown for a task is the first whose target
kinds (names, synonyms and prefab of its target objects, `target_kinds`) share nothing with the
task's own, so an example never shows the answer of the task it is given with (`choose_demo`).
Images are rendered from the chosen demonstration task (bundle named by its task id) by running its
self-check plan in a `WorldEnv` and keeping the frames of the captioned steps; nothing comes from
the task being audited.  Which frame shows which figure is the demo's `figure_frames` choice in
`categories.yaml` (variant, captioned-step index, optional extra actions) or, by default, the
perturbed run's captioned frames evenly spaced, first and last included.

Rendering is deterministic, and PNGs are cached on disk under a key made of the demo bundle's
manifest `version_id`, the frame size and the figure choice, so an evaluation of many tasks
renders each example once; each slot keeps the SHA-256 of its figures and a slot whose files do
not match is rendered again.  The cache lives in `$WAC_CACHE_DIR` when set, else in
`wac-examples` under `$XDG_CACHE_HOME` (or `~/.cache`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from wac.bundle.kinds import PRIMITIVES, choose_demo, target_kinds  # noqa: F401 - re-exported
from wac.bundle.reader import PLAN, TASK, Bundle
from wac.errors import BundleError

RENDER_REVISION = 1  # bump when the way figures are rendered changes (invalidates caches)

PREAMBLE = (
    "This demonstration comes from a different scene. It is supplied to show what this anomaly type "
    "looks like, not a question you need to answer; do not report it as a bug in your scene and do not "
    "cite its images as evidence."
)


# object shapes that name no kind of thing: two boxes are not "the same target"


@dataclass(frozen=True)
class Example:
    """One category's in-context example: text and captioned PNG figures."""

    category: str
    text: str
    figures: tuple[tuple[str, bytes], ...]  # (caption, PNG bytes), Figure 1 first
    demo: str = ""  # the demonstration task's id


def bundle_target_kinds(bundle: Path) -> frozenset[str]:
    """`target_kinds` of a built bundle (harness side: task.json holds the ground truth)."""
    return target_kinds(Bundle(Path(bundle)).task_json())


def default_cache_dir() -> Path:
    env = os.environ.get("WAC_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "wac-examples"


def example_text(spec, demo=None) -> str:
    """The example's text for one `CategorySpec` and one of its demonstrations (default: the
    principal), in the layout of the paper's C.1 / C.5."""
    d = demo or spec.demo
    lines = [f"## In-context example: {spec.name}", "", PREAMBLE, "", f"Definition. {spec.definition}", ""]
    lines += [f"Figure {i}: {cap}" for i, cap in enumerate(d.figures, start=1)]
    lines += ["", f"Reference answer (explanation). {d.explanation}"]
    return "\n".join(lines)


def figure_choice(demo, n_captioned: int) -> list[tuple[str, int, str]]:
    """(variant, captioned-frame index, extra actions) per figure; indices normalised to 0..n-1."""
    n = len(demo.figures)
    if demo.frames:
        out = []
        for variant, k, extra in demo.frames:
            i = k if k >= 0 else n_captioned + k
            out.append((variant, min(max(i, 0), max(n_captioned - 1, 0)), extra))
        return out
    if n_captioned <= 1 or n == 1:
        # one figure shows the exposing view, which the plan captions last
        return [("perturbed", max(n_captioned - 1, 0) if n == 1 else 0, "")] * n
    return [("perturbed", round(i * (n_captioned - 1) / (n - 1)), "") for i in range(n)]


def _captioned(plan) -> list[int]:
    return [i for i, s in enumerate(plan.steps) if s.caption]


def _run(bundle: Path, plan, variant: str, upto: int | None, extra: str, width: int, height: int):
    """Run the plan in `variant`; return the frames of its captioned steps (all of them, or with
    `upto`, the run stops at captioned step `upto`, runs `extra` and returns that final frame)."""
    from wac.runtime.actions import Action
    from wac.runtime.env import WorldEnv

    captioned = _captioned(plan)
    stop = captioned[upto] if upto is not None and captioned else None
    frames = []
    with WorldEnv(
        bundle, variant=variant, seed=0, width=width, height=height, film_interval_s=None, budget=10_000
    ) as env:
        for i, s in enumerate(plan.steps):
            if s.action != "mark":
                env.try_step({"action": s.action, **s.args})
            if s.caption:
                frames.append(env.history[-1].frame)
            if stop is not None and i == stop:
                break
        if upto is None:
            return frames or [env.history[-1].frame]
        for word in (w.strip() for w in extra.split(";")):
            if word:
                env.try_step(Action.parse(word))
        return [env.history[-1].frame]


def render_figures(bundle: Path, demo, width: int = 640, height: int = 480) -> list[bytes]:
    """The demo's figures as PNG bytes, rendered from its bundle (deterministic)."""
    from .frames import png_bytes

    plan = Bundle(bundle).plan()
    choice = figure_choice(demo, len(_captioned(plan)))
    runs: dict[str, list] = {}
    out = []
    for variant, k, extra in choice:
        if extra:
            frame = _run(bundle, plan, variant, k, extra, width, height)[0]
        else:
            if variant not in runs:
                runs[variant] = _run(bundle, plan, variant, None, "", width, height)
            frames = runs[variant]
            frame = frames[min(k, len(frames) - 1)]
        out.append(png_bytes(frame))
    return out


class ExampleLibrary:
    """In-context examples by category id, rendered once and cached (see module docstring).

    `build_dir` is a build holding the demonstration bundles (named by their task ids); a demo
    missing there is compiled from `taxonomy/examples/` into a temporary directory.
    """

    def __init__(
        self,
        build_dir: str | Path | None = None,
        cache_dir: str | Path | None = None,
        width: int = 640,
        height: int = 480,
    ) -> None:
        self.build_dir = Path(build_dir) if build_dir else None
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.width, self.height = int(width), int(height)
        self._examples: dict[str, Example] = {}  # by demonstration id
        self._bundles: dict[str, Path] = {}
        self._kinds: dict[str, frozenset[str]] = {}
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._lock = threading.Lock()
        self.rendered = 0  # figures rendered by this library (not read from the cache)

    def get(self, category_id: str | None, avoid=frozenset()) -> Example | None:
        """The example of a category for a task whose target kinds are `avoid` (see `choose_demo`);
        None for an unknown category, or when every demonstration of it shares a target kind
        with the task (an example must never show the task's answer)."""
        from wac.taxonomy.registry import registry

        if not category_id:
            return None
        spec = next((c for c in registry().categories if c.id == category_id), None)
        if spec is None:
            return None
        with self._lock:
            demo = choose_demo(spec.demos or (spec.demo,), self._demo_kinds, avoid)
            if demo is None:
                return None
            if demo.id not in self._examples:
                self._examples[demo.id] = self._make(spec, demo)
            return self._examples[demo.id]

    def _demo_kinds(self, demo) -> frozenset[str]:
        if demo.id not in self._kinds:
            self._kinds[demo.id] = bundle_target_kinds(self._bundle(demo))
        return self._kinds[demo.id]

    def _make(self, spec, demo) -> Example:
        bundle = self._bundle(demo)
        pngs = self._figures(demo, bundle)
        figures = tuple(
            (f"Example figure {i} (demonstration scene, not your scene): {cap}", png)
            for i, (cap, png) in enumerate(zip(demo.figures, pngs, strict=True), start=1)
        )
        return Example(str(spec.id), example_text(spec, demo), figures, demo.id)

    # --- the demo bundle -------------------------------------------------------------------------
    def _bundle(self, demo) -> Path:
        if demo.id in self._bundles:
            return self._bundles[demo.id]
        b = self.build_dir / demo.id if self.build_dir is not None else None
        if b is None or not (Bundle.exists(b) and Bundle(b).has(PLAN)):
            b = self._compile(demo)
        self._bundles[demo.id] = b
        return b

    def _compile(self, demo) -> Path:
        import wac.taxonomy
        from wac.compiler.pipeline import compile_project

        taxonomy = Path(wac.taxonomy.__file__).parent
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="wac-demos-")
        out = Path(self._tmp.name) / demo.id
        # the root above taxonomy/ (the checkout, or the installed `wac` package) names the source
        # `taxonomy/examples/<file>` as `wac build` does, so the bundle's version id is the same
        res = compile_project([taxonomy / "examples" / demo.task], taxonomy.parent, out=out, jobs=1)
        if not res.ok or not res.index:
            raise BundleError(
                f"the demonstration task {demo.task} does not compile: "
                + "; ".join(d.message for d in res.diagnostics)
            )
        return out / res.index[0]["id"]

    # --- figures and their cache -----------------------------------------------------------------
    def _key(self, demo, bundle: Path) -> str:
        b = Bundle.open(
            bundle, verify=True
        )  # the key is the demo's content hash: only true of an intact bundle
        manifest = b.manifest()
        choice = json.dumps(
            {"figures": len(demo.figures), "frames": demo.frames, "rev": RENDER_REVISION},
            sort_keys=True,
        )
        digest = hashlib.sha256(choice.encode()).hexdigest()[:12]
        return f"{manifest.version_id}-{self.width}x{self.height}-{digest}"

    def _figures(self, demo, bundle: Path) -> list[bytes]:
        n = len(demo.figures)
        slot = self.cache_dir / demo.id / self._key(demo, bundle)
        files = [slot / f"figure_{i}.png" for i in range(1, n + 1)]
        if all(f.is_file() for f in files):
            try:
                pngs = [f.read_bytes() for f in files]
                sums = json.loads((slot / "sha256.json").read_text(encoding="utf-8"))
                if sums == [hashlib.sha256(p).hexdigest() for p in pngs]:  # verified by content hash
                    return pngs
            except (OSError, ValueError):
                pass
            shutil.rmtree(slot, ignore_errors=True)  # damaged or unverifiable: render again
        pngs = render_figures(bundle, demo, self.width, self.height)
        self.rendered += len(pngs)
        self._store(slot, pngs)
        return pngs

    @staticmethod
    def _store(slot: Path, pngs: list[bytes]) -> None:
        """Write a complete set of figures atomically (parallel workers may race; either copy wins)."""
        try:
            slot.parent.mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=".tmp-", dir=slot.parent))
            for i, png in enumerate(pngs, start=1):
                (stage / f"figure_{i}.png").write_bytes(png)
            sums = [hashlib.sha256(p).hexdigest() for p in pngs]
            (stage / "sha256.json").write_text(json.dumps(sums), encoding="utf-8")
            try:
                stage.rename(slot)
            except OSError:  # another process stored it first, or a partial slot was left behind
                if not (slot / "sha256.json").is_file():
                    shutil.rmtree(slot, ignore_errors=True)
                    stage.rename(slot)
                else:
                    shutil.rmtree(stage, ignore_errors=True)
        except OSError:
            pass  # an unwritable cache only costs re-rendering

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def example_conflicts(build_dir: str | Path) -> tuple[list[str], list[str]]:
    """Check every evaluation task of a build (holding the demonstration bundles too) against its
    category's demonstrations.  Errors: a task sharing a target kind with every demonstration of
    its category (no example can be shown).  Warnings: a task whose example is not its category's
    first demonstration, because it shares that one's target kind (the choice then hints at the
    target: add or reorder a demonstration in taxonomy/examples/incontext/index.yaml)."""
    from wac.taxonomy.registry import registry

    build = Path(build_dir)
    kinds: dict[str, frozenset[str]] = {}

    def demo_kinds(demo) -> frozenset[str]:
        if demo.id not in kinds:
            if not Bundle.exists(build / demo.id):
                raise BundleError(f"{build}: no bundle {demo.id} (build taxonomy/examples too)")
            kinds[demo.id] = bundle_target_kinds(build / demo.id)
        return kinds[demo.id]

    errors, warnings = [], []
    for task_file in sorted(build.glob(f"*/{TASK}")):
        task = Bundle(task_file.parent).task_json()
        if task.get("meta", {}).get("example") or not task.get("anomalies"):
            continue
        spec = registry().category(task["anomalies"][0]["category"])
        demos = spec.demos or (spec.demo,)
        mine = target_kinds(task)
        chosen = choose_demo(demos, demo_kinds, mine)
        if chosen is None:
            errors.append(
                f"{task['id']}: shares a target kind ({', '.join(sorted(mine))}) with every demonstration "
                f"of {spec.id} ({', '.join(d.id for d in demos)}): no in-context example can be shown; "
                f"add a demonstration with another target to taxonomy/examples/incontext/index.yaml"
            )
        elif chosen is not demos[0]:
            shared = sorted(demo_kinds(demos[0]) & mine)
            warnings.append(
                f"{task['id']}: shown {chosen.id}, not {demos[0].id}, because both target "
                f"{', '.join(shared)}: the choice hints at the target"
            )
    return errors, warnings
