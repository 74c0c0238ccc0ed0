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
import torch  # noqa: E402

os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Split the suite over workers: a test module or a notebook (nbval) stays in one worker,
    since its tests share fixtures or one kernel; each papermill run goes its own way."""
    from xdist.scheduler import LoadScopeScheduling

    class CourseScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if "::test_notebook_runs_with_injected_parameters[" in nodeid:
                return nodeid
            return nodeid.split("::", 1)[0]

    return CourseScheduling(config, log)


# Modules whose tests start kernels or processes: seconds each, so they are handed out early.
_SLOW_MODULES = ("test_ddp_script.py", "test_wheel.py", "test_render.py", "test_notebooks.py")


def _cost_rank(item: pytest.Item) -> tuple[int, int]:
    """Sort key, longest work first: notebook runs (later notebooks take longer), then the
    modules that start processes, then everything else; the workers then finish together."""
    name = item.path.name
    number = int(name[:2]) if name[:2].isdigit() else 0
    if item.path.suffix == ".ipynb":
        return 0, -number
    if item.name.startswith("test_notebook_runs_with_injected_parameters"):
        return 0, -int(item.callspec.id[:2])
    return (1, 0) if name in _SLOW_MODULES else (2, 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the tests longest first; skip tests marked `gpu` when no CUDA device is present."""
    items.sort(key=_cost_rank)  # stable: a notebook's cells keep their order
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

