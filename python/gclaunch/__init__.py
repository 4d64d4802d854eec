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
from ._gclaunch import (  # noqa: F401
    Args,
    Context,
    Error,
    Field,
    Kernel,
    Layout,
    Module,
    Param,
    RangeError,
    TensorError,
    TensorMap,
    __version__,
    dlpack_c_api,
    inspect,
    status_name,
    version_number,
)

from . import _gclaunch

# The gcl_status values by name (GCL_OK, GCL_ERROR_TENSOR, ...): Error.code is one of them.
globals().update({k: v for k, v in vars(_gclaunch).items() if k.startswith("GCL_")})

__all__ = [
    "Args", "Context", "Error", "Field", "Kernel", "Layout", "Module", "Param", "RangeError", "TensorError",
    "TensorMap", "__version__", "dlpack_c_api", "inspect", "status_name", "version_number",
] + sorted(k for k in vars(_gclaunch) if k.startswith("GCL_"))
