"""Type stub of the gclaunch package (the _gclaunch C extension)."""
from os import PathLike
from typing import Any, Iterable, NamedTuple, Protocol, Sequence, Union

__version__: str
version_number: int
dlpack_c_api: int  # 1 unless GCL_DLPACK_C_API=0 was set at import (the DLPack C exchange API is used)

class _DLPack(Protocol):
    def __dlpack__(self, *, stream: Any = ..., max_version: Any = ...) -> Any: ...

class _CudaStream(Protocol):
    def __cuda_stream__(self) -> tuple[int, int]: ...

_Buffer = Union[bytes, bytearray, memoryview]
_Key = Union[int, str]
_Dims = Union[int, tuple[int], tuple[int, int], tuple[int, int, int]]
_Path = Union[str, PathLike[str]]

class Error(Exception):
    """A call of the C library failed: .status ('GCL_ERROR_TENSOR'), .code, .cuda_error; str(e)
    is the library's message."""
    status: str
    code: int
    cuda_error: int

class RangeError(Error, OverflowError):
    """An int out of the range its C type or argument takes -- anywhere: fields, parameter
    indices (args[-9] on 8 parameters), Layout sm, Context device, inspect arch, status_name,
    TensorMap box/element_strides/swizzle/l2/interleave, launch grid/block/cluster/shared, stream
    handles below 0 -- or a finite float that would become inf in an f32/f16/bf16 field (inf and
    nan given as such are kept). status GCL_ERROR_INVALID_ARGUMENT.

    The contract of every callable: a value, a gclaunch.Error subclass, or TypeError for an
    argument of the wrong Python type; a refused call changes nothing. str arguments with a NUL
    or a lone surrogate raise gclaunch.Error (not ValueError / UnicodeEncodeError)."""

class Param(NamedTuple):
    """A collections.namedtuple subclass: _asdict(), _fields and _replace() work on the six
    fields; the rest are attributes of the instance."""
    index: int
    name: str | None
    offset: int
    size: int
    align: int
    kind: str
    # attributes beyond the tuple: dtype, count, elem_kind, const, grid_constant
    @property
    def dtype(self) -> str | None: ...
    @property
    def count(self) -> int: ...
    @property
    def elem_kind(self) -> str: ...
    @property
    def const(self) -> bool: ...
    @property
    def grid_constant(self) -> bool: ...

class Field(NamedTuple):
    path: str
    param: int
    offset: int
    size: int
    align: int
    kind: str
    @property
    def dtype(self) -> str | None: ...
    @property
    def count(self) -> int: ...
    @property
    def elem_kind(self) -> str: ...
    @property
    def const(self) -> bool: ...

class Layout:
    """The device-exact parameter layout of a signature on architecture sm (CPU only)."""
    def __init__(self, signature: str, sm: int) -> None: ...
    @property
    def size(self) -> int: ...
    @property
    def params(self) -> list[Param]: ...
    @property
    def sm(self) -> int: ...
    @property
    def signature(self) -> str | None: ...
    def field(self, path_or_index: _Key) -> Field: ...
    def leaves(self) -> list[Field]: ...
    def __len__(self) -> int: ...

class TensorMap:
    """A TMA descriptor to encode from a __dlpack__ tensor when assigned into Args; box and
    element_strides in the tensor's dimension order."""
    def __init__(self, tensor: _DLPack, box: Union[int, Sequence[int]], *, swizzle: int = 0,
                 store: bool = False, oob_nan: bool = False, l2: int = 0,
                 element_strides: Sequence[int] | None = None, interleave: int = 0) -> None: ...
    @property
    def tensor(self) -> _DLPack: ...
    @property
    def box(self) -> tuple[int, ...]: ...
    @property
    def store(self) -> bool: ...
    def describe(self) -> dict[str, Any]: ...

_Value = Union[int, float, bool, _Buffer, _DLPack, TensorMap, Sequence[TensorMap], Sequence[Union[int, float]]]

