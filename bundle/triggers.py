"""The bundle's trigger: when an anomaly of the perturbed world is on.  One model per kind
(`TriggerKind`), told apart by `kind`; `Trigger` is their union (see docs/bundle.md, section 4).
Re-exported by `wac.bundle.model`, where the rest of the bundle's models are."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Discriminator, Tag, model_serializer

from wac.bundle.base import Model, require_kind


class TriggerKind(StrEnum):
    always = "always"  # static: applied when the world loads
    revisit = "revisit"  # seen, then out of view >= away_s or moved >= leave_m; fires while unseen
    look_away = "look_away"  # fires on the seen -> out-of-view transition
    leave = "leave"  # agent came within enter_m, then went beyond exit_m
    after = "after"  # at sim time after_s, deferred while the target is in view
    every = "every"  # toggles on and off every period_s
    beyond = "beyond"  # active while the agent is farther than distance_m
    within = "within"  # active while the agent is nearer than distance_m
    contact = "contact"  # on the agent's contact with the target
    interact = "interact"  # when the agent interacts with the target

    # What each kind is, for every module that treats kinds alike (the compiler's plans, the runtime,
    # the self-check, the detectors): read these, never a list of kinds of one's own.
    @property
    def static(self) -> bool:
        """No trigger: the anomaly is there from the start (always)."""
        return self is TriggerKind.always

    @property
    def unseen(self) -> bool:
        """It fires while its target is out of view: the change is never watched happening, only
        found changed (revisit, look_away, leave, after)."""
        return self in _UNSEEN_KINDS

    @property
    def periodic(self) -> bool:
        """It toggles on a clock, whatever the agent does (every)."""
        return self is TriggerKind.every

    @property
    def viewpoint(self) -> bool:
        """It is on exactly while the agent stands beyond or within a distance (beyond, within)."""
        return self in (TriggerKind.beyond, TriggerKind.within)

    @property
    def level(self) -> bool:
        """It is on while a condition holds and re-evaluated every tick: never done, never deferred
        (every, beyond, within)."""
        return self.periodic or self.viewpoint

    @property
    def by_distance(self) -> bool:
        """It switches on the agent's distance to the target (beyond, within, leave)."""
        return self.viewpoint or self is TriggerKind.leave

    @property
    def by_touch(self) -> bool:
        """It fires on the agent's contact or interaction with the target, again on each one
        (contact, interact)."""
        return self in (TriggerKind.contact, TriggerKind.interact)


_UNSEEN_KINDS = frozenset({TriggerKind.revisit, TriggerKind.look_away, TriggerKind.leave, TriggerKind.after})


def _kind_required_unless_always(schema: dict, cls) -> None:
    """`kind` is written for every trigger but `always` (see `TriggerBase`): the schema requires it."""
    if cls.model_fields["kind"].default is not TriggerKind.always:
        require_kind(schema)


class TriggerBase(Model):
    """When an anomaly of the perturbed world is on (see docs/bundle.md, §4; runtime/triggers.py).

    `Trigger` is the union of the subclasses below, told apart by `kind` (a trigger without one is
    `always`); each declares exactly the fields its kind takes, so a field of another kind is
    rejected when the bundle is read.  Optional fields default to None (omitted from task.json): the
    runtime then falls back on `TRIGGER_DEFAULTS`.  `kind` is written unless it is `always`."""

    model_config = ConfigDict(json_schema_extra=_kind_required_unless_always)

    kind: TriggerKind

    @property
    def repeats(self) -> bool:
        """It re-arms after firing and toggles on each firing (`repeat`, where the kind takes it)."""
        return False

    @property
    def defers(self) -> bool:
        """It holds a firing back while its target is in view (`only_unseen`, where the kind takes it)."""
        return False

    def never_fires_within(self, span_m: float) -> str | None:
        """Why the trigger can never fire in an exploration area `span_m` across (None: it can)."""
        return None

    @model_serializer(mode="wrap")
    def _kind_unless_always(self, handler):
        data = handler(self)
        if self.kind is not TriggerKind.always:
            data["kind"] = self.kind.value  # task.json leaves out defaults; the tag must stay
        return data


class _Repeats:
    """Mixin: the kind takes `repeat`."""

    @property
    def repeats(self) -> bool:
        return self.repeat


class _Defers:
    """Mixin: the kind takes `only_unseen`."""

    @property
    def defers(self) -> bool:
        return self.only_unseen


class AlwaysTrigger(TriggerBase):
    """No trigger: on from the start."""

    kind: Literal[TriggerKind.always] = TriggerKind.always


class RevisitTrigger(_Repeats, TriggerBase):
    """Seen (within `seen_within_m`), then out of view `away_s` or left by `leave_m`; fires unseen."""

    kind: Literal[TriggerKind.revisit] = TriggerKind.revisit
    away_s: float | None = None
    leave_m: float | None = None
    seen_within_m: float | None = None
    repeat: bool = False  # re-arm on the next sighting and toggle each time

    def never_fires_within(self, span_m: float) -> str | None:
        if self.leave_m and self.away_s is None and self.leave_m > span_m:
            return (
                f"the revisit needs the agent to move {self.leave_m:g} m away, but the exploration area is "
                f"only {span_m:.1f} m across: it can never fire"
            )
        return None


