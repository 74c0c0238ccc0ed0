"""Parameters papermill injects when the tests execute each notebook: CPU-safe and small.

A notebook missing here runs with its own defaults plus DEVICE. Keys must be names from the
notebook's `parameters` cell (the hygiene tests check that).
"""

from __future__ import annotations

from typing import Any

CI_PARAMS: dict[str, dict[str, Any]] = {
    "00_check_your_setup.ipynb": {"SIZE": 256},
    "02_tensors_and_devices.ipynb": {"MAX_BYTES": 2**20, "MIN_RUN_TIME": 0.01, "MATMUL_SIZE": 128,
                                     "CHAIN_LENGTH": 10},
    "04_gpu_memory.ipynb": {"BATCH_SIZE": 256, "BATCH_SIZES": [32, 128, 512], "DEPTH": 4,
                            "BLOCK_MIB": 64, "WORK_MIB": 16, "MIN_RUN_TIME": 0.05},
}
