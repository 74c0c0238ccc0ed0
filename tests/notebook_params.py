"""Parameters papermill injects when the tests execute each notebook: CPU-safe and small.

They live in notebooks/params/ci.json, which `make course PARAMS=notebooks/params/ci.json` uses
too. A notebook missing there runs with its own defaults plus DEVICE. Keys must be names from
the notebook's `parameters` cell (the hygiene tests check that).
"""

from __future__ import annotations

import json
from typing import Any

from tests.nbtools import REPO

PARAMS_DIR = REPO / "notebooks" / "params"
CI_PARAMS: dict[str, dict[str, Any]] = json.loads((PARAMS_DIR / "ci.json").read_text())
