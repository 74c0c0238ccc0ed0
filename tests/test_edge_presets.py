"""Notebooks 11, 13, 14 and 18 at the CI preset, whose values once broke them: a batch below
the slider's old minimum (11), a batch where autocast keeps more than float32 (12), an odd
grid that the sampler cannot split evenly (13), matrix products too small to be
compute-bound (17)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.nbtools import REPO
from tests.notebook_params import CI_PARAMS
from tools.gpu_run import run_notebook

EDGES = {"11_training_step_memory.ipynb": {"BATCH_SIZE": 8},
         "13_out_of_memory.ipynb": {"BATCH_SIZE": 128},
         "14_data_parallel_and_ddp.ipynb": {"GRID": 31},
         "18_what_bounds_a_step.ipynb": {"MATMUL_SIDE": 128}}


@pytest.mark.notebook
@pytest.mark.parametrize("name", sorted(EDGES))
def test_notebook_runs_at_the_ci_preset_with_its_edge_values(name: str, tmp_path: Path) -> None:
    params = {"DEVICE": "cpu", **CI_PARAMS[name]}
    assert EDGES[name].items() <= params.items(), "the CI preset lost its edge value"
    row = run_notebook(REPO / "notebooks" / name, tmp_path / name, params,
                       {**os.environ, "JUPYTER_PREFER_ENV_PATH": "1"}, timeout=600,
                       cell_timeout=300)
    assert row.status == "passed", row.error
