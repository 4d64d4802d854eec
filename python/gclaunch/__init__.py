"""gclaunch: launch CUDA kernels from Python with device-exact parameter buffers.

A thin view of the gclaunch C library (one abi3 extension for every CPython >= 3.10, no Python
dependency). The C library owns the model -- layouts, fields, checks, messages -- and this
package converts Python values into its calls.

CPU only (no GPU, no driver)::

    lay = gclaunch.Layout("grid_constant tensormap[4] maps, const f32* src, u64 n", 90)
    lay.size, lay.params, lay.field("maps[2]"), lay.leaves()
    args = gclaunch.Args(lay)
    args["n"] = 1024                  # ints, floats, bools: type and range checked
    args["src"] = torch_tensor        # any __dlpack__ object (byte_offset honoured), or an int
    args.buffer()                     # the bytes the device reads
    gclaunch.inspect("k.cubin")       # the kernels of an image, as `gclaunch inspect --json`

GPU::

    ctx = gclaunch.Context(0)
    k = ctx.load("k.cubin").kernel("k", "grid_constant tensormap[4] maps, const f32* src, u64 n")
    args = k.args()
    args["maps"] = [gclaunch.TensorMap(t, (64, 64)) for t in tensors]
    k.launch(grid, block, args, stream=torch.cuda.current_stream())
    k.launch(grid, block, [maps_bytes, x, 1024])   # or one value per parameter

Runtime (streams, events, graphs, memory, occupancy, attributes, devices)::

    s = ctx.create_stream(priority=0)            # or gclaunch.Stream.from_handle(torch_stream)
    buf = ctx.alloc(4096); buf.upload(host_bytes); buf.download()   # copies, optionally on s
    k.launch(grid, block, [buf, 1.0, 1024], stream=s, pdl=True)
    start = s.record(); ...; ms = s.record() - start               # Event: milliseconds
    with s.capture() as graph:                   # a CUDA graph of the launches on s
        k.launch(grid, block, args, stream=s)
    graph.set_args(0, k, new_args); graph.launch(s)
    k.launch(args=args, **k.persistent_config(256, shared=96 * 1024))
    k.set_attribute("max_dynamic_shared_bytes", 200 * 1024); k.attributes
    gclaunch.device_count(), gclaunch.device_info(0)

DLPack: a producer type carrying DLPack 1.3's __dlpack_c_exchange_api__ table (torch does) is
read through it, without a Python call per tensor (GCL_DLPACK_C_API=0 in the environment at
import turns this off; gclaunch.dlpack_c_api tells); otherwise __dlpack__ is called as the protocol
says (a versioned capsule first, stream=-1).

Errors: gclaunch.Error with .status ("GCL_ERROR_TENSOR"), .code and the library's message;
TypeError for values of the wrong Python type; gclaunch.RangeError (an Error and an
OverflowError) for ints out of a C type's range; gclaunch.TensorError (an Error, status
GCL_ERROR_TENSOR) for a tensor or tensor map refused, before any driver call, by the rule named
in its message (docs/tensormap-rules.md). A refused call changes nothing.
"""
from typing import NamedTuple

from ._gclaunch import (  # noqa: F401
    Args,
    Buffer,
    Context,
    Error,
    Event,
    Field,
    Graph,
    Kernel,
    Layout,
    Module,
    Param,
    RangeError,
    Stream,
    TensorError,
    TensorMap,
    TensorMapTable,
    __version__,
    device_count,
    dlpack_c_api,
    inspect,
    nvshmem_info,
    nvshmem_open,
    pe_barrier,
    pe_context,
    pe_count,
    pe_id,
    pe_stop,
    pe_unique_id,
    status_name,
    version_number,
)

from . import _gclaunch


class DeviceInfo(NamedTuple):
    """A CUDA device as gcl_device_query describes it (gclaunch.device_info)."""
    device: int
    name: str
    sm: int                          # 90 for sm_90
    multiprocessors: int
    total_memory: int                # bytes
    max_threads_per_block: int
    max_shared_per_block_optin: int  # bytes of shared memory a block may opt in to


def device_info(device: int = 0) -> DeviceInfo:
    """The device's name, architecture, SM count, memory and limits (gclaunch.Error without a
    driver or for a device out of range)."""
    return DeviceInfo(**_gclaunch._device_info(device))


def _nvshmem_wheel():
    """The pip wheel nvidia-nvshmem-cu13's host library, as Python's import system finds the
    package nvidia.nvshmem (nothing is imported but the namespace, nothing opened): handed to the
    extension, which opens it before the first call that needs NVSHMEM unless GCL_NVSHMEM_PATH
    names one. None when there is no such wheel."""
    import importlib.util
    import os
    try:
        spec = importlib.util.find_spec("nvidia.nvshmem")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        lib = os.path.join(folder, "lib", "libnvshmem_host.so.3")
        if os.path.isfile(lib):
            return lib
    return None


_wheel = _nvshmem_wheel()
if _wheel:
    _gclaunch._nvshmem_wheel(_wheel)
del _wheel

# The gcl_status values by name (GCL_OK, GCL_ERROR_TENSOR, ...): Error.code is one of them.
globals().update({k: v for k, v in vars(_gclaunch).items() if k.startswith("GCL_")})

__all__ = [
    "Args", "Buffer", "Context", "DeviceInfo", "Error", "Event", "Field", "Graph", "Kernel",
    "Layout", "Module", "Param", "RangeError", "Stream", "TensorError", "TensorMap", "TensorMapTable",
    "__version__",
    "device_count", "device_info", "dlpack_c_api", "inspect", "nvshmem_info", "nvshmem_open",
    "pe_barrier",
    "pe_context", "pe_count", "pe_id", "pe_stop", "pe_unique_id", "status_name", "version_number",
] + sorted(k for k in vars(_gclaunch) if k.startswith("GCL_"))
