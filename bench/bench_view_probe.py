"""The runtime's "is the target in view?" by pixels (`runtime/render_probe.py`) against the sampled-point
rule it replaced: self-check time, and agreement with a full 640x480 segmentation.

    .venv/bin/python bench/bench_view_probe.py [--rounds 3] [--agreement] BUILD [TASK ...]

Without TASKs, every bundle of BUILD whose anchor anomaly has a trigger that must fire unseen
(revisit, look_away, leave, after).  Each round self-checks every task twice in this one process,
alternating the two rules so both see the same machine load: the runtime as it is (pixels), then
with the old rule patched in (sample points of the target's box inside the view frustum with a
clear physics ray, evaluated every tick).  It prints, per task, the median seconds of each and both
verdicts.  `--agreement` also walks each task's plan in a 640x480 world and compares, every other
tick, the probe's verdict and the old rule's with the target's pixels in a full 640x480
segmentation (the target drawn as it is; stand-ins for added or re-posed objects left out, so a
task whose target is added is not comparable).  `--rounds 0` skips the timing.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

UNSEEN = ("revisit", "look_away", "leave", "after")


def sampled_in_view(env, an) -> bool:
    """The rule the runtime used before: any sample point of the target's box (its centre and inner
    corners, then a grid) inside the frustum, within 60 m, with a clear ray or one landing on it."""
    from wac.runtime.geometry import box_grid, corner_points

    box = env._target_box(an)
    if box is None:
        return False
    lo, hi = box
    c = (lo + hi) / 2
    inner = [c] + [c + 0.8 * (np.array(k) - c) for k in corner_points(lo, hi)]
    return _any_visible(env, an, inner) or _any_visible(env, an, box_grid(lo, hi))


def _any_visible(env, an, pts) -> bool:
    cam = env.camera()
    eye = np.asarray(cam.eye)
    f, up = cam.forward(), cam.up()
    right = np.cross(f, up)
    th = math.tan(math.radians(env.hfov) / 2)
    tv = th * env.height / env.width
    cand = []
    for p in pts:
        d = p - eye
        z = float(d @ f)
        if z <= 0.05 or np.linalg.norm(d) > 60.0:
            continue
        if abs(float(d @ right)) / z <= th and abs(float(d @ up)) / z <= tv:
            cand.append(p)
    if not cand:
        return False
    if len(cand) > 48:
        cand = [cand[i] for i in np.linspace(0, len(cand) - 1, 48).round().astype(int)]
    targets = set(an.spec.targets) | {e.target for e in an.spec.effects if e.target}
    for ref, frac in env.physics.rays([eye] * len(cand), cand):
        if ref is None or ref.kind == "agent" or (ref.object_id in targets) or frac > 0.97:
            return True
    return False


class OldRule:
    """Patch the sampled-point rule into the runtime (and its every-tick evaluation) while in use."""

    def __enter__(self):
        from wac.runtime.triggers import AnomalyTriggers, TriggerState

        self.saved = (AnomalyTriggers.target_in_view, TriggerState.needs_view)
        AnomalyTriggers.target_in_view = sampled_in_view
        TriggerState.needs_view = lambda st, t, d: not st.done and st.trigger.kind.value in UNSEEN
        return self

    def __exit__(self, *exc):
        from wac.runtime.triggers import AnomalyTriggers, TriggerState

        AnomalyTriggers.target_in_view, TriggerState.needs_view = self.saved


def unseen_tasks(build: Path) -> list[str]:
    out = []
    for f in sorted(build.glob("*/task.json")):
        t = json.loads(f.read_text())
        plan = json.loads((f.parent / "selfcheck.json").read_text())
        if t["anomalies"][plan.get("anomaly", 0)]["trigger"].get("kind") in UNSEEN:
            out.append(t["id"])
    return out


def agreement(bundle: Path) -> tuple[int, int, int, int]:
    """(ticks, ticks in view at 640x480, probe verdicts that differ, old-rule verdicts that differ)."""
    import dataclasses

    from wac.bundle.onscreen import on_screen
    from wac.bundle.reader import Bundle
    from wac.runtime.env import WorldEnv
    from wac.runtime.triggers import LiveAnomaly, TriggerState
    from wac.validation.capture import Step

    b = Bundle.open(bundle)
    plan, task = b.plan(), b.task()
    spec = task.anomalies[plan.anomaly]
    env = WorldEnv(bundle, variant="clean", film_interval_s=None, shadows=False)
    an = LiveAnomaly(plan.anomaly, spec, TriggerState(spec.trigger))
    rows = []

    def tick() -> None:
        if env.ticks % 2:
            return
        probe = dataclasses.replace(env._probe(an), stand_ins=())
        px = env.renderer.probe_px(env.camera(), probe)
        idx = [env.world.objects[o].index for o in probe.objects if env.world.objects[o].present]
        full = float(np.isin(env.render_ids(), idx).sum())  # 640x480 already
        rows.append((on_screen(px), on_screen(full), sampled_in_view(env, an)))

    env.add_tick_listener(tick)
    for s in plan.steps:
        st = Step.of(s)
        if st.action != "mark":
            env.step({"action": st.action, **st.kwargs})
    env.close()
    a = np.array(rows, dtype=bool)
    return len(a), int(a[:, 1].sum()), int((a[:, 0] != a[:, 1]).sum()), int((a[:, 2] != a[:, 1]).sum())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("tasks", nargs="*")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--agreement", action="store_true")
    args = p.parse_args(argv)

    from wac.validation.bundlecheck import check_bundle

    build = Path(args.build)
    tasks = args.tasks or unseen_tasks(build)
    times: dict[str, dict[str, list[float]]] = {t: {"pixels": [], "points": []} for t in tasks}
    verdicts: dict[str, dict[str, bool]] = {t: {} for t in tasks}
    if args.rounds:
        check_bundle(build / tasks[0])  # warm up (imports, the first GL context, shader compiles): untimed
    for r in range(args.rounds):
        for t in tasks:
            for rule in ("pixels", "points") if r % 2 == 0 else ("points", "pixels"):
                t0 = time.perf_counter()
                if rule == "points":
                    with OldRule():
                        res = check_bundle(build / t)
                else:
                    res = check_bundle(build / t)
                times[t][rule].append(time.perf_counter() - t0)
                verdicts[t][rule] = res.passed
    if args.rounds:
        print("| task | pixels s | points s | ratio | pixels | points |")
        print("|---|---|---|---|---|---|")
        tot = {"pixels": 0.0, "points": 0.0}
        for t in tasks:
            m = {k: statistics.median(v) for k, v in times[t].items()}
            for k in tot:
                tot[k] += m[k]
            ok = {k: "pass" if v else "FAIL" for k, v in verdicts[t].items()}
            ratio = m["pixels"] / m["points"]
            print(
                f"| {t} | {m['pixels']:.2f} | {m['points']:.2f} | {ratio:.2f} | {ok['pixels']} | {ok['points']} |"
            )
        ratio = tot["pixels"] / tot["points"]
        print(f"| all {len(tasks)} | {tot['pixels']:.1f} | {tot['points']:.1f} | {ratio:.2f} | | |")
    if args.agreement:
        print("\n| task | ticks | in view (640x480) | probe differs | points differ |")
        print("|---|---|---|---|---|")
        for t in tasks:
            n, seen, dp, do = agreement(build / t)
            print(f"| {t} | {n} | {seen} | {dp} | {do} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
