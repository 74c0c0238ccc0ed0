"""torchrun's printed command, its checks on what the ranks wrote, and two launchers."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

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
