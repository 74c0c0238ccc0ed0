"""Helpers for the course "Deep Learning on GPUs with PyTorch": devices, timing, memory, data."""

from course_utils.datasets import peaks, peaks_grid
from course_utils.devices import (
    available_devices,
    device_report,
    format_report,
    is_cuda,
    pick_device,
    synchronize,
)
from course_utils.exercises import check_answer
from course_utils.gpu_check import diagnose_gpu
from course_utils.interactive import live_printout
from course_utils.memory import format_bytes, format_memory, memory_report
from course_utils.paths import data_path, repo_root
from course_utils.reproducibility import seed_everything
from course_utils.timing import Timing, benchmark, format_seconds, noise_summary

__all__ = [
    "Timing",
    "available_devices",
    "benchmark",
    "check_answer",
    "data_path",
    "device_report",
    "diagnose_gpu",
    "format_bytes",
    "format_memory",
    "format_report",
    "format_seconds",
    "is_cuda",
    "live_printout",
    "memory_report",
    "noise_summary",
    "peaks",
    "peaks_grid",
    "pick_device",
    "repo_root",
    "seed_everything",
    "synchronize",
]
