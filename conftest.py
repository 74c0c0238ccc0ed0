"""Test set-up for tests/ and notebooks/: GPU tests skip without CUDA; how the suite runs in parallel.

The suite runs in parallel (pytest-xdist, `-n auto` in pyproject.toml). Each worker process,
and every kernel or script it starts, gives PyTorch one CPU thread: several workers with
all-core thread pools each would oversubscribe the cores, and OpenMP threads that wait for a
core slow a step down many times over. Timings in the tests are then flagged noisy, as they
should be; no test depends on speed.
"""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):  # set before torch starts its thread pool
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Split the suite over workers: a test module or a notebook (nbval) stays in one worker,
    since its tests share fixtures or one kernel; the recording command's course run goes its
    own way, apart from the other tests of its module."""
    from xdist.scheduler import LoadScopeScheduling

    class CourseScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if ("::test_the_command_runs_the_recording_notebooks_at_the_ci_preset" in nodeid
                    or "test_edge_presets.py::" in nodeid):  # one notebook run each
                return nodeid
            return nodeid.split("::", 1)[0]

    return CourseScheduling(config, log)


# Rough seconds each part of the suite takes on a 2-core machine (measured 2026-11-29, both
# workers busy), used only to order the work: longest first, so that the workers finish
# together. A notebook's nbval run at its defaults; the recording command runs five of them at
# the CI preset in one test; anything unlisted counts as a second.
_NOTEBOOK_SECONDS = {"00": 9, "01": 20, "02": 28, "03": 8, "04": 11, "05": 9, "06": 31, "07": 15,
                     "08": 17, "09": 11, "10": 34, "11": 10, "12": 12, "13": 16, "14": 50,
                     "15": 36, "16": 59, "17": 14, "18": 14, "19": 86}
_COURSE_RUN_SECONDS = 100
_MODULE_SECONDS = {"test_render.py": 89, "test_gpu_run.py": 42, "test_wheel.py": 30,
                   "test_ddp_script.py": 24, "test_launch_mutants.py": 20, "test_launch.py": 14,
                   "test_contracts.py": 9, "test_lean_imports.py": 7, "test_timing.py": 5}


def _cost_rank(item: pytest.Item) -> float:
    """Sort key: minus the rough seconds of the notebook run or test module `item` is in."""
    name = item.path.name
    if item.path.suffix == ".ipynb":
        return -_NOTEBOOK_SECONDS.get(name[:2], 10)
    if item.name == "test_the_command_runs_the_recording_notebooks_at_the_ci_preset":
        return -_COURSE_RUN_SECONDS
    if name == "test_edge_presets.py":  # one notebook at the CI preset
        return -_NOTEBOOK_SECONDS.get(item.name.split("[")[-1][:2], 10)
    return -_MODULE_SECONDS.get(name, 1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the tests longest first; skip tests marked `gpu` when no CUDA device is present."""
    import torch  # here, not at the top: the main process of a parallel run never needs it

    items.sort(key=_cost_rank)  # stable: a notebook's cells keep their order
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

