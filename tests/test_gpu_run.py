"""The recording command (tools.gpu_run): the recording notebooks at the CI preset, and its bookkeeping.

The first test is the command as a GPU machine runs it, on whatever device is here (the CPU in
CI), at the small CI preset, on notebook 00 and the notebooks that write the headline figures:
every one must pass, and the recording must hold its headline block. Every notebook also runs
at its defaults through nbval, and every preset is checked against what its notebook's setup
cell asserts (test_hygiene). The others check, on tiny notebooks, that a
failing or hung notebook is written down with its cell and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests.nbtools import REPO, course_notebooks, read
from course_utils.recorded_runs import code_hashes
from tools import gpu_run

COMMAND_TIMEOUT = 1800  # seconds for the recording notebooks at the CI preset (about 2 min here)


@pytest.mark.notebook
def test_the_command_runs_the_recording_notebooks_at_the_ci_preset(tmp_path: Path) -> None:
    # 00 and the notebooks that write the headline: each records (has SAVE_RESULTS). The
    # other recording notebooks run at their defaults through nbval, with SAVE_RESULTS off.
    notebooks = [p for p in course_notebooks()
                 if p.name.startswith("00_") or p.name[:2] in gpu_run.HEADLINE.values()]
    assert all("SAVE_RESULTS" in gpu_run.parameter_names(p) for p in notebooks[1:])
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in notebooks}
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "tools.gpu_run", "--presets", "ci",
                           "--out", str(out), "--cell-timeout", "300",
                           *[str(p.relative_to(REPO)) for p in notebooks]],
                          cwd=REPO, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    summary = json.loads((out / "summary.json").read_text())
    failed = [f"{r['notebook']}: {r['status']}: {r['error']}" for r in summary["runs"]
              if r["status"] != "passed"]
    assert not failed, "\n".join(failed)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [r["notebook"] for r in summary["runs"]] == [p.name for p in notebooks]
    assert summary["gpu_tests"]["status"] == "passed"
    for path in notebooks:
        executed = read(out / "executed" / "ci" / path.name)
        (injected,) = [c for c in executed.cells
                       if "injected-parameters" in c.metadata.get("tags", [])]
        assert "DEVICE = None" in injected.source  # the best device here, as on a GPU machine
        if "SAVE_RESULTS" in gpu_run.parameter_names(path):
            assert "SAVE_RESULTS = True" in injected.source  # the last preset records
        assert not [o for c in executed.cells if c.cell_type == "code" for o in c.outputs
                    if o.output_type == "error"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before[path], "source changed"
    # The recording, in the run's folder (not the checkout's), with the machine and the headline.
    (recording,) = (out / "results").glob("*.json")
    data = json.loads(recording.read_text())
    assert data["device"] == summary["device_name"] and data["torch"] == summary["torch"]
    assert data["machine"]["cpu_threads"] == summary["cpu_threads"]
    import torch

    assert data["machine"]["gpu_count"] == torch.cuda.device_count()  # 0 without CUDA
    assert set(data["run_seconds"]) == {f"{p.name} (ci)" for p in notebooks}
    headline = data["headline"]
    for keys in gpu_run.HEADLINE:  # every figure is there, a number or None (no GPU here)
        assert any(k in headline for k in keys.split("|")), keys
    for key in ("matmul_fp32_TFLOPs", "peaks_mlp_epoch_ms_eager"):  # measured on any device
        assert isinstance(headline[key], (int, float)) and headline[key] > 0, key
    assert summary["headline"] == headline
    # The code it ran: the commit, and each notebook's code cells hashed.
    assert data["course"]["commit"] == gpu_run.course_commit()
    assert data["course"]["notebooks"] == {p.name: code_hashes(p) for p in notebooks}
    # The executed notebooks beside it, as the course ships them for readers without a GPU.
    assert sorted(p.name for p in (out / "results" / recording.stem).glob("*.ipynb")) == sorted(
        p.name for p in notebooks)
    assert f"| {notebooks[-1].name} | ci | passed |" in (out / "summary.md").read_text()


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell("DEVICE = None\nSAVE_RESULTS = False")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params] + [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


def test_failures_and_hangs_are_written_down_and_the_run_goes_on(tmp_path: Path) -> None:
    # No torch in these notebooks: each starts in seconds. (The course run above records.)
    notebooks = [
        _notebook(tmp_path / "10_hangs.ipynb", "import time\ntime.sleep(600)"),
        _notebook(tmp_path / "11_fails.ipynb", "x = 1", "# divide\n1 / 0"),
        _notebook(tmp_path / "12_passes.ipynb", "assert SAVE_RESULTS  # the recording preset sets it"),
    ]
    out = tmp_path / "run"
    code = gpu_run.main([*map(str, notebooks), "--presets", "defaults", "--out", str(out),
                         "--timeout", "15", "--no-tests"])
    assert code == 1  # not everything passed
    rows = json.loads((out / "summary.json").read_text())["runs"]
    assert [(r["notebook"], r["status"]) for r in rows] == [
        ("10_hangs.ipynb", "timed out"), ("11_fails.ipynb", "failed"),
        ("12_passes.ipynb", "passed")]
    assert rows[0]["error"] == "the whole notebook ran longer than 15 s and was stopped"
    assert rows[1]["error"] == "cell 2 ('# divide'): ZeroDivisionError: division by zero"
    summary = (out / "summary.md").read_text()
    assert "| 11_fails.ipynb | defaults | failed |" in summary
    assert "No recording was written" in summary


def test_the_deadline_stops_the_run_and_cuda_variables_are_cleared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_run, "MIN_START", 2)
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    # The first notebook hangs once it has checked its environment (a variable left set would
    # fail it at once), whatever time its kernel takes to start on a loaded machine.
    notebooks = [
        _notebook(tmp_path / "20_hangs.ipynb",
                  "import os\nassert 'CUDA_LAUNCH_BLOCKING' not in os.environ",
                  "import time\ntime.sleep(600)"),
        _notebook(tmp_path / "21_never.ipynb", "x = 1"),
    ]
    out = tmp_path / "run"
    code = gpu_run.main([*map(str, notebooks), "--presets", "defaults", "--out", str(out),
                         "--deadline", "12", "--no-tests", "--archive", str(tmp_path / "run.tar.gz")])
    assert code == 1
    summary = json.loads((out / "summary.json").read_text())
    assert [(r["notebook"], r["status"]) for r in summary["runs"]] == [
        ("20_hangs.ipynb", "timed out"), ("21_never.ipynb", "not run")]
    assert summary["runs"][0]["seconds"] < 20  # cut at the deadline, not at its own hour
    assert summary["runs"][1]["error"] == "the run's deadline (12 s) came first"
    assert summary["cleared_variables"] == ["CUDA_LAUNCH_BLOCKING"]
    assert "Cleared before the run (they change CUDA's behaviour): CUDA_LAUNCH_BLOCKING." in (
        out / "summary.md").read_text()
    import tarfile

    with tarfile.open(tmp_path / "run.tar.gz") as tar:  # the whole folder, in one file
        assert {"run/summary.json", "run/summary.md"} <= set(tar.getnames())


def test_a_cell_past_its_time_limit_is_named(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "13_slow.ipynb", "import time\ntime.sleep(600)")
    row = gpu_run.run_notebook(source, tmp_path / "out" / source.name, {}, env=dict(os.environ),
                               timeout=300, cell_timeout=3)
    assert row.status == "timed out"
    assert row.error == "13_slow.ipynb: cell 1 ('import time') ran longer than 3 s and was stopped"


def test_presets_and_headline_gaps(tmp_path: Path) -> None:
    assert gpu_run.load_preset("defaults") == {}
    assert "01_why_gpus.ipynb" in gpu_run.load_preset("gpu")
    with pytest.raises(SystemExit, match="no preset 'huge'.*defaults, ci, gpu"):
        gpu_run.load_preset("huge")
    full = {k.split("|")[-1]: 1.0 for k in gpu_run.HEADLINE}
    assert gpu_run.headline_gaps(full) == []
    assert gpu_run.headline_gaps({**full, "d2d_GBps": None}) == ["d2d_GBps (notebook 04)"]
    assert gpu_run.parameter_names(REPO / "notebooks" / "01_why_gpus.ipynb") >= {
        "DEVICE", "SAVE_RESULTS"}


def test_the_gpu_log_is_summarised_per_notebook(tmp_path: Path) -> None:
    import datetime

    t0 = datetime.datetime(2026, 11, 28, 12, 0, 0)
    lines = ["timestamp, index, clocks.current.sm [MHz], clocks.current.memory [MHz], "
             "power.draw [W], temperature.gpu, utilization.gpu [%], clocks_event_reasons.active"]
    for k, (sm, watts, why) in enumerate([(1980, 300.5, "0x0000000000000000"),
                                          (1755, 699.0, "0x0000000000000004"),
                                          (1830, 650.0, "[N/A]"),
                                          (1980, 100.0, "0x0000000000000000")]):
        when = (t0 + datetime.timedelta(seconds=k)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        lines.append(f"{when}, 0, {sm} MHz, 2619 MHz, {watts} W, 50, 100 %, {why}")
    lines.append(f"{t0.strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, 0, [N/A], 2619 MHz, 1 W, 50, 0 %, 0x0")
    log = tmp_path / "gpu-clocks.csv"
    log.write_text("\n".join(lines) + "\n")
    rows = [gpu_run.Row("02_x.ipynb", "gpu", "passed", 2.6, started=t0.timestamp() + 0.5),
            gpu_run.Row("03_y.ipynb", "gpu", "not run", 0.0)]  # never started: no samples
    assert gpu_run.gpu_log_summary(log, rows) == {"02_x.ipynb (gpu)": {
        "samples": 3, "sm_clock_MHz": [1755.0, 1830.0, 1980.0], "power_max_W": 699.0,
        "reasons": ["0x0000000000000004"]}}
    # A sample at a run's first or last instant is the run's (seconds 1 and 3 here).
    edges = [gpu_run.Row("04_z.ipynb", "gpu", "passed", 2.0, started=t0.timestamp() + 1)]
    assert gpu_run.gpu_log_summary(log, edges)["04_z.ipynb (gpu)"]["samples"] == 3
    # A byte that is not UTF-8 (a field the summary does not read) does not stop it; a driver
    # that logs no throttle reasons gives none.
    log.write_bytes(log.read_bytes().replace(b"50, 100 %", b"50, \xff %"))
    assert gpu_run.gpu_log_summary(log, rows)["02_x.ipynb (gpu)"]["samples"] == 3
    log.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")
    assert gpu_run.gpu_log_summary(log, rows)["02_x.ipynb (gpu)"]["reasons"] == []


def test_nvidia_smi_gives_the_log_and_the_topology(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    """nvidia-smi logs every half second unless told (its own output kept off the console)
    into the file given; `topo -m` gives the topology; neither without nvidia-smi."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi on it yet
    assert gpu_run.start_gpu_log(tmp_path / "none.csv") is None
    assert gpu_run.gpu_topology() is None
    fake = tmp_path / "nvidia-smi"
    fake.write_text('#!/bin/sh\n[ "$1 $2" = "topo -m" ] && echo "GPU0 X NV4" && exit 0\n'
                    'for a; do [ "$prev" = "-f" ] && out=$a; prev=$a; done\n'
                    'echo "$@" > "$out"\necho chatter; echo more chatter >&2\n'
                    'exec /bin/sleep 60\n')
    fake.chmod(0o755)
    assert gpu_run.gpu_topology() == "GPU0 X NV4\n"  # as the machine prints it
    proc = gpu_run.start_gpu_log(tmp_path / "log.csv", interval_ms=250)
    try:
        for _ in range(100):
            if (tmp_path / "log.csv").is_file() and (tmp_path / "log.csv").read_text():
                break
            time.sleep(0.05)
        args = (tmp_path / "log.csv").read_text().split()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert args == [f"--query-gpu={gpu_run.GPU_LOG_FIELDS}", "--format=csv", "-lms", "250",
                    "-f", str(tmp_path / "log.csv")]
    proc = gpu_run.start_gpu_log(tmp_path / "default.csv")
    try:
        for _ in range(100):
            if (tmp_path / "default.csv").is_file() and (tmp_path / "default.csv").read_text():
                break
            time.sleep(0.05)
        assert (tmp_path / "default.csv").read_text().split()[2:4] == ["-lms", "500"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "chatter" not in "".join(capfd.readouterr())


_MACHINE = {"device": "cuda:0", "device_name": "NVIDIA Test GPU", "date": "2026-11-29",
            "torch": "2.13.0", "cuda": "12.8", "driver": "570.10", "cpu": "Test CPU",
            "cpu_threads": 8, "python": "3.11.7", "gpu_count": 2, "topology": "GPU0 X NV4"}


@pytest.fixture()
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The machine and each notebook's process stood in: a 'notebook' copies itself to its
    executed path, and one run with SAVE_RESULTS records a headline figure as a notebook
    does. Returns the runs asked for: (name, executed path, parameters, environment,
    notebook time limit, cell time limit)."""
    from course_utils import save_results

    runs: list[tuple] = []

    def run_notebook(source, executed, params, env, timeout, cell_timeout):
        runs.append((source.name, executed, params, env, timeout, cell_timeout))
        executed.parent.mkdir(parents=True, exist_ok=True)
        executed.write_bytes(source.read_bytes())
        if params.get("SAVE_RESULTS"):
            save_results("headline", {"matmul_fp32_TFLOPs": 51.2}, merge=True,
                         device_name="NVIDIA Test GPU", folder=env["COURSE_RESULTS_DIR"])
        return gpu_run.Row(source.name, "", "passed", 2.04)

    monkeypatch.setattr(gpu_run, "machine", lambda device: dict(_MACHINE))
    monkeypatch.setattr(gpu_run, "run_notebook", run_notebook)
    monkeypatch.setattr(gpu_run, "start_gpu_log", lambda path: None)
    monkeypatch.setenv("COURSE_COMMIT", "abc1234")
    return runs


def test_a_preset_given_as_a_json_file_anywhere_runs(tmp_path: Path, stand_ins: list) -> None:
    """--presets /some/where/small.json: its runs go to executed/small/ (the file's path used to
    be joined to the run's folder: an absolute one replaced it, and the run crashed)."""
    preset = tmp_path / "elsewhere" / "small.json"
    preset.parent.mkdir()
    preset.write_text(json.dumps({"02_peak.ipynb": {"N": 3}}))
    source = _notebook(tmp_path / "02_peak.ipynb", "x = 1")
    out = tmp_path / "run"
    assert gpu_run.main([str(source), "--presets", str(preset), "--out", str(out),
                         "--no-tests"]) == 0
    (run,) = stand_ins
    assert run[:3] == ("02_peak.ipynb", out / "executed" / "small" / "02_peak.ipynb",
                       {"DEVICE": None, "N": 3, "SAVE_RESULTS": True})
    assert (out / "results" / "nvidia-test-gpu" / "02_peak.ipynb").is_file()  # beside it


def test_without_presets_the_run_records_at_gpu_json_and_kernels_prefer_the_env(
        tmp_path: Path, stand_ins: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --presets: one run at notebooks/params/gpu.json, which records. The notebooks'
    processes get JUPYTER_PREFER_ENV_PATH (their kernel is this environment's) even where the
    shell did not set it, and unbuffered output."""
    monkeypatch.delenv("JUPYTER_PREFER_ENV_PATH", raising=False)
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    name = "00_check_your_setup.ipynb"  # a notebook gpu.json has values for
    source = _notebook(tmp_path / name, "x = 1")
    out = tmp_path / "run"
    assert gpu_run.main([str(source), "--out", str(out), "--no-tests"]) == 0
    (run,) = stand_ins
    gpu = json.loads((REPO / "notebooks" / "params" / "gpu.json").read_text())[name]
    assert run[:3] == (name, out / "executed" / "gpu" / name,
                       {"DEVICE": None, **gpu, "SAVE_RESULTS": True})
    assert run[3]["JUPYTER_PREFER_ENV_PATH"] == "1" and run[3]["PYTHONUNBUFFERED"] == "1"


def test_a_recording_run_from_presets_to_exit_status(
        tmp_path: Path, stand_ins: list, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The whole command with the notebooks, the machine, nvidia-smi and the GPU tests stood in:
    each preset in order with DEVICE, the last one's SAVE_RESULTS where the notebook takes it,
    the cleaned environment; the recording completed with the machine, the code, each run's
    time and the clocks per notebook; the recording preset's executed notebooks beside it; the
    folder named after the device by default; the GPU tests' verdict in the exit status."""
    peak = _notebook(tmp_path / "02_peak.ipynb", "x = 1")
    plain = nbformat.v4.new_notebook()  # no SAVE_RESULTS parameter: never set
    plain.cells = [nbformat.v4.new_code_cell("y = 2")]
    nbformat.write(plain, tmp_path / "05_plain.ipynb")
    notebooks = [peak, tmp_path / "05_plain.ipynb"]
    preset = tmp_path / "small.json"
    preset.write_text(json.dumps({"02_peak.ipynb": {"N": 3}}))
    monkeypatch.setattr(gpu_run, "ROOT", tmp_path)  # the default folder: build/gpu-run/ there
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    import datetime
    import time

    class Clock:  # a simulated clock: each notebook's run takes 10 s of it
        now = 1_790_000_000.0

        def time(self) -> float:
            return self.now

        perf_counter = time

    clock = Clock()
    clock.strftime = time.strftime  # the folder's date: the real one
    monkeypatch.setattr(gpu_run, "time", clock)

    class GpuLog:  # nvidia-smi: one sample inside each notebook's run, stopped at the end
        stops: list[str] = []

        def __init__(self, path: Path) -> None:
            self.path = path
            path.write_text("timestamp, index, clocks.sm, clocks.mem, power.draw, temperature, "
                            "utilization, reasons\n")

        def sample(self) -> None:
            when = datetime.datetime.fromtimestamp(clock.now + 1.0)
            with self.path.open("a") as f:
                f.write(f"{when:%Y/%m/%d %H:%M:%S.%f}, 0, 1980 MHz, 2619 MHz, 650.0 W, 50, "
                        "100 %, 0x0000000000000000\n")

        def terminate(self) -> None:
            self.stops.append("terminate")

        def wait(self, timeout: float) -> None:
            self.stops.append(f"wait {timeout}")

    logs: list[GpuLog] = []
    monkeypatch.setattr(gpu_run, "start_gpu_log", lambda path: logs.append(GpuLog(path))
                        or logs[-1])
    run_notebook = gpu_run.run_notebook

    def sampled_run(*args):
        logs[0].sample()
        clock.now += 10
        return run_notebook(*args)

    monkeypatch.setattr(gpu_run, "run_notebook", sampled_run)
    tested = []
    monkeypatch.setattr(gpu_run, "run_gpu_tests", lambda log, env, timeout: tested.append(
        (log, env, timeout)) or ("passed", "3 passed in 1.00s"))
    assert gpu_run.main([*map(str, notebooks), "--presets", f"defaults,{preset}",
                         "--device", "cuda:0", "--timeout", "50", "--cell-timeout", "7"]) == 0
    (out,) = (tmp_path / "build" / "gpu-run").iterdir()
    assert re.fullmatch(r"nvidia-test-gpu-20\d{6}-\d{4}", out.name)
    results = out / "results"
    assert [(name, path.relative_to(out), params, timeout, cell)
            for name, path, params, _, timeout, cell in stand_ins] == [
        ("02_peak.ipynb", Path("executed/defaults/02_peak.ipynb"), {"DEVICE": "cuda:0"}, 50, 7),
        ("05_plain.ipynb", Path("executed/defaults/05_plain.ipynb"), {"DEVICE": "cuda:0"}, 50, 7),
        ("02_peak.ipynb", Path("executed/small/02_peak.ipynb"),
         {"DEVICE": "cuda:0", "N": 3, "SAVE_RESULTS": True}, 50, 7),
        ("05_plain.ipynb", Path("executed/small/05_plain.ipynb"), {"DEVICE": "cuda:0"}, 50, 7)]
    for env in [run[3] for run in stand_ins] + [tested[0][1]]:
        assert "CUDA_LAUNCH_BLOCKING" not in env and env["COURSE_RESULTS_DIR"] == str(results)
        assert env["JUPYTER_PREFER_ENV_PATH"] == env["PYTHONUNBUFFERED"] == "1"
    assert tested[0][0] == out / "gpu-tests.log" and tested[0][2] == gpu_run.TESTS_TIMEOUT
    assert GpuLog.stops == ["terminate", "wait 10"]
    data = json.loads((results / "nvidia-test-gpu.json").read_text())
    assert data["machine"] == {k: _MACHINE[k] for k in (
        "driver", "cpu", "cpu_threads", "python", "gpu_count", "topology")}
    assert data["course"] == {"commit": "abc1234",
                              "notebooks": {p.name: code_hashes(p) for p in notebooks}}
    runs = [f"{p.name} ({name})" for name in ("defaults", str(preset)) for p in notebooks]
    assert data["run_seconds"] == {run: 2.0 for run in runs}
    assert data["gpu_log"] == {run: {"samples": 1, "sm_clock_MHz": [1980.0] * 3,
                                     "power_max_W": 650.0, "reasons": []} for run in runs}
    assert data["headline"] == {"matmul_fp32_TFLOPs": 51.2}
    assert sorted(p.name for p in (results / "nvidia-test-gpu").iterdir()) == [
        "02_peak.ipynb", "05_plain.ipynb"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["gpu_tests"] == {"status": "passed", "summary": "3 passed in 1.00s"}
    assert summary["recording"] == "results/nvidia-test-gpu.json"
    said = capsys.readouterr().out.splitlines()
    assert said[:3] == [
        "cleared CUDA_LAUNCH_BLOCKING: they change CUDA's behaviour under the notebooks",
        f"Recording the course on NVIDIA Test GPU (cuda:0) into {out}",
        "  defaults  02_peak.ipynb ... passed in 2 s"]
    assert "  GPU tests (pytest -m gpu) ... passed: 3 passed in 1.00s" in said
    assert "| matmul_fp32_TFLOPs | 51.2 |" in said
    assert said[-1] == f"4 of 4 notebook runs passed; GPU tests passed; the folder: {out}"
    monkeypatch.setattr(gpu_run, "run_gpu_tests", lambda log, env, timeout: ("failed", "1 failed"))
    assert gpu_run.main([str(peak), "--presets", "defaults", "--out", str(tmp_path / "b")]) == 1
    # GPU tests that ran out of time fail the run too; skipped ones do not, and say why.
    monkeypatch.setattr(gpu_run, "run_gpu_tests",
                        lambda log, env, timeout: ("timed out", "longer than 1 s"))
    assert gpu_run.main([str(peak), "--presets", "defaults", "--out", str(tmp_path / "c")]) == 1
    assert gpu_run.main([str(peak), "--presets", "defaults", "--out", str(tmp_path / "d"),
                         "--no-tests"]) == 0
    summary = json.loads((tmp_path / "d" / "summary.json").read_text())
    assert summary["gpu_tests"] == {"status": "not run", "summary": "--no-tests"}


def test_the_gpu_tests_verdict_summary_and_log(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """run_gpu_tests runs `pytest -m gpu` on tests/ in the checkout (pytest stood in): the
    verdict is its exit status, the summary its last line without the rule around it, the log
    its whole output; a run past the time limit is stopped and says so."""
    answers, asked = [], []

    def fake_run(cmd, **kwargs):
        asked.append((cmd, kwargs))
        code, out, err = answers.pop(0)
        if code is None:
            raise subprocess.TimeoutExpired(cmd, kwargs["timeout"])
        return subprocess.CompletedProcess(cmd, code, out, err)

    monkeypatch.setattr(gpu_run.subprocess, "run", fake_run)
    log, env = tmp_path / "gpu-tests.log", {"PATH": "/bin"}
    answers.append((0, "..s\n\n== warnings summary ==\ntests/x.py: 1 warning\n\n"
                       "===== 3 passed, 1 skipped in 2.00s =====\n\n", "a warning\n"))
    assert gpu_run.run_gpu_tests(log, env, 30) == ("passed", "3 passed, 1 skipped in 2.00s")
    command = [sys.executable, "-m", "pytest", "-m", "gpu", "-n", "0", "-p", "no:cacheprovider",
               "-q", "tests"]
    assert asked == [(command, {"cwd": gpu_run.ROOT, "env": env, "capture_output": True,
                                "text": True, "timeout": 30})]
    assert log.read_text() == ("..s\n\n== warnings summary ==\ntests/x.py: 1 warning\n\n"
                               "===== 3 passed, 1 skipped in 2.00s =====\n\na warning\n")
    answers.append((1, "F\n=== 1 failed in 1.00s ===\n", ""))
    assert gpu_run.run_gpu_tests(log, env, 30) == ("failed", "1 failed in 1.00s")
    answers.append((4, "", "no tests folder\n"))
    assert gpu_run.run_gpu_tests(log, env, 30) == ("failed", "no output")
    answers.append((None, "", ""))
    assert gpu_run.run_gpu_tests(log, env, 12.4) == ("timed out", "longer than 12 s")
    assert log.read_text() == " ".join(command) + "\nran longer than 12 s and was stopped\n"


def test_the_course_commit_from_the_environment_or_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """$COURSE_COMMIT wins; else `git rev-parse HEAD` in the checkout (git stood in), and None
    where git fails, is missing, hangs or prints nothing."""
    answers, asked = [], []

    def fake_git(cmd, **kwargs):
        asked.append((cmd, kwargs))
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return subprocess.CompletedProcess(cmd, answer[0], answer[1], "")

    monkeypatch.setattr(gpu_run.subprocess, "run", fake_git)
    monkeypatch.setenv("COURSE_COMMIT", "feedbee")
    assert gpu_run.course_commit() == "feedbee" and asked == []
    monkeypatch.setenv("COURSE_COMMIT", "")  # set but empty: git's answer
    answers.append((0, "0123abcd\n"))
    assert gpu_run.course_commit() == "0123abcd"
    assert asked == [(["git", "rev-parse", "HEAD"], {"cwd": gpu_run.ROOT, "capture_output": True,
                                                     "text": True, "timeout": 10})]
    monkeypatch.delenv("COURSE_COMMIT")
    answers.extend([(128, "HEAD\n"), (0, "\n"), OSError("no git"),
                    subprocess.TimeoutExpired("git", 10)])
    assert [gpu_run.course_commit() for _ in range(4)] == [None] * 4


def test_the_machine_block_names_the_device_software_driver_and_cpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """machine() takes the device and CPU from device_report, the driver from nvidia-smi's
    first GPU (None without one) and the rest from torch and Python (all stood in or real)."""
    import platform
    import types

    import course_utils
    import torch
    from course_utils import gpu_check

    asked = []
    monkeypatch.setattr(course_utils, "device_report", lambda device: asked.append(device) or {
        "device": "cuda:1", "device_name": "Test GPU", "cpu_model": "Test CPU"})
    gpus = [types.SimpleNamespace(driver="570.10"), types.SimpleNamespace(driver="1.0")]
    monkeypatch.setattr(gpu_check, "probe_gpu", lambda: types.SimpleNamespace(nvidia_gpus=gpus))
    monkeypatch.setattr(gpu_run, "gpu_topology", lambda: "GPU0 X")
    meta = gpu_run.machine("cuda:1")
    assert asked == ["cuda:1"]
    assert re.fullmatch(r"20\d\d-[01]\d-[0-3]\d", meta.pop("date"))
    assert meta == {"device": "cuda:1", "device_name": "Test GPU", "torch": torch.__version__,
                    "cuda": torch.version.cuda, "driver": "570.10", "cpu": "Test CPU",
                    "cpu_threads": torch.get_num_threads(), "python": platform.python_version(),
                    "gpu_count": torch.cuda.device_count(), "topology": "GPU0 X"}
    gpus = None  # nvidia-smi missing
    monkeypatch.setattr(gpu_check, "probe_gpu", lambda: types.SimpleNamespace(nvidia_gpus=gpus))
    assert gpu_run.machine(None)["driver"] is None


def test_the_command_refuses_what_it_cannot_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A notebook that is not a file, presets that name none, an unknown preset and a preset
    file that is not a JSON object each stop the command before anything runs."""
    source = _notebook(tmp_path / "02_x.ipynb", "x = 1")
    for argv, message in (
            ([str(tmp_path / "09_gone.ipynb")], "09_gone.ipynb is not a notebook file"),
            ([str(source), "--presets", " , "], "--presets names no preset")):
        with pytest.raises(SystemExit) as stopped:
            gpu_run.main(argv)
        assert stopped.value.code == 2 and message in capsys.readouterr().err
    listed = tmp_path / "listed.json"
    listed.write_text("[1, 2]")
    with pytest.raises(SystemExit, match=r"listed\.json must hold a JSON object: notebook file "
                                         r"name -> parameters$"):
        gpu_run.load_preset(str(listed))
    with pytest.raises(SystemExit, match=r"^no preset '.*gone\.json': name one of defaults, .*, "
                                         r"or a JSON file's path$"):
        gpu_run.load_preset(str(tmp_path / "gone.json"))


def test_the_summary_a_reader_gets(tmp_path: Path) -> None:
    """summary.md as a reader sees it (the machine, the cleared variables, one row per run with
    a '|' in an error kept from splitting the table, the GPU tests, the headline and what it
    lacks), and summary.json with the same facts; without a recording, one line says so."""
    (tmp_path / "results").mkdir()
    recording = tmp_path / "results" / "gpu-one.json"
    recording.write_text(json.dumps({"headline": {
        "h2d_pinned_GBps": 50.5, "h2d_pageable_GBps": 20, "d2h_pinned_GBps": 49,
        "d2d_GBps": None, "matmul_fp32_TFLOPs": 51.2, "matmul_fp16_TFLOPs": 700,
        "shi_ms_per_batch": {"mlp": 1.5}, "peaks_mlp_epoch_ms_eager": 30,
        "peaks_mlp_epoch_ms_fast": 10, "peaks_mlp_speedup_vs_cpu_40000": 80}}))
    meta = {**_MACHINE, "cuda": None, "driver": None}
    rows = [gpu_run.Row("02_x.ipynb", "gpu", "passed", 61.6),
            gpu_run.Row("08_y.ipynb", "gpu", "failed", 2.4, "cell 3 ('a | b'): ValueError: no")]
    text = gpu_run.write_summary(tmp_path, meta, rows, ("failed", "1 failed in 9s"), recording,
                                 ["CUDA_LAUNCH_BLOCKING", "PYTORCH_NO_CUDA_MEMORY_CACHING"])
    assert text == (tmp_path / "summary.md").read_text()
    assert text.splitlines() == [
        "# Course run on NVIDIA Test GPU", "",
        "2026-11-29: device cuda:0, torch 2.13.0, CUDA -, driver -, CPU Test CPU (8 threads), "
        "Python 3.11.7.", "",
        "Cleared before the run (they change CUDA's behaviour): CUDA_LAUNCH_BLOCKING, "
        "PYTORCH_NO_CUDA_MEMORY_CACHING.", "",
        "| notebook | preset | result | wall time | error |", "|---|---|---|---|---|",
        "| 02_x.ipynb | gpu | passed | 62 s |  |",
        "| 08_y.ipynb | gpu | failed | 2 s | cell 3 ('a / b'): ValueError: no |", "",
        "GPU tests (`pytest -m gpu`): failed (1 failed in 9s).", "",
        "Recording: results/gpu-one.json", "", "| headline | value |", "|---|---|",
        "| h2d_pinned_GBps | 50.5 |", "| h2d_pageable_GBps | 20 |", "| d2h_pinned_GBps | 49 |",
        "| d2d_GBps | null |", "| matmul_fp32_TFLOPs | 51.2 |", "| matmul_fp16_TFLOPs | 700 |",
        '| shi_ms_per_batch | {"mlp": 1.5} |', "| peaks_mlp_epoch_ms_eager | 30 |",
        "| peaks_mlp_epoch_ms_fast | 10 |", "| peaks_mlp_speedup_vs_cpu_40000 | 80 |", "",
        "Missing from the headline: d2d_GBps (notebook 04); crossover_samples (notebook 08)"]
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data == {**meta, "cleared_variables": ["CUDA_LAUNCH_BLOCKING",
                                                  "PYTORCH_NO_CUDA_MEMORY_CACHING"],
                    "runs": [{"notebook": "02_x.ipynb", "preset": "gpu", "status": "passed",
                              "seconds": 61.6, "error": "", "started": 0.0},
                             {"notebook": "08_y.ipynb", "preset": "gpu", "status": "failed",
                              "seconds": 2.4, "error": "cell 3 ('a | b'): ValueError: no",
                              "started": 0.0}],
                    "gpu_tests": {"status": "failed", "summary": "1 failed in 9s"},
                    "recording": "results/gpu-one.json",
                    "headline": json.loads(recording.read_text())["headline"],
                    "headline_missing": ["d2d_GBps (notebook 04)",
                                         "crossover_samples (notebook 08)"]}
    full = {k.split("|")[0]: 1.0 for k in gpu_run.HEADLINE}
    recording.write_text(json.dumps({"headline": full}))
    text = gpu_run.write_summary(tmp_path, meta, rows, ("passed", "ok"), recording)
    assert text.endswith("| crossover_samples | 1.0 |\n\nMissing from the headline: nothing\n")
    text = gpu_run.write_summary(tmp_path, _MACHINE, [], ("not run", "--no-tests"), None)
    assert "Cleared before the run (they change CUDA's behaviour): none was set." in text
    assert "CUDA 12.8, driver 570.10," in text
    assert text.endswith("GPU tests (`pytest -m gpu`): not run (--no-tests).\n\n"
                         "No recording was written (no notebook saved results).\n")
    data = json.loads((tmp_path / "summary.json").read_text())
    assert (data["recording"], data["headline"], data["cleared_variables"]) == (None, {}, [])
    assert len(data["headline_missing"]) == len(gpu_run.HEADLINE)  # all of it


def test_two_recordings_are_left_as_they_are_with_a_warning(
        tmp_path: Path, stand_ins: list, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Notebooks that recorded under two device names: neither is completed nor named the
    recording, and the run says so."""
    run_notebook = gpu_run.run_notebook

    def two_devices(source, executed, params, env, *rest):
        (Path(env["COURSE_RESULTS_DIR"]) / "other-gpu.json").write_text('{"device": "Other"}')
        return run_notebook(source, executed, params, env, *rest)

    monkeypatch.setattr(gpu_run, "run_notebook", two_devices)
    out = tmp_path / "run"
    assert gpu_run.main([str(_notebook(tmp_path / "02_x.ipynb", "x = 1")), "--presets",
                         "defaults", "--out", str(out), "--no-tests"]) == 0
    assert f"warning: several recordings in {out / 'results'}; expected one" in (
        capsys.readouterr().out.splitlines())
    assert json.loads((out / "summary.json").read_text())["recording"] is None
    assert "machine" not in json.loads((out / "results" / "nvidia-test-gpu.json").read_text())


# A stand-in for the notebook's own process (gpu_run._CHILD): what it does is the source's
# text, so each outcome a notebook run can have comes in a fraction of a second.
_STAND_IN_CHILD = """
import json, os, subprocess, sys, time
from pathlib import Path
src, dst, status = map(Path, sys.argv[1:4])
params, cell_timeout = json.loads(sys.argv[4]), int(sys.argv[5])
mode = src.read_text()
print("line one\\nline two", flush=True)
if mode == "pass":
    dst.write_text(json.dumps({"params": params, "cell_timeout": cell_timeout,
                               "cwd": os.getcwd(), "mark": os.environ.get("MARK")}))
    status.write_text(json.dumps({"status": "passed"}))
elif mode == "fail":
    status.write_text(json.dumps({"status": "failed", "error": "cell 2 ('x'): E: no"}))
elif mode == "crash":
    print("line three", flush=True)
    print("Killed: out of memory", file=sys.stderr, flush=True)
    sys.exit(137)
else:  # hang, with a grandchild (as papermill's kernel is)
    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dst.write_text(str(kid.pid))
    time.sleep(60)
"""


def _gone(pid: int) -> bool:
    """The process has ended (a zombie left for a parent that never waits counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except FileNotFoundError:
        return True


def test_run_notebook_reads_the_outcome_its_process_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_notebook hands the notebook's process its paths, parameters (JSON), cell limit,
    environment and the checkout as its folder; reads back passed or failed; a process that
    ends with no outcome (a stale one from before does not count) is failed with its output's
    last three lines; one past the limit is killed with its kernel."""
    monkeypatch.setattr(gpu_run, "_CHILD", _STAND_IN_CHILD)
    env = {**os.environ, "MARK": "here"}

    def run(mode: str, timeout: float = 60) -> tuple[gpu_run.Row, Path]:
        source = tmp_path / f"0{len(mode)}_{mode}.ipynb"
        source.write_text(mode)
        executed = tmp_path / "out" / mode / source.name
        row = gpu_run.run_notebook(source, executed, {"N": 3}, env, timeout, 7)
        return row, executed

    row, executed = run("pass")
    assert (row.notebook, row.preset, row.status, row.error) == ("04_pass.ipynb", "", "passed", "")
    assert 0 < row.seconds < 30
    assert json.loads(executed.read_text()) == {"params": {"N": 3}, "cell_timeout": 7,
                                                "cwd": str(gpu_run.ROOT), "mark": "here"}
    assert not executed.with_suffix(".status.json").exists()  # read, then removed
    row, _ = run("fail")
    assert (row.status, row.error) == ("failed", "cell 2 ('x'): E: no")
    (tmp_path / "out" / "crash").mkdir()
    (tmp_path / "out" / "crash" / "05_crash.status.json").write_text('{"status": "passed"}')
    row, _ = run("crash")
    assert (row.status, row.error) == ("failed", "the run stopped with no result: line two | "
                                                 "line three | Killed: out of memory")
    row, executed = run("hang", timeout=3)
    assert (row.status, row.error) == (
        "timed out", "the whole notebook ran longer than 3 s and was stopped")
    assert 3 <= row.seconds < 30
    kernel = int(executed.read_text())
    for _ in range(50):
        if _gone(kernel):
            break
        time.sleep(0.1)
    assert _gone(kernel), "the notebook's own children are stopped with it"


def test_no_topology_when_nvidia_smi_fails(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`nvidia-smi topo -m` run as such, and its answer dropped when it fails or hangs."""
    answers, asked = [], []

    def fake_run(cmd, **kwargs):
        asked.append((cmd, kwargs))
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return subprocess.CompletedProcess(cmd, answer, "GPU0 X\n", "")

    monkeypatch.setattr(gpu_run.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(gpu_run.subprocess, "run", fake_run)
    answers.extend([0, 9, OSError("busy"), subprocess.TimeoutExpired("nvidia-smi", 30)])
    assert [gpu_run.gpu_topology() for _ in range(4)] == ["GPU0 X\n", None, None, None]
    assert asked[0] == (["/usr/bin/nvidia-smi", "topo", "-m"],
                        {"capture_output": True, "text": True, "timeout": 30})
