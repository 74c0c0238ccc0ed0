"""Counting what a training step keeps in memory: parameters, gradients, optimizer state, activations."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn

from course_utils.devices import synchronize


def _check_module(module: Any, caller: str) -> nn.Module:
    """Return `module` if it is an nn.Module, else raise a TypeError naming `caller`."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"{caller} expects a torch.nn.Module, got {type(module).__name__}.")
    return module


def parameter_bytes(module: nn.Module) -> int:
    """Bytes held by the parameters of `module` (a shared parameter counts once)."""
    return sum(p.nbytes for p in _check_module(module, "parameter_bytes").parameters())


def gradient_bytes(module: nn.Module) -> int:
    """Bytes held by the .grad tensors of `module`'s parameters (0 before backward or after zero_grad())."""
    params = _check_module(module, "gradient_bytes").parameters()
    return sum(p.grad.nbytes for p in params if p.grad is not None)


def optimizer_state_breakdown(optimizer: torch.optim.Optimizer) -> dict[str, int]:
    """Bytes of an optimizer's state tensors per state name, e.g. {'exp_avg': ..., 'step': ...} for Adam."""
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer_state_breakdown expects a torch.optim.Optimizer, got {type(optimizer).__name__}."
        )
    totals: dict[str, int] = {}
    for state in optimizer.state.values():
        for name, value in state.items():
            if isinstance(value, torch.Tensor):
                totals[name] = totals.get(name, 0) + value.nbytes
    return totals


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of all state tensors an optimizer keeps (0 until its first step() creates them)."""
    return sum(optimizer_state_breakdown(optimizer).values())


def _storage_key(t: torch.Tensor) -> tuple[str, int]:
    """Identify the memory block behind `t`: its device and the address of its storage."""
    return str(t.device), t.untyped_storage().data_ptr()


class _Block:
    """One storage saved for backward: its size and weak references to the saved tensors using it."""

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.refs: list[weakref.ref[torch.Tensor]] = []

    def alive(self) -> bool:
        """Return True while autograd still holds one of the saved tensors on this storage."""
        return any(r() is not None for r in self.refs)


class SavedActivations:
    """Measure the tensors autograd saves for backward inside a `with` block, on any device.

    Each storage counts once (a ReLU output saved by the ReLU and by the next Linear is one
    block of memory), and storages of the tensors in `exclude` (pass model.parameters()) are not
    counted. After the block: `total_bytes` and `count` are what was saved, `peak_bytes` the
    most held at once, and `alive_bytes()` what autograd still holds now. The hooks hand
    autograd a detached alias of each tensor, which shares its memory: nothing is copied.
    """

    def __init__(self, exclude: Iterable[torch.Tensor] = ()) -> None:
        excluded = list(exclude)
        bad = [type(t).__name__ for t in excluded if not isinstance(t, torch.Tensor)]
        if bad:
            raise TypeError(f"SavedActivations(exclude=...) takes tensors, got {bad[0]}.")
        self._excluded = {_storage_key(t) for t in excluded}
        self._blocks: dict[tuple[str, int], _Block] = {}
        self._hooks: Any = None
        self.total_bytes = 0
        self.count = 0
        self.peak_bytes = 0

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        """Count `t`'s storage if it is new, then hand autograd a detached alias of it."""
        # A detached alias: returning `t` itself would tie it to its grad_fn in a cycle
        # that Python's garbage collector cannot see, and the saved tensors would never be freed.
        packed = t.detach()
        key = _storage_key(t)
        if key in self._excluded:
            return packed
        if key[1] == 0:  # no real address (meta or empty tensors): count each tensor by itself
            key = (key[0], -id(packed))
        block = self._blocks.get(key)
        if block is None or not block.alive():  # a new storage, or a freed address reused
            block = _Block(t.untyped_storage().nbytes())
            self._blocks[key] = block
            self.total_bytes += block.nbytes
            self.count += 1
        block.refs.append(weakref.ref(packed))
        self.peak_bytes = max(self.peak_bytes, self.alive_bytes())
        return packed

    @staticmethod
    def _unpack(t: torch.Tensor) -> torch.Tensor:
        """Give back what _pack stored."""
        return t

    def alive_bytes(self) -> int:
        """Bytes of the counted storages that autograd still holds."""
        return sum(b.nbytes for b in self._blocks.values() if b.alive())

    def __enter__(self) -> SavedActivations:
        if self._hooks is not None:
            raise RuntimeError("this SavedActivations is already in use; make a new one.")
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)


def peak_cuda_bytes(fn: Callable[[], Any], device: str | torch.device) -> int | None:
    """Run fn() and return the peak bytes allocated on a CUDA `device` above the start.

    On any other device (or without CUDA) it returns None at once, without calling fn:
    there is no peak counter to read, so running the work would only cost time.
    """
    if not callable(fn):
        raise TypeError(f"peak_cuda_bytes needs a callable, got {type(fn).__name__}.")
    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available():
        return None
    synchronize(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    start = torch.cuda.memory_allocated(dev)
    fn()
    synchronize(dev)
    return int(torch.cuda.max_memory_allocated(dev) - start)
