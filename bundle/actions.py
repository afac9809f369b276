"""The auditor's action space, declared once (Gymnasium's `action_space`): the ranges of the
reference harness's actions (UCSB-NLP-Chang/WorldAuditBench agent/tools.py).

The runtime checks actions against them, the audit's tool schemas publish them, the compiler's
self-check plans and the scripted agents stay inside them.  Whole numbers stay integers so the
published JSON Schemas read `"maximum": 4`, as the reference's do.
"""

from __future__ import annotations

MOVE_M = (0.3, 4)  # move distance_m, forward or back
TURN_DEG = (-180, 180)  # turn degrees, positive = right
LOOK_DEG = (-90, 90)  # look degrees, positive = down
WAIT_S = (0.5, 5)  # wait seconds

MAX_MOVE_M = float(MOVE_M[1])  # the longest single move, for planners that split a walk
# how the self-check reads a walk, shared by the planner that lays it out and the judges that read it:
PASSED_SLACK_M = 0.3  # a move that stopped less than this short of its distance was not blocked
CROSSED_SHARE = 0.8  # a move through a solid that covered this share of its distance crossed it
