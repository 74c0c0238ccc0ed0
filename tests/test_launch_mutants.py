"""torchrun's printed command, its checks on what the ranks wrote, and two launchers."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import course_utils.launch as launch
from course_utils import torchrun
from tests.test_launch import SCRIPT


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "ranks.py"
    path.write_text(SCRIPT + """
if a.mode == "quiet" and rank == 1:
    os.remove(os.path.join(a.out, "rank1.json"))  # rank 1 ends without a record
if a.mode == "chatty":
    print("BEGIN" + "x" * 10000); sys.exit(1)
""")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_command_is_printed_with_its_arguments(script: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The printed line is torchrun's command as typed: options, script, --out, the args;
    the launch time printed after it is no more than the time the call took."""
    start = time.perf_counter()
    torchrun(script, tmp_path / "runs" / "one", 1, ["--mode", "ok"])
    took = time.perf_counter() - start
    first, last = capsys.readouterr().out.splitlines()
    assert first == f"$ torchrun --standalone --nproc_per_node 1 {script} --out RUNS/one --mode ok"
    value, unit = last.removeprefix("  1 rank(s), launch ").split()
    # Three significant figures round by at most 0.5%.
    assert 0 < float(value) * {"s": 1.0, "ms": 1e-3}[unit] <= took * 1.005


def test_a_missing_record_is_an_error(script: Path, tmp_path: Path) -> None:
    """Two ranks launched but one record written: the count is checked, not trusted."""
    out = tmp_path / "runs" / "quiet"
    with pytest.raises(RuntimeError) as err:
        torchrun(script, out, 2, ["--mode", "quiet"])
    assert str(err.value) == f"expected 2 result files in {out}, found 1"


def test_a_failed_launch_shows_only_its_logs_end(script: Path, tmp_path: Path) -> None:
    """A rank printing 10000 characters, then failing: the message keeps the last 3000 of the
    log, which end with torchrun's own report of the failure (its stderr, merged in)."""
    with pytest.raises(RuntimeError) as err:
        torchrun(script, tmp_path / "runs" / "chatty", 1, ["--mode", "chatty"])
    message = str(err.value)
    assert message.startswith("torchrun failed:\n")
    assert len(message) == len("torchrun failed:\n") + 3000
    assert "BEGIN" not in message
    assert "ranks.py FAILED" in message and "exitcode  : 1" in message


def test_two_launchers_make_one_world(script: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Two torchruns rehearsing two machines: one command printed each, the four ranks of
    one world of 4 read back in rank order."""
    port = str(_free_port())
    common = ["--nnodes", "2", "--master_addr", "127.0.0.1", "--master_port", port]
    launchers = ([*common, "--node_rank", "0"], [*common, "--node_rank", "1"])
    ranks = torchrun(script, tmp_path / "runs" / "two", 2, [], launchers=launchers)
    assert ranks == [{"rank": r, "world_size": 4} for r in range(4)]
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(" --nproc_per_node")[0] for line in printed[:2]] == [
        f"$ torchrun {' '.join(launchers[0])}", f"$ torchrun {' '.join(launchers[1])}"]
    assert printed[2].startswith("  4 rank(s), launch ") and len(printed) == 3
    assert sys.executable not in "\n".join(printed)  # python -m ... is shown as torchrun


STUBBORN = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "time.sleep(60)")  # a launcher that ignores SIGTERM


def test_a_time_out_stops_every_launcher_even_one_that_had_ended(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two launchers (plain Python in torchrun's place): the first ends at once, the second
    outlasts the time-out and ignores SIGTERM. The first's process group is gone by then, and
    the second does not stop within the grace period: neither may hide the time-out, and the
    second is killed."""
    started: list[subprocess.Popen] = []
    programs = iter(["pass", STUBBORN])
    real_popen = subprocess.Popen

    def popen(cmd: list[str], **kwargs: object) -> subprocess.Popen:
        started.append(real_popen([sys.executable, "-c", next(programs)], **kwargs))
        return started[-1]

    monkeypatch.setattr(launch.subprocess, "Popen", popen)
    monkeypatch.setattr(launch, "STOP_GRACE", 1)
    raised: list[BaseException] = []

    def call() -> None:
        try:
            torchrun("train.py", tmp_path / "out", 1, [], launchers=(["--a"], ["--b"]),
                     timeout=2)
        except BaseException as err:  # noqa: BLE001 (the test reads what came out)
            raised.append(err)

    worker = threading.Thread(target=call)
    worker.start()
    worker.join(30)  # a launch that never gives up must not hang the suite
    ended = []
    for p in started:  # how each ended (None: still running 5 s on); then leave none running
        try:
            ended.append(p.wait(timeout=5))
        except subprocess.TimeoutExpired:
            ended.append(None)
            p.kill()
            p.wait()
    assert not worker.is_alive(), "torchrun() did not return after its time-out"
    assert len(raised) == 1 and isinstance(raised[0], subprocess.TimeoutExpired), raised
    assert raised[0].timeout <= 2  # the launch's own deadline, not the grace period's wait
    assert ended == [0, -signal.SIGKILL]  # the first ended by itself, the second was killed
