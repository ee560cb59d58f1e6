"""A simulated accelerator, so that device placement is tested on a machine without a GPU.

`simulated_device()` makes `runtime.resolve_device("cuda")` return a device `meta:1` that holds real numbers
(Hugging Face's own use of `meta`, index-less, for empty initialisation is left alone): a tensor moved there
(`.to(device)`, or created with `device=`) is a CPU tensor wrapped in `OnDevice`, which reports `meta:1` as
its device. A dispatch mode runs every operation on the wrapped CPU tensors, and fails an
operation that mixes a device tensor with a CPU tensor of one or more dimensions, as CUDA does ("Expected all
tensors to be on the same device"); `.numpy()` of a device tensor fails too, as on CUDA. A whole stage runs
under it with its real numbers; the mode also counts where the model's arithmetic ran (`device_compute`,
`cpu_compute`), so a stage that ignores the device (everything on the CPU, nothing mixed) fails as well.

The mode also counts host reads (`host_reads`): the operations that make the host wait for a GPU (`.item()`,
`int()`/`float()`/`bool()` of a device tensor, boolean-mask indexing and `nonzero`, `.cpu()`, `.tolist()`).

The CUDA-only branches (pinned memory, the prefetching thread, fused optimisers, SDPA, CUDA RNG states) do not
run here: `device.type` is `meta`. Tests that need them are marked to run where a GPU is present.
"""
from __future__ import annotations

import contextlib

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
from torch.utils._pytree import tree_leaves, tree_map

DEVICE = torch.device("meta", 1)
aten = torch.ops.aten
# Operations CUDA accepts with CPU tensors among device ones: cross-device copies, and the CPU lengths of packed
# sequences (pack_padded_sequence requires them on the CPU).
MIXED_OK = {aten.copy_.default, aten._pack_padded_sequence.default, aten._pad_packed_sequence.default,
            aten.lstm.data}
# Outputs that stay on the CPU whatever the inputs (a packed sequence's batch sizes).
CPU_OUTPUTS = {aten._pack_padded_sequence.default: 1}
# The model's arithmetic: where these run says where a stage computed.
COMPUTE = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default, aten.embedding.default,
           aten.native_layer_norm.default, aten.lstm.data, aten.lstm.input}


