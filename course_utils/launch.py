"""Launching a training script with torchrun from a notebook, and reading what its ranks wrote.

Notebooks 14 to 16 start `notebooks/scripts/ddp_train.py` this way: one torchrun per
launcher (two launchers rehearse two machines), each in a process group of its own, so that a
time-out or the reader's interrupt stops the ranks too; every rank writes OUT/rank<R>.json.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from course_utils.timing import format_seconds

LAUNCH_TIMEOUT = 600  # seconds for a whole launch, all launchers together
STOP_GRACE = 60  # seconds torchrun gets to stop its ranks after a SIGTERM, before a SIGKILL


def torchrun(script: str | Path, out: str | Path, nproc: int, args: list[str],
             launchers: tuple[list[str], ...] = (["--standalone"],),
             timeout: float = LAUNCH_TIMEOUT) -> list[dict[str, Any]]:
    """Run `script --out OUT *args` under torchrun with `nproc` processes per launcher, one
    torchrun per entry of `launchers` (its rendezvous options), all at once; return the
    ranks' records (OUT/rank<R>.json), in rank order. Prints each command (OUT's folder shown
    as RUNS) and the launch's time. On a time-out or an interrupt, SIGTERM lets torchrun stop
    its ranks, then SIGKILL ends what is left; a failed launch raises with its log's end."""
    out = Path(out)
    cmds = [[sys.executable, "-m", "torch.distributed.run", *rdzv, "--nproc_per_node",
             str(nproc), str(script), "--out", str(out), *args] for rdzv in launchers]
    for cmd in cmds:
        print("$ torchrun", " ".join(cmd[3:]).replace(str(out.parent), "RUNS"))
    t0 = time.perf_counter()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True) for cmd in cmds]  # own process groups
    try:
        logs = [p.communicate(timeout=max(t0 + timeout - time.perf_counter(), 0))[0]
                for p in procs]  # one deadline for the whole launch
    except BaseException:  # subprocess.TimeoutExpired, or the reader's interrupt
        for p in procs:
            with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(p.pid, signal.SIGTERM)  # torchrun stops its ranks within 30 s
                p.wait(timeout=STOP_GRACE)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # then whatever is left
        raise
    if any(p.returncode != 0 for p in procs):
        raise RuntimeError("torchrun failed:\n" + "\n".join(log[-3000:] for log in logs))
    ranks = sorted((json.loads(p.read_text()) for p in out.glob("rank*.json")),
                   key=lambda r: r["rank"])
    if len(ranks) != nproc * len(cmds):
        raise RuntimeError(f"expected {nproc * len(cmds)} result files in {out}, "
                           f"found {len(ranks)}")
    print(f"  {len(ranks)} rank(s), launch {format_seconds(time.perf_counter() - t0)}")
    return ranks
