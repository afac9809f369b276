"""Diagnostics that say the actual cause (issue 27, family 7): a distance trigger that never switches
inside the bounds, a `leave` the walls never let fire, a changed part under what rests on it, a reach
through a glass pane, a start cut off by a wall.  Each was "no reachable point has a clear view of
it ... obstacles cut the start off", or a bare distance, or no error at all."""

from __future__ import annotations

import textwrap

from wac.compiler.pipeline import compile_project

COURT = """
scene court {
    description "A small walled courtyard with pallets, a glazed kiosk and crates."
    type urban
    era modern
    ground paving size (30, 30)
    bounds from (-6, -6) to (6, 6)
    start at (0, -5) yaw 90 deg
    walls: room from (-6, -6) to (6, 6) height 2.4 m material brick
    pallet_1: pallet at (3.5, 3.5)
    load_1: box size (1.2, 1.0, 0.8) on pallet_1 at (3.5, 3.5) material wood { name "shipping crate" }
    kiosk: room from (-4.5, 1.5) to (-1.5, 4.5) height 2.5 m material plaster {
        window s at 1.5 m width 2 m
        window e at 1.5 m width 2 m
    }
    lamp_1: floor_lamp at (-3, 2.2)
    crate_1: crate at (2, -2)
}
"""


def _one(tmp_path, task: str):
    (tmp_path / "scenes").mkdir(exist_ok=True)
    (tmp_path / "tasks").mkdir(exist_ok=True)
    (tmp_path / "scenes" / "court.wa").write_text(textwrap.dedent(COURT))
    (tmp_path / "tasks" / "t.wa").write_text('import "../scenes/court.wa"\n' + textwrap.dedent(task))
    res = compile_project([tmp_path / "tasks"], tmp_path, out=None)
    errors = [d for d in res.diagnostics if d.severity == "error"]
    assert len(errors) == 1, [d.render() for d in res.diagnostics]
    return errors[0]


def test_a_within_distance_the_bounds_never_leave_says_so(tmp_path):
    d = _one(tmp_path, "task t on court {\n    anomaly scale crate_1 by 1.8 when within 12 m\n}\n")
    assert d.code == "E605"
    assert "the agent is always within 12 m of `crate_1`" in d.message
    assert "every point of the bounds lies 0.0-10.9 m from `crate_1`" in d.message
    assert "`within 9.5 m`" in d.hint  # a distance with room beyond it


def test_a_beyond_distance_the_bounds_never_reach_says_so(tmp_path):
    d = _one(tmp_path, "task t on court {\n    anomaly lod_pop crate_1 when beyond 11 m\n}\n")
    assert d.code == "E605" and "so the `beyond` change is never on" in d.message, d.render()


def test_a_leave_the_walls_never_let_fire_says_how_far_the_agent_gets(tmp_path):
    d = _one(
        tmp_path,
        """
        task t on court {
            bounds from (-10, -10) to (10, 10)
            anomaly move crate_1 by (0, 0.6) when leave enter 3 m exit 13 m
        }
        """,
    )
    assert d.code == "E534", d.render()
    assert "the `leave` trigger can never fire: no reachable point is beyond `exit` 13 m" in d.message
    assert "walls close the area in" in d.message


def test_a_changed_part_under_what_rests_on_it_names_what_covers_it(tmp_path):
    d = _one(tmp_path, "task t on court {\n    anomaly missing_texture pallet_1 part slat_3\n}\n")
    assert d.code == "E534", d.render()
    assert (
        "the changed surface (part `slat_3` of `pallet_1`) is covered by `load_1` (shipping crate)"
        in d.message
    )
    assert "too plain" not in d.hint and "move `load_1` off it" in d.hint


def test_a_changed_part_that_shows_builds(tmp_path):
    # the control: a stringer's side shows below the load
    (tmp_path / "scenes").mkdir()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "scenes" / "court.wa").write_text(textwrap.dedent(COURT))
    for part in ("stringer_1",):
        (tmp_path / "tasks" / f"{part}.wa").write_text(
            f'import "../scenes/court.wa"\ntask t_{part} on court {{\n    anomaly missing_texture pallet_1 part {part}\n}}\n'
        )
    res = compile_project([tmp_path / "tasks"], tmp_path, out=None)
    assert not [d for d in res.diagnostics if d.severity == "error"], [d.render() for d in res.diagnostics]


def test_a_reach_through_a_glass_pane_names_the_pane(tmp_path):
    d = _one(tmp_path, "task t on court {\n    anomaly delay lamp_1\n}\n")
    assert d.code == "E534", d.render()
    assert "a glass pane, `kiosk_window_1` (window), stands between the agent and `lamp_1`" in d.message
    assert "the agent cannot reach through glass" in d.message


def test_a_start_cut_off_by_a_wall_says_so(tmp_path):
    d = _one(
        tmp_path,
        """
        task t on court {
            divider: box size (11.85, 0.2, 2.4) at (0, 0) material brick { name "wall" }
            anomaly float crate_1 by 0.3 m
            start at (0, 4) yaw -90 deg
        }
        """,
    )
    assert d.code == "E534", d.render()
    assert "cut off from the start" in d.message and "`divider` (wall) hides it" in d.message