class OnDevice(torch.Tensor):
    """A CPU tensor that says it is on the simulated device."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor):
        return torch.Tensor._make_wrapper_subclass(cls, inner.size(), strides=inner.stride(),
                                                   storage_offset=inner.storage_offset(), dtype=inner.dtype,
                                                   device=DEVICE, requires_grad=inner.requires_grad)

    def __init__(self, inner: torch.Tensor):
        self.inner = inner

    def __repr__(self) -> str:
        return f"OnDevice({self.inner!r})"

    def tolist(self):  # copies to the host, as on CUDA
        for simulator in _ACTIVE:
            simulator.host_reads.append("tolist")
        return self.inner.tolist()

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert a device tensor to numpy: use Tensor.cpu() first (as on CUDA)")

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError(f"{func}: a simulated-device tensor used outside simulated_device()")


_ACTIVE: list = []  # the Simulator in use (for `OnDevice.tolist`, which runs outside the dispatcher)
# Operations whose result's size or value the host must read from the device (a wait for it on CUDA).
SYNCING = {aten._local_scalar_dense.default, aten.nonzero.default, aten.masked_select.default}


def _reads_host(func, args, placed: list[bool]) -> bool:
    """A wait on the device: a value or size read back, or indexing by a boolean mask (a hidden `nonzero`)."""
    if not any(placed):
        return False
    if func in SYNCING:
        return True
    if func in (aten.index.Tensor, aten.index_put.default, aten.index_put_.default, aten._index_put_impl_.default):
        return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1] if i is not None)
    return False


def _on_device(value) -> bool:
    return isinstance(value, (torch.device, str)) and torch.device(value) == DEVICE


class Simulator(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.violations: list[str] = []
        self.device_compute = 0
        self.cpu_compute: list[str] = []
        self.host_reads: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is aten._to_copy.default:
            return self._to(args[0], kwargs)
        tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        placed = [isinstance(t, OnDevice) for t in tensors]
        strays = [t for t in tensors if not isinstance(t, OnDevice) and t.dim() > 0]
        if any(placed) and strays and func not in MIXED_OK:
            self.violations.append(f"{func}: a CPU tensor of shape {tuple(strays[0].shape)} among device tensors")
            raise RuntimeError(f"Expected all tensors to be on the same device: {self.violations[-1]}")
        if _reads_host(func, args, placed):
            self.host_reads.append(str(func))
        if func in COMPUTE:
            if any(placed):
                self.device_compute += 1
            else:
                self.cpu_compute.append(str(func))
        create = _on_device(kwargs.get("device"))
        if create:
            kwargs = {**kwargs, "device": torch.device("cpu")}
        unwrap = lambda t: t.inner if isinstance(t, OnDevice) else t  # noqa: E731
        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))
        if func is aten._local_scalar_dense.default or not (any(placed) or create):
            return out  # .item() gives a number, as on CUDA; CPU-only work stays on the CPU
        if func.overloadpacket.__name__.endswith("_") and isinstance(args[0], OnDevice):
            return args[0]  # in place
        if "out" in kwargs:
            return kwargs["out"]
        if func in CPU_OUTPUTS:
            keep = CPU_OUTPUTS[func]
            return tuple(t if i == keep else OnDevice(t) for i, t in enumerate(out))
        with torch.inference_mode(False):  # a view's wrapper shares its base's version counter: not an inference
            return tree_map(lambda t: OnDevice(t) if isinstance(t, torch.Tensor) else t, out)  # tensor

    def _to(self, source: torch.Tensor, kwargs: dict):
        """`.to(...)`: onto the device (wrap), back to the CPU (unwrap), or a dtype change where it is."""
        target = kwargs.get("device")
        inner = source.inner if isinstance(source, OnDevice) else source
        out = aten._to_copy.default(inner, **{k: v for k, v in kwargs.items() if k != "device"})
        if target is not None and not _on_device(target):
            if isinstance(source, OnDevice):  # .cpu(): a copy back to the host
                self.host_reads.append("to cpu")
            return out
        return OnDevice(out) if target is not None or isinstance(source, OnDevice) else out


_MODULE_TO = torch.nn.Module.to


def _no_grad_enter(self) -> None:
    self._no_grad = torch.no_grad()
    self._no_grad.__enter__()


def _no_grad_exit(self, *exc) -> None:
    self._no_grad.__exit__(*exc)


def _outside(load):
    def run(cls, *args, **kwargs):
        with _disable_current_modes():
            return load.__func__(cls, *args, **kwargs)
    return run


def _module_to(self, *args, **kwargs):
    """Module.to onto the simulated device swaps parameters in place, so tied weights stay tied (as on CUDA)."""
    if torch._C._nn._parse_to(*args, **kwargs)[0] != DEVICE:
        return _MODULE_TO(self, *args, **kwargs)
    swap = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        return _MODULE_TO(self, *args, **kwargs)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(swap)


class Literals(TorchFunctionMode):
    """`torch.tensor(data, device=...)` builds its tensor below the dispatcher: onto the simulated device it is
    made on the CPU and moved, as CUDA does."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.tensor, torch.as_tensor) and _on_device(kwargs.get("device")):
            return func(*args, **{**kwargs, "device": None}).to(DEVICE)
        return func(*args, **kwargs)


@contextlib.contextmanager
def simulated_device(monkeypatch):
    """Run the body with `device: cuda` resolving to the simulated device; yields the Simulator (its
    `violations`, `device_compute`, `cpu_compute`)."""
    import mbertlab.runtime

    monkeypatch.setattr(mbertlab.runtime, "_accelerator", lambda index, setting: DEVICE)
    monkeypatch.setattr(torch.nn.Module, "to", _module_to)
    # Wrapper tensors and inference mode do not mix in this PyTorch: inference_mode runs as no_grad here (where
    # tensors are placed does not change).
    monkeypatch.setattr(torch.autograd.grad_mode.inference_mode, "__enter__", _no_grad_enter)
    monkeypatch.setattr(torch.autograd.grad_mode.inference_mode, "__exit__", _no_grad_exit)
    # Hugging Face materialises loaded models from its own meta tensors in ways a dispatch mode disturbs (buffers
    # left on meta): it loads with the mode off, on the CPU, where every stage loads before moving the model.
    from transformers import PreTrainedModel

    monkeypatch.setattr(PreTrainedModel, "from_pretrained", classmethod(_outside(PreTrainedModel.from_pretrained)))
    with Simulator() as simulator, Literals():
        _ACTIVE.append(simulator)
        try:
            yield simulator
        finally:
            _ACTIVE.remove(simulator)


def assert_ran_on_device(simulator: Simulator) -> None:
    assert simulator.violations == []
    assert simulator.cpu_compute == [], f"model arithmetic ran on the CPU: {sorted(set(simulator.cpu_compute))}"
    assert simulator.device_compute > 0


@contextlib.contextmanager
def reads_between_steps(simulator: Simulator):
    """Yields a list that ends up holding, for each pair of consecutive optimiser steps, the host reads made
    between them (the later step's forward and backward, and whatever followed the earlier step)."""
    marks: list[int] = []
    handle = register_optimizer_step_pre_hook(
        lambda opt, args, kwargs: marks.append(len(simulator.host_reads)))
    counts: list[int] = []
    try:
        yield counts
    finally:
        handle.remove()
        counts.extend(b - a for a, b in zip(marks, marks[1:]))