class Args:
    """A parameter buffer: args[path_or_index] = value, and args[path_or_index] to read back.

    Keep-alive: the args hold every object a tensor-map or pointer leaf points into (the
    TensorMap's tensor, a pointer's __dlpack__ producer) until the leaf is overwritten or the
    args go; clone() holds the same. An int address is the caller's to keep alive."""
    def __init__(self, layout: Layout) -> None: ...
    @property
    def layout(self) -> Layout: ...
    def __setitem__(self, key: _Key, value: _Value) -> None: ...
    def __getitem__(self, key: _Key) -> Union[int, float, bool, bytes, list[Any]]:
        """The field as the device will read it: a scalar as int/float/bool, a pointer as its
        int address, an array of scalars as a list, a tensormap as its 128 bytes, a tensormap[N]
        as a list of N bytes objects, anything else (structs, untyped parameters) as bytes.
        gclaunch.Error GCL_ERROR_UNSET_ARGUMENT while a byte of it is unset."""
    def is_set(self, path_or_index: _Key) -> bool: ...
    def buffer(self) -> bytes: ...
    def refresh(self, path: _Key, tensormaps: Union[TensorMap, Sequence[TensorMap]]) -> None:
        """gclaunch.Error GCL_ERROR_TYPE_MISMATCH when path is no tensormap / tensormap[N]."""
    def repoint(self, path: _Key, addresses: Union[int, _DLPack, Sequence[Union[int, _DLPack]]]) -> None:
        """gclaunch.Error GCL_ERROR_TYPE_MISMATCH when path is no tensormap / tensormap[N]."""
    def clone(self) -> Args: ...

class Kernel:
    @property
    def layout(self) -> Layout: ...
    @property
    def name(self) -> str: ...
    @property
    def handle(self) -> int: ...
    @property
    def context(self) -> Context: ...
    def args(self) -> Args: ...
    def launch(self, grid: _Dims, block: _Dims, args_or_values: Union[Args, Sequence[_Value]], *,
               shared: int = 0, stream: Union[None, int, _CudaStream] = None,
               cluster: _Dims | None = None, cooperative: bool = False) -> None:
        """stream: None, an int CUstream (0, 1 = CU_STREAM_LEGACY, 2 = CU_STREAM_PER_THREAD, or a
        live stream of this kernel's context), or an object with __cuda_stream__. A handle that
        is no live stream raises gclaunch.Error (RangeError below 0) before the driver launches:
        values 3 ... 4095 are refused, the memory at the handle is checked to be mapped (asked of
        the kernel), then the driver says whose stream it is (cuStreamGetCtx)."""

class Module:
    @property
    def log(self) -> str: ...
    @property
    def context(self) -> Context: ...
    def kernel(self, name: str, signature: str | None = None) -> Kernel: ...

class Context:
    def __init__(self, device: int = 0) -> None: ...
    @property
    def device(self) -> int: ...
    @property
    def sm(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def handle(self) -> int: ...
    def load(self, path_or_bytes: Union[_Path, _Buffer]) -> Module: ...
    def compile(self, source: str, name: str = "kernel.cu", options: Iterable[str] = ()) -> Module: ...
    def synchronize(self) -> None: ...

def inspect(path_or_bytes: Union[_Path, _Buffer], arch: Union[int, str, None] = None) -> list[dict[str, Any]]: ...
def status_name(code: int) -> str: ...

GCL_OK: int
GCL_ERROR_INVALID_ARGUMENT: int
GCL_ERROR_OUT_OF_MEMORY: int
GCL_ERROR_PARSE: int
GCL_ERROR_LAYOUT_TOO_LARGE: int
GCL_ERROR_UNSET_ARGUMENT: int
GCL_ERROR_TYPE_MISMATCH: int
GCL_ERROR_TENSOR: int
GCL_ERROR_TENSOR_VERSION: int
GCL_ERROR_BAD_IMAGE: int
GCL_ERROR_NOT_FOUND: int
GCL_ERROR_SIGNATURE_MISMATCH: int
GCL_ERROR_NO_DRIVER: int
GCL_ERROR_STUB_DRIVER: int
GCL_ERROR_NO_DEVICE: int
GCL_ERROR_DRIVER_TOO_OLD: int
GCL_ERROR_DRIVER: int
GCL_ERROR_NO_NVRTC: int
GCL_ERROR_COMPILE: int
GCL_ERROR_INVALID_CONFIG: int
GCL_ERROR_IO: int
GCL_ERROR_KERNEL_FAULT: int
