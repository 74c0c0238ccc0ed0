"""Record the course on this machine: every notebook at each preset, the GPU tests, one folder.

    python -m tools.gpu_run                      # best device, notebooks/params/gpu.json
    python -m tools.gpu_run --presets defaults,gpu  # the students' defaults first, then gpu.json
    python -m tools.gpu_run --presets ci         # the small CI preset only (the test suite's run)
    python -m tools.gpu_run --deadline 500 --archive run.tar.gz  # a machine lent for minutes
    make gpu-run                                 # the same as the first line, after installing

Each notebook runs headless (papermill) in a process of its own, with a time limit for each cell
and one for the whole notebook; a failure or a time-out is written down and the run goes on.
The last preset records: notebooks that take SAVE_RESULTS get it set to True, and
COURSE_RESULTS_DIR points their recordings at the run's folder. The folder then holds:

    executed/<preset>/NN_name.ipynb   each executed notebook, outputs and all
    results/<device>.json             the recording, with its `headline` block (see data/README.md)
    results/<device>/NN_name.ipynb    the recording preset's executed notebooks, beside it
    summary.md, summary.json          one row per notebook and preset, the GPU tests, the headline
    gpu-tests.log                     the output of `pytest -m gpu`
    gpu-clocks.csv                    with nvidia-smi: each GPU's clocks, power, temperature and
                                      throttle reasons every half second through the run

With --deadline SECONDS no notebook runs past that time from the start, and none starts with
less than MIN_START seconds left ("not run"); summary.md and summary.json are rewritten after
each notebook, so a run cut short still leaves what finished. The run clears the environment
variables that change CUDA's behaviour (CUDA_BEHAVIOUR_VARIABLES) and names those it found.

Where nvidia-smi is present, the recording's `gpu_log` block gives, per notebook, the SM clock
(lowest, median, highest), the highest power draw and the throttle reasons nvidia-smi named,
read from gpu-clocks.csv: a figure below its datasheet peak can then be read against the clock
it ran at.

The exit status is 0 only when every notebook and the GPU tests passed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the course's checkout
NOTEBOOKS = ROOT / "notebooks"
PARAMS = NOTEBOOKS / "params"
# The figures a GPU recording's headline block holds, each written by the notebook that
# measures it (data/README.md). Where bfloat16 is missing the notebook writes the float16
# figure instead; `shi_ms_per_batch` maps each network to its time per mini-batch.
HEADLINE = {
    "h2d_pinned_GBps": "04", "h2d_pageable_GBps": "04", "d2h_pinned_GBps": "04", "d2d_GBps": "04",
    "matmul_fp32_TFLOPs": "02", "matmul_bf16_TFLOPs|matmul_fp16_TFLOPs": "02",
    "shi_ms_per_batch": "02",
    "peaks_mlp_epoch_ms_eager": "08", "peaks_mlp_epoch_ms_fast": "09",
    "peaks_mlp_speedup_vs_cpu_40000": "08", "crossover_samples": "08",
}
NOTEBOOK_TIMEOUT = 3600  # seconds for one notebook, start to end
MIN_START = 20  # seconds: with --deadline, a notebook is not started with less than this left
# Set in the shell, these change what CUDA does under the notebooks (TF32 matmuls, synchronous
# launches, no caching allocator): the run clears them and its summary names those it found.
CUDA_BEHAVIOUR_VARIABLES = ("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "CUDA_LAUNCH_BLOCKING",
                            "PYTORCH_NO_CUDA_MEMORY_CACHING")
CELL_TIMEOUT = 900  # seconds for one cell (tools.render's limit)
TESTS_TIMEOUT = 1200  # seconds for the GPU tests


@dataclass
class Row:
    """One notebook run at one preset: how it ended and how long it took."""

    notebook: str
    preset: str
    status: str  # "passed", "failed", "timed out" or "not run" (the run's deadline came first)
    seconds: float
    error: str = ""  # the failing cell and its error, or what timed out
    started: float = 0.0  # when it started, in seconds since the epoch (0: not run)


def load_preset(name: str) -> dict[str, dict[str, Any]]:
    """A preset's parameters per notebook: 'defaults' is none, else notebooks/params/NAME.json or a path."""
    if name == "defaults":
        return {}
    path = Path(name) if name.endswith(".json") else PARAMS / f"{name}.json"
    if not path.is_file():
        known = ", ".join(["defaults"] + sorted(p.stem for p in PARAMS.glob("*.json")))
        raise SystemExit(f"no preset {name!r}: name one of {known}, or a JSON file's path")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(f"{path} must hold a JSON object: notebook file name -> parameters")
    return data


