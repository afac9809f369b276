"""Broken tasks the compiler must reject (issue 9, compiler side): file -> ("compiler", message words).

Kept apart from `test_broken.CASES` (which merges them) so that the compiler's and the
self-check's cases can grow independently.
"""

COMPILER_CASES = {
    # class 4: an anomaly on an object the scene excludes from evaluation
    "benign_target.wa": ("compiler", "which the scene marks `benign`"),
    # class 5: give-away text, in every string the auditor reads
    "giveaway_description.wa": ("compiler", "the scene description gives the anomaly away"),
    "giveaway_hint_plural.wa": ("compiler", "the hint gives the anomaly away"),
    "giveaway_synonym.wa": ("compiler", "names the target (wooden fence) and its defect (walk through)"),
    "giveaway_interactive_name.wa": ("compiler", "an interactive object's name gives the anomaly away"),
    "giveaway_id_with_spaces.wa": ("compiler", "names the target (storage box) and its defect (sunk)"),
    # a second defect in the perturbed world, or a change where the auditor cannot go
    "move_into_fence.wa": ("compiler", "in the perturbed world `crate_1` interpenetrates `fence_1`"),
    "spawn_inside_crate.wa": ("compiler", "in the perturbed world `crate_8` interpenetrates `crate_1`"),
    "move_out_of_bounds.wa": ("compiler", "outside the exploration bounds"),
    # authoring slips that used to pass silently or with an unhelpful message
    "trigger_as_clause.wa": ("compiler", "unknown clause `revisit` in `hide`"),
    "cr_line_ends.wa": ("compiler", "unexpected character U+000D CARRIAGE RETURN"),
}
