"""Helpers for the course "Deep Learning on GPUs with PyTorch": devices, timing, memory, data."""

from course_utils.contracts import ParameterError, check_param, check_rule
from course_utils.datasets import CompressedImages, data_path, peaks, peaks_grid
from course_utils.datasheets import GpuPeak, datasheet_row, gpu_peak
from course_utils.devices import (available_devices, device_report, device_report_text,
                                  pick_device, synchronize)
from course_utils.exercises import check_answer, tally
from course_utils.gpu_check import diagnose_gpu
from course_utils.interactive import live_printout
from course_utils.launch import torchrun
from course_utils.memory import (SavedActivations, format_bytes, memory_report,
                                 memory_report_text)
from course_utils.models import peaks_model, peaks_step
from course_utils.profiling import (DATA_RANGE, ancestors, busy_seconds, draw_timeline,
                                    gpu_kernels, phase, profile_calls, profiler_activities,
                                    quiet_profiler, top_level_ops)
from course_utils.precision import cpu_has_bf16, half_dtype, pin_fp32_precision, tf32_capable
from course_utils.recorded_runs import recorded_files, show_recorded
from course_utils.results import (Recorded, load_results, results_file, results_folder,
                                  save_file, save_results)
from course_utils.seeding import seed_everything
from course_utils.timing import (OtherLoad, Timing, benchmark, format_rate,
                                 format_seconds, noise_summary)

__all__ = [
    "DATA_RANGE", "CompressedImages", "GpuPeak", "OtherLoad", "ParameterError", "Recorded", "SavedActivations", "Timing", "available_devices", "ancestors",
    "benchmark", "busy_seconds", "check_answer", "check_param", "check_rule",
    "cpu_has_bf16",
    "data_path", "datasheet_row", "device_report", "device_report_text", "diagnose_gpu",
    "draw_timeline",
    "format_bytes", "format_rate", "format_seconds", "gpu_kernels", "gpu_peak", "half_dtype", "live_printout",
    "load_results", "memory_report", "memory_report_text", "noise_summary", "peaks",
    "peaks_grid", "peaks_model", "peaks_step", "phase", "pick_device", "pin_fp32_precision",
    "profile_calls",
    "profiler_activities", "quiet_profiler", "recorded_files", "results_file", "results_folder", "save_file", "save_results", "seed_everything", "show_recorded",
    "synchronize", "tally", "tf32_capable", "top_level_ops", "torchrun",
]
