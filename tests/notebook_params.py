"""Parameters papermill injects when the tests execute each notebook: CPU-safe and small.

A notebook missing here runs with its own defaults plus DEVICE. Keys must be names from the
notebook's `parameters` cell (the hygiene tests check that).
"""

from __future__ import annotations

from typing import Any

CI_PARAMS: dict[str, dict[str, Any]] = {
    "00_check_your_setup.ipynb": {"SIZE": 256},
    "01_why_gpus.ipynb": {"ELEMENTWISE_SIZES": [1_024, 65_536, 1_048_576],
                          "MATMUL_SIZES": [16, 128, 512], "CONV_SIZES": [4, 16, 32],
                          "MIN_RUN_TIME": 0.02, "FCN_WIDTH_SCALE": 0.25,
                          "FCN_MIN_RUN_TIME": 0.1},
    "02_tensors_and_devices.ipynb": {"MAX_BYTES": 2**20, "MIN_RUN_TIME": 0.01, "MATMUL_SIZE": 128,
                                     "CHAIN_LENGTH": 10},
    "03_training_loops.ipynb": {"N_EPOCHS_CPU": 40, "SWEEP_SIDES": [10, 32, 100, 200],
                                "MIN_RUN_TIME": 0.05, "LOADER_BATCH": 2000,
                                "CLS_SAMPLES": 2048, "CLS_EPOCHS": 2, "USE_COMPILE": False},
    "04_gpu_memory.ipynb": {"BATCH_SIZE": 256, "BATCH_SIZES": [32, 128, 512], "DEPTH": 4,
                            "BLOCK_MIB": 64, "WORK_MIB": 16, "MIN_RUN_TIME": 0.05},
    "05_multiple_devices.ipynb": {"GRID": 32, "BATCH_SIZE": 256, "N_EPOCHS": 4, "HIDDEN": 32,
                                  "TIMING_STEPS": 5, "TWO_NODES": False},
}