class LookAwayTrigger(_Repeats, TriggerBase):
    """Fires on the seen (within `seen_within_m`) -> out-of-view transition."""

    kind: Literal[TriggerKind.look_away] = TriggerKind.look_away
    seen_within_m: float | None = None
    repeat: bool = False


class LeaveTrigger(_Repeats, _Defers, TriggerBase):
    """The agent came within `enter_m`, then went beyond `exit_m`."""

    kind: Literal[TriggerKind.leave] = TriggerKind.leave
    enter_m: float | None = None
    exit_m: float | None = None
    repeat: bool = False
    only_unseen: bool = True  # held back while the target is in view


class AfterTrigger(_Defers, TriggerBase):
    """At simulated time `after_s`."""

    kind: Literal[TriggerKind.after] = TriggerKind.after
    after_s: float | None = None
    only_unseen: bool = True  # held back while the target is in view


class EveryTrigger(TriggerBase):
    """Toggles on and off every `period_s` (off during the first period)."""

    kind: Literal[TriggerKind.every] = TriggerKind.every
    period_s: float | None = None


class BeyondTrigger(TriggerBase):
    """On while the agent is farther than `distance_m` from the target."""

    kind: Literal[TriggerKind.beyond] = TriggerKind.beyond
    distance_m: float | None = None


class WithinTrigger(TriggerBase):
    """On while the agent is nearer than `distance_m` to the target."""

    kind: Literal[TriggerKind.within] = TriggerKind.within
    distance_m: float | None = None


class ContactTrigger(_Repeats, TriggerBase):
    """Fires on the agent's contact with the target (again on each new contact with `repeat`)."""

    kind: Literal[TriggerKind.contact] = TriggerKind.contact
    repeat: bool = False


class InteractTrigger(_Repeats, TriggerBase):
    """Fires when the agent interacts with the target (again on each interaction with `repeat`)."""

    kind: Literal[TriggerKind.interact] = TriggerKind.interact
    repeat: bool = False


def _trigger_tag(v) -> str:
    """The union's tag: a trigger's kind; a document without one is `always`."""
    kind = v.get("kind", TriggerKind.always) if isinstance(v, dict) else getattr(v, "kind", None)
    return str(kind.value if isinstance(kind, TriggerKind) else kind)


Trigger = Annotated[
    Annotated[AlwaysTrigger, Tag("always")]
    | Annotated[RevisitTrigger, Tag("revisit")]
    | Annotated[LookAwayTrigger, Tag("look_away")]
    | Annotated[LeaveTrigger, Tag("leave")]
    | Annotated[AfterTrigger, Tag("after")]
    | Annotated[EveryTrigger, Tag("every")]
    | Annotated[BeyondTrigger, Tag("beyond")]
    | Annotated[WithinTrigger, Tag("within")]
    | Annotated[ContactTrigger, Tag("contact")]
    | Annotated[InteractTrigger, Tag("interact")],
    Discriminator(_trigger_tag),
]
TRIGGER_TYPES: dict[TriggerKind, type[TriggerBase]] = {
    get_args(a)[0].model_fields["kind"].default: get_args(a)[0] for a in get_args(get_args(Trigger)[0])
}
ALWAYS = AlwaysTrigger()


def new_trigger(kind: TriggerKind | str = TriggerKind.always, **fields) -> TriggerBase:
    """The trigger of `kind` with `fields` (checked as a bundle's would be)."""
    return TRIGGER_TYPES[TriggerKind(kind)](**fields)


@dataclass(frozen=True)
class TriggerDefaults:
    """What a task may leave out of its trigger, declared once: the compiler writes these values into
    the bundle, and the runtime falls back on them for a hand-made bundle that omits them."""

    away_s: float = 2.0  # revisit: out of view at least this long
    leave_m: float = 5.0  # revisit: or moved at least this far since last seen
    seen_within_m: float = 10.0  # revisit, look_away: seen only within this distance
    enter_m: float = 5.0  # leave: arms when the agent comes this close
    exit_m: float = 9.0  # leave: fires when it then goes this far away
    distance_m: float = 5.0  # beyond, within (the language requires it; hand-made bundles may not)


TRIGGER_DEFAULTS = TriggerDefaults()


# fields a /1 trigger wrote with its flat model's defaults whatever its kind: dropped where a kind
# does not take them (the compiler of /1 wrote `only_unseen: false` on beyond, within and contact)
_V1_FLAT = {"repeat": False, "only_unseen": True}


def upgrade_trigger_v1(trig: dict) -> dict:
    """A /1 trigger (one flat model) as /2: it loses the fields its kind does not take where they say
    what the kind does anyway (None, the flat defaults, `only_unseen` of a kind that never defers);
    anything else stays, and is then refused by the kind's model as a bundle error."""
    out = dict(trig)
    takes = TRIGGER_TYPES[TriggerKind(out.get("kind", TriggerKind.always))].model_fields
    for key in [k for k in out if k not in takes]:
        if out[key] is None or _V1_FLAT.get(key, object()) == out[key] or key == "only_unseen":
            del out[key]
    return out