def parameter_names(notebook: Path) -> set[str]:
    """The names the notebook's `parameters` cell assigns."""
    import ast

    import nbformat

    for cell in nbformat.read(notebook, as_version=4).cells:
        if "parameters" in cell.metadata.get("tags", []):
            tree = ast.parse(cell.source)
            return {t.id for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)}
    return set()


# The code each notebook's own process runs: papermill, with its outcome written as JSON.
_CHILD = """
import json, sys
from pathlib import Path
from tools.render import execute  # first: tools/__init__ skips a slow import under papermill's
from papermill.exceptions import PapermillExecutionError
src, dst, status = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
params, cell_timeout = json.loads(sys.argv[4]), int(sys.argv[5])
try:
    execute(src, dst, params, progress=False, cell_timeout=cell_timeout, cwd=src.parent)
    out = {"status": "passed"}
except PapermillExecutionError as err:
    # Count cells as in the source notebook: papermill inserted its parameters cell.
    import nbformat
    cells = nbformat.read(dst, as_version=4).cells
    injected = [i for i, c in enumerate(cells) if "injected-parameters" in c.metadata.get("tags", [])]
    index = err.cell_index - (1 if injected and err.cell_index > injected[0] else 0)
    first = (err.source or "").strip().splitlines()[:1]
    out = {"status": "failed", "error": f"cell {index} ({first[0] if first else ''!r}): "
           f"{err.ename}: {str(err.evalue).strip().splitlines()[0] if str(err.evalue).strip() else ''}"}
except TimeoutError as err:
    out = {"status": "timed out", "error": str(err)}
except Exception as err:
    out = {"status": "failed", "error": f"{type(err).__name__}: {err}"}
status.write_text(json.dumps(out))
"""


def run_notebook(source: Path, executed: Path, params: dict[str, Any], env: dict[str, str],
                 timeout: float, cell_timeout: int) -> Row:
    """Execute one notebook in a process of its own; kill it and its kernel if it runs too long."""
    executed.parent.mkdir(parents=True, exist_ok=True)
    status = executed.with_suffix(".status.json")
    status.unlink(missing_ok=True)
    start = time.perf_counter()
    # A session of its own, so that a time-out ends the kernel (a grandchild) too.
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(source), str(executed), str(status),
         json.dumps(params), str(cell_timeout)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return Row(source.name, "", "timed out", time.perf_counter() - start,
                   f"the whole notebook ran longer than {timeout:.0f} s and was stopped")
    seconds = time.perf_counter() - start
    if not status.is_file():
        tail = " | ".join((log or "").strip().splitlines()[-3:])
        return Row(source.name, "", "failed", seconds, f"the run stopped with no result: {tail}")
    outcome = json.loads(status.read_text())
    status.unlink()
    return Row(source.name, "", outcome["status"], seconds, outcome.get("error", ""))


