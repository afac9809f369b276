#!/usr/bin/env python3
"""Self-check of task `abnormal_trajectory_demo`: runs its plan in the clean and perturbed worlds.

Run `python selfcheck.py` (with wac installed); `wac selfcheck BUILD_DIR` checks many at once.
"""

import sys
from pathlib import Path

from wac.validation.selfcheck import main

sys.exit(main([str(Path(__file__).resolve().parent)]))