def run_gpu_tests(log: Path, env: dict[str, str], timeout: float) -> tuple[str, str]:
    """Run the tests marked `gpu` (skipped without a CUDA GPU); return the status and pytest's last line."""
    cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-n", "0", "-p", "no:cacheprovider",
           "-q", "tests"]
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        log.write_text(f"{' '.join(cmd)}\nran longer than {timeout:.0f} s and was stopped\n")
        return "timed out", f"longer than {timeout:.0f} s"
    log.write_text(done.stdout + done.stderr)
    lines = [ln.strip("= ") for ln in done.stdout.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else "no output"
    return ("passed" if done.returncode == 0 else "failed"), last


GPU_LOG_FIELDS = ("timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,"
                  "utilization.gpu,clocks_event_reasons.active")


def start_gpu_log(path: Path, interval_ms: int = 500) -> subprocess.Popen | None:
    """Start nvidia-smi writing GPU_LOG_FIELDS to `path` every `interval_ms`; None without it."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    return subprocess.Popen([exe, f"--query-gpu={GPU_LOG_FIELDS}", "--format=csv",
                             "-lms", str(interval_ms), "-f", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def gpu_log_summary(log: Path, rows: list[Row]) -> dict[str, dict[str, Any]]:
    """Per notebook run, from nvidia-smi's log: samples, SM clock [lowest, median, highest] in
    MHz, highest power in W, and the throttle reasons seen (bit masks other than none)."""
    import csv
    import datetime
    import statistics

    samples = []
    with log.open(encoding="utf-8", errors="replace") as f:
        for rec in csv.reader(f, skipinitialspace=True):
            try:  # local time, as nvidia-smi writes it
                when = datetime.datetime.strptime(rec[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                sm, power = float(rec[2].split()[0]), float(rec[4].split()[0])
            except (ValueError, IndexError):
                continue  # the header, or a field this GPU does not report ([N/A])
            samples.append((when, sm, power, rec[7].strip() if len(rec) > 7 else ""))
    summary = {}
    for r in rows:
        inside = [s for s in samples if r.started and r.started <= s[0] <= r.started + r.seconds]
        if inside:
            clocks = [s[1] for s in inside]
            summary[f"{r.notebook} ({r.preset})"] = {
                "samples": len(inside),
                "sm_clock_MHz": [min(clocks), statistics.median(clocks), max(clocks)],
                "power_max_W": max(s[2] for s in inside),
                "reasons": sorted({s[3] for s in inside if _mask(s[3])})}
    return summary


def _mask(text: str) -> int:
    """A throttle-reasons bit mask ("0x...0004") as a number; 0 where nvidia-smi gave none."""
    try:
        return int(text, 16)
    except ValueError:
        return 0


def headline_gaps(headline: dict[str, Any]) -> list[str]:
    """The headline figures missing or None in a recording, each with the notebook that writes it."""
    gaps = []
    for keys, notebook in HEADLINE.items():
        if all(headline.get(k) is None for k in keys.split("|")):
            gaps.append(f"{keys.replace('|', ' or ')} (notebook {notebook})")
    return gaps


def write_summary(out: Path, meta: dict[str, Any], rows: list[Row], tests: tuple[str, str],
                  recording: Path | None, cleared: list[str] = ()) -> str:
    """Write summary.md and summary.json into `out`; return the Markdown."""
    data = json.loads(recording.read_text(encoding="utf-8")) if recording else {}
    headline = data.get("headline", {})
    gaps = headline_gaps(headline)
    lines = [f"# Course run on {meta['device_name']}", "",
             f"{meta['date']}: device {meta['device']}, torch {meta['torch']}, CUDA "
             f"{meta['cuda'] or '-'}, driver {meta['driver'] or '-'}, CPU {meta['cpu']} "
             f"({meta['cpu_threads']} threads), Python {meta['python']}.", "",
             "Cleared before the run (they change CUDA's behaviour): "
             + (", ".join(cleared) if cleared else "none was set") + ".", "",
             "| notebook | preset | result | wall time | error |", "|---|---|---|---|---|"]
    lines += [f"| {r.notebook} | {r.preset} | {r.status} | {r.seconds:.0f} s | "
              f"{r.error.replace('|', '/')} |" for r in rows]
    lines += ["", f"GPU tests (`pytest -m gpu`): {tests[0]} ({tests[1]}).", ""]
    if recording:
        lines += [f"Recording: {recording.relative_to(out)}", "", "| headline | value |",
                  "|---|---|"]
        lines += [f"| {k} | {json.dumps(v)} |" for k, v in headline.items()]
        lines += ["", "Missing from the headline: " + ("; ".join(gaps) if gaps else "nothing")]
    else:
        lines += ["No recording was written (no notebook saved results)."]
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text, encoding="utf-8")
    (out / "summary.json").write_text(json.dumps({
        **meta, "cleared_variables": list(cleared), "runs": [asdict(r) for r in rows],
        "gpu_tests": {"status": tests[0], "summary": tests[1]},
        "recording": str(recording.relative_to(out)) if recording else None,
        "headline": headline, "headline_missing": gaps}, indent=1) + "\n", encoding="utf-8")
    return text


def course_commit() -> str | None:
    """The course's commit: $COURSE_COMMIT where set (a copy without .git), else git's HEAD."""
    if os.environ.get("COURSE_COMMIT"):
        return os.environ["COURSE_COMMIT"]
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _recording(out: Path) -> Path | None:
    """The run's one recording, if the notebooks have written exactly one."""
    recordings = sorted((out / "results").glob("*.json"))
    return recordings[0] if len(recordings) == 1 else None


def machine(device: str | None) -> dict[str, Any]:
    """What the run is on: the device, the software versions, the NVIDIA driver, the CPU."""
    import platform

    import torch

    from course_utils import device_report
    from course_utils.gpu_check import probe_gpu

    report = device_report(device)
    gpus = probe_gpu().nvidia_gpus
    return {"device": report["device"], "device_name": report["device_name"],
            "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
            "cuda": torch.version.cuda, "driver": gpus[0].driver if gpus else None,
            "cpu": report["cpu_model"], "cpu_threads": torch.get_num_threads(),
            "python": platform.python_version(), "gpu_count": torch.cuda.device_count(),
            "topology": gpu_topology()}


def gpu_topology() -> str | None:
    """`nvidia-smi topo -m`: how the machine's GPUs are linked, as the machine reports it
    (course_utils.recorded_runs.pair_link reads it); None without nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "topo", "-m"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    """Command line: python -m tools.gpu_run [--presets P,...] [--device D] [--out DIR] [NOTEBOOK ...]."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: every course notebook)")
    parser.add_argument("--presets", default="gpu",
                        help="comma-separated presets in order: 'defaults', a name in "
                             "notebooks/params/ (gpu, ci) or a JSON file; the last one records "
                             "(default: gpu)")
    parser.add_argument("--device", default=None, help="force a device, e.g. cuda:0 (default: the best here)")
    parser.add_argument("--out", type=Path, default=None,
                        help="the run's folder (default: build/gpu-run/<device>-<date-time>)")
    parser.add_argument("--timeout", type=float, default=NOTEBOOK_TIMEOUT,
                        help=f"seconds one notebook may run (default {NOTEBOOK_TIMEOUT})")
    parser.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT,
                        help=f"seconds one cell may run (default {CELL_TIMEOUT})")
    parser.add_argument("--deadline", type=float, default=None,
                        help="seconds the whole run may take: a notebook with less than "
                             f"{MIN_START} s left is not started, and none runs past it "
                             "(default: no deadline)")
    parser.add_argument("--no-tests", action="store_true", help="skip the GPU-marked tests")
    parser.add_argument("--archive", type=Path, default=None,
                        help="also pack the run's folder into this .tar.gz file at the end "
                             "(one file to copy off a machine that is lent for minutes)")
    args = parser.parse_args(argv)

    notebooks = args.notebooks or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    for nb in notebooks:
        if not nb.is_file():
            parser.error(f"{nb} is not a notebook file")
    names = [p.strip() for p in args.presets.split(",") if p.strip()]
    if not names:
        parser.error("--presets names no preset")
    presets = {name: load_preset(name) for name in names}
    meta = machine(args.device)
    slug = re.sub(r"[^a-z0-9]+", "-", meta["device_name"].lower()).strip("-")
    out = (args.out or ROOT / "build" / "gpu-run" / f"{slug}-{time.strftime('%Y%m%d-%H%M')}").resolve()
    (out / "results").mkdir(parents=True, exist_ok=True)
    cleared = [k for k in CUDA_BEHAVIOUR_VARIABLES if k in os.environ]
    env = {**{k: v for k, v in os.environ.items() if k not in CUDA_BEHAVIOUR_VARIABLES},
           "COURSE_RESULTS_DIR": str(out / "results"),
           "JUPYTER_PREFER_ENV_PATH": "1", "PYTHONUNBUFFERED": "1"}
    if cleared:
        print(f"cleared {', '.join(cleared)}: they change CUDA's behaviour under the notebooks")
    started = time.perf_counter()
    gpu_log = start_gpu_log(out / "gpu-clocks.csv")
    if gpu_log is not None:
        import atexit

        atexit.register(gpu_log.terminate)  # however the run ends

    def executed(preset: str) -> Path:  # a JSON file's preset by its name, wherever it is
        return out / "executed" / (Path(preset).stem if preset.endswith(".json") else preset)

    def left() -> float:  # seconds before the deadline
        return float("inf") if args.deadline is None else args.deadline - (time.perf_counter() - started)

    tests = ("not run", "--no-tests")
    print(f"Recording the course on {meta['device_name']} ({meta['device']}) into {out}",
          flush=True)

    rows = []
    for i, (name, preset) in enumerate(presets.items()):
        records = i == len(presets) - 1
        for source in notebooks:
            params = {"DEVICE": args.device, **preset.get(source.name, {})}
            if records and "SAVE_RESULTS" in parameter_names(source):
                params["SAVE_RESULTS"] = True
            print(f"  {name:>8s}  {source.name} ...", end=" ", flush=True)
            if left() < MIN_START:
                row = Row(source.name, name, "not run", 0.0,
                          f"the run's deadline ({args.deadline:.0f} s) came first")
            else:
                begun = time.time()
                row = run_notebook(source.resolve(), executed(name) / source.name,
                                   params, env, min(args.timeout, left()), args.cell_timeout)
                row.preset, row.started = name, begun
            rows.append(row)
            print(f"{row.status} in {row.seconds:.0f} s" + (f": {row.error}" if row.error else ""),
                  flush=True)
            # After each notebook: a run cut short still leaves what finished, summarised.
            write_summary(out, meta, rows, tests, _recording(out), cleared)
    if not args.no_tests:
        print("  GPU tests (pytest -m gpu) ...", end=" ", flush=True)
        tests = (run_gpu_tests(out / "gpu-tests.log", env, min(TESTS_TIMEOUT, left()))
                 if left() >= MIN_START else ("not run", "the run's deadline came first"))
        print(f"{tests[0]}: {tests[1]}", flush=True)
    if gpu_log is not None:
        gpu_log.terminate()
        gpu_log.wait(timeout=10)
    recording = _recording(out)
    if recording:  # what the notebooks cannot know: the driver, the CPU, how the run went
        from course_utils import save_results

        device_name = json.loads(recording.read_text(encoding="utf-8"))["device"]
        from course_utils.recorded_runs import code_hashes

        course = {"commit": course_commit(),
                  "notebooks": {p.name: code_hashes(p) for p in notebooks}}
        for key, value in (("machine", {k: meta[k] for k in (
                               "driver", "cpu", "cpu_threads", "python", "gpu_count",
                               "topology")}),
                           ("course", course),
                           ("run_seconds", {f"{r.notebook} ({r.preset})": round(r.seconds, 1)
                                            for r in rows})):
            save_results(key, value, device_name=device_name, folder=out / "results")
        if (out / "gpu-clocks.csv").is_file():  # clocks and power, notebook by notebook
            save_results("gpu_log", gpu_log_summary(out / "gpu-clocks.csv", rows),
                         device_name=device_name, folder=out / "results")
        # The executed notebooks of the recording preset, beside the recording: what each
        # GPU cell showed, for readers without one (course_utils.show_recorded).
        shown = out / "results" / recording.stem
        shown.mkdir(exist_ok=True)
        for path in sorted(executed(names[-1]).glob("*.ipynb")):
            shutil.copy2(path, shown / path.name)
    elif len(list((out / "results").glob("*.json"))) > 1:
        print(f"warning: several recordings in {out / 'results'}; expected one")
    print()
    print(write_summary(out, meta, rows, tests, recording, cleared))
    if args.archive:
        import tarfile

        with tarfile.open(args.archive, "w:gz") as tar:
            tar.add(out, arcname=out.name)
        print(f"packed into {args.archive} ({args.archive.stat().st_size / 2**20:.1f} MiB)")
    failed = [r for r in rows if r.status != "passed"]
    print(f"{len(rows) - len(failed)} of {len(rows)} notebook runs passed; GPU tests "
          f"{tests[0]}; the folder: {out}")
    return 1 if failed or tests[0] in ("failed", "timed out") else 0


if __name__ == "__main__":
    sys.exit(main())
