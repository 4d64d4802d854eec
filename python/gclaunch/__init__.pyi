"""Type stub of the gclaunch package (the _gclaunch C extension)."""
from os import PathLike
from typing import Any, Iterable, Literal, NamedTuple, Protocol, Sequence, TypedDict, Union

__version__: str
version_number: int
dlpack_c_api: int  # 1 unless GCL_DLPACK_C_API=0 was set at import (the DLPack C exchange API is used)

class _DLPack(Protocol):
    def __dlpack__(self, *, stream: Any = ..., max_version: Any = ...) -> Any: ...

class _CudaStream(Protocol):
    def __cuda_stream__(self) -> tuple[int, int]: ...

_Buffer = Union[bytes, bytearray, memoryview]
_Key = Union[int, str]
class _Index(Protocol):  # an int of another library (NumPy's integers)
    def __index__(self) -> int: ...

# grid, block and cluster everywhere (launch and the occupancy calls): an int, or a tuple or list
# of 1 to 3 of them; each 0 ... 2**32-1
_Int = Union[int, _Index]
_Dims = Union[_Int, tuple[_Int], tuple[_Int, _Int], tuple[_Int, _Int, _Int], list[_Int]]
_Path = Union[str, PathLike[str]]
class _TorchStreamOld(Protocol):  # torch streams of before __cuda_stream__
    cuda_stream: int

_StreamLike = Union[None, int, _CudaStream, _TorchStreamOld, "Stream"]
_LaunchConfig = dict[str, Any]  # {'grid': (n, 1, 1), 'block': (b, 1, 1), 'shared': bytes}

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

class TensorError(Error):
    """A tensor or tensor map refused (status GCL_ERROR_TENSOR) before any driver call; the
    message names the tensor, the DLPack dimension or option, the value and the limit."""

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
    element_strides in the tensor's dimension order. im2col=(pixels, channels) instead of a box
    makes an im2col map over a channels-last tensor; lower and upper are its bounding box's
    corners, innermost spatial dimension first (W, H, D)."""
    def __init__(self, tensor: _DLPack, box: Union[int, Sequence[int], None] = None, *,
                 swizzle: int = 0, store: bool = False, oob_nan: bool = False, l2: int = 0,
                 element_strides: Sequence[int] | None = None, interleave: int = 0,
                 im2col: tuple[int, int] | None = None, lower: Sequence[int] | None = None,
                 upper: Sequence[int] | None = None) -> None: ...
    @property
    def tensor(self) -> _DLPack: ...
    @property
    def box(self) -> tuple[int, ...] | None: ...
    @property
    def store(self) -> bool: ...
    def describe(self) -> dict[str, Any]: ...

_Value = Union[int, float, bool, _Buffer, _DLPack, TensorMap, Sequence[TensorMap], Sequence[Union[int, float]]]

_Where = Union[_Key, int]

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
    # The tensor-map methods Args and TensorMapTable share (one implementation, the library's
    # gcl_tensormaps_set / gcl_tensormaps_repoint over slots). where: for Args a path or index
    # naming a tensormap (a list sets maps from that element on) or a tensormap[N] (from its
    # element 0); for a TensorMapTable the first entry's index.
    def set_tensormaps(self, where: _Where, tensormaps: Union[TensorMap, Sequence[TensorMap]]) -> None:
        """Sets maps at where: each tensor read through __dlpack__ with its producer's flags (a
        read-only tensor under a store map: gclaunch.TensorError, rule 28); a map whose
        description the slot holds is re-pointed or left alone, anything else checked and
        encoded. All or nothing. gclaunch.Error GCL_ERROR_TYPE_MISMATCH when where is no
        tensormap / tensormap[N] of Args."""
    def refresh(self, where: _Where, tensormaps: Union[TensorMap, Sequence[TensorMap]]) -> None:
        """set_tensormaps under its 0.3 name."""
    def repoint(self, where: _Where, addresses: Union[int, _DLPack, Sequence[Union[int, _DLPack]], memoryview, Any]) -> None:
        """addresses: an int, a list of ints or __dlpack__ tensors, or a host array of 64-bit
        addresses (a CPU __dlpack__ tensor of (u)int64 such as NumPy uint64 or torch int64, or a
        buffer such as array.array('Q')), read as one block. All or nothing."""
    def set_peer_tensormaps(self, where: _Where, map: TensorMap, pes: list[int] | tuple[int, ...] | range | None = None,
                            refresh: bool = False) -> None:
        """Peer tensor maps (docs/multigpu.md): map (over this PE's copy of a symmetric buffer)
        set once per PE of pes (None: every PE in rank order) over that PE's copy, into
        consecutive maps from where. GCL_ERROR_PEER_UNREACHABLE naming the PE and its index in
        pes before any map is set; nothing changed on any refusal. refresh: accepted, ignored.
        Re-point with repoint(where, [buf.peer_address(p) + off for p in pes]) (peer_address is
        the start of PE p's copy: off is the map's offset into the Buffer). pes: a list, tuple or
        range of ints."""
    def clone(self) -> Args: ...

class TensorMapTable:
    """count tensor maps in device memory (gcl_tensormap_table), for kernels with more
    descriptors than a parameter holds: the kernel takes table.address as a pointer and fences
    each map before its first use (<gclaunch/tmap_table.cuh>). The same tensor-map
    methods as Args, by entry index; upload() copies the changed maps to the device. Keeps its
    Context and the tensors its maps point into alive. Graphs: stream.capture_table(table)
    during a capture, graph.set_table(table) after re-pointing."""
    def __init__(self, count: int, context: Context | None = None) -> None: ...
    def __len__(self) -> int: ...
    @property
    def address(self) -> int: ...
    @property
    def dirty(self) -> int: ...
    @property
    def context(self) -> Context: ...
    def map(self, index: int) -> bytes: ...
    def upload(self, stream: _StreamLike = None) -> None: ...
    def close(self) -> None: ...
    # The tensor-map methods Args and TensorMapTable share (see Args) (one implementation, the library's
    # gcl_tensormaps_set / gcl_tensormaps_repoint over slots). where: for Args a path or index
    # naming a tensormap (a list sets maps from that element on) or a tensormap[N] (from its
    # element 0); for a TensorMapTable the first entry's index.
    def set_tensormaps(self, where: _Where, tensormaps: Union[TensorMap, Sequence[TensorMap]]) -> None:
        """Sets maps at where: each tensor read through __dlpack__ with its producer's flags (a
        read-only tensor under a store map: gclaunch.TensorError, rule 28); a map whose
        description the slot holds is re-pointed or left alone, anything else checked and
        encoded. All or nothing. gclaunch.Error GCL_ERROR_TYPE_MISMATCH when where is no
        tensormap / tensormap[N] of Args."""
    def refresh(self, where: _Where, tensormaps: Union[TensorMap, Sequence[TensorMap]]) -> None:
        """set_tensormaps under its 0.3 name."""
    def repoint(self, where: _Where, addresses: Union[int, _DLPack, Sequence[Union[int, _DLPack]], memoryview, Any]) -> None:
        """addresses: an int, a list of ints or __dlpack__ tensors, or a host array of 64-bit
        addresses (a CPU __dlpack__ tensor of (u)int64 such as NumPy uint64 or torch int64, or a
        buffer such as array.array('Q')), read as one block. All or nothing."""
    def set_peer_tensormaps(self, where: _Where, map: TensorMap, pes: list[int] | tuple[int, ...] | range | None = None,
                            refresh: bool = False) -> None:
        """Peer tensor maps (docs/multigpu.md): map (over this PE's copy of a symmetric buffer)
        set once per PE of pes (None: every PE in rank order) over that PE's copy, into
        consecutive maps from where. GCL_ERROR_PEER_UNREACHABLE naming the PE and its index in
        pes before any map is set; nothing changed on any refusal. refresh: accepted, ignored.
        Re-point with repoint(where, [buf.peer_address(p) + off for p in pes]) (peer_address is
        the start of PE p's copy: off is the map's offset into the Buffer). pes: a list, tuple or
        range of ints."""

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
               shared: int = 0, stream: _StreamLike = None,
               cluster: _Dims | None = None, cooperative: bool = False,
               pdl: Union[bool, Literal["unchecked"]] = False,
               priority: int = 0) -> None:
        """stream: None, an int CUstream (0, 1 = CU_STREAM_LEGACY, 2 = CU_STREAM_PER_THREAD, or a
        live stream of this kernel's context), an object with __cuda_stream__, or a
        gclaunch.Stream. A handle that is no live stream raises gclaunch.Error (RangeError below
        0) before the driver launches: values 3 ... 4095 are refused, the memory at the handle is
        checked to be mapped (asked of the kernel), then the driver says whose stream it is
        (cuStreamGetCtx). grid: blocks (not clusters) per dimension; block: threads per block; cluster: blocks
        per cluster per dimension (cuLaunchKernelEx's cluster dimension: grid must be a multiple
        of it), None for no cluster. pdl: programmatic dependent launch (this kernel may start
        while the previous kernel on the stream finishes; it must wait with
        griddepcontrol.wait / cudaGridDependencySynchronize; a kernel whose code never waits is
        refused with GCL_ERROR_INVALID_CONFIG unless pdl='unchecked'). priority: the launch priority
        attribute (0: none; lower numbers are higher, as stream priorities)."""
    # occupancy (each mirrors one C call)
    def occupancy(self, block: _Dims, shared: int = 0) -> int: ...
    def max_cooperative_grid(self, block: _Dims, shared: int = 0) -> int: ...
    def active_clusters(self, cluster: _Dims, block: _Dims, shared: int = 0) -> int: ...
    def persistent_config(self, block: _Dims, shared: int = 0) -> _LaunchConfig: ...
    # attributes: max_threads_per_block, static_shared_bytes, registers,
    # max_dynamic_shared_bytes, local_bytes, preferred_carveout, cluster_scheduling_policy,
    # nonportable_cluster_size_allowed (the last four settable)
    @property
    def attributes(self) -> dict[str, int]: ...
    def attribute(self, name: str) -> int: ...
    def set_attribute(self, name: str, value: int) -> None: ...

class Module:
    @property
    def log(self) -> str: ...
    @property
    def context(self) -> Context: ...
    def kernel(self, name: str, signature: str | None = None) -> Kernel: ...
    @property
    def uses_nvshmem(self) -> bool: ...
    def attach(self) -> None:
        """Attach this NVSHMEM module to the PE before any launch of its kernels (a launch of an
        unattached one is gclaunch.Error GCL_ERROR_NOT_ATTACHED, before the driver)."""
    def detach(self) -> None: ...

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
    def compile(self, source: str, name: str = "kernel.cu", options: Iterable[str] = ()) -> Module:
        """NVRTC for this device: -arch=sm_NN of the device unless an option starts with -arch or
        --gpu-architecture; the toolkit's CCCL headers on the include path (docs/python.md)."""
    def synchronize(self) -> None: ...
    def create_stream(self, priority: int = 0) -> Stream: ...
    def create_event(self) -> Event: ...
    def alloc(self, nbytes: int) -> Buffer: ...
    def pe_start(self, unique_id: _Buffer | None = None, rank: int = 0, count: int = 1) -> None:
        """Start this process's NVSHMEM PE on this Context (collective; unique_id: rank 0's
        pe_unique_id(), None for a single PE)."""
    def symmetric_alloc(self, nbytes: int) -> Buffer:
        """NVSHMEM symmetric memory (collective) as a Buffer; close() is collective too."""

class Stream:
    """A non-blocking CUDA stream (Stream(context, priority) or ctx.create_stream), or a wrapper
    of another library's stream (Stream.from_handle). priority: 0 lowest, lower numbers higher;
    out of the device's range raises gclaunch.Error naming the range."""
    def __init__(self, context: Context | None = None, priority: int = 0) -> None: ...
    @classmethod
    def from_handle(cls, obj: Union[int, _CudaStream, Stream], context: Context | None = None) -> Stream: ...
    def __cuda_stream__(self) -> tuple[int, int]: ...
    @property
    def handle(self) -> int: ...
    @property
    def priority(self) -> int: ...
    @property
    def context(self) -> Context: ...
    @property
    def is_capturing(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def synchronize(self) -> None: ...
    def record(self, event: Event | None = None) -> Event: ...
    def wait(self, event_or_stream: Union[Event, _StreamLike]) -> None: ...
    def begin_capture(self) -> None: ...
    def end_capture(self) -> Graph: ...
    def capture(self) -> Graph:
        """with stream.capture() as graph: ... (launches on this Stream become the graph)."""
    def capture_table(self, table: TensorMapTable) -> None:
        """During a capture: every replay first uploads the table's maps (as they are when the
        capture ends, or at graph.set_table)."""
    def close(self) -> None: ...
    def __enter__(self) -> Stream: ...
    def __exit__(self, *exc: Any) -> bool: ...

class Event:
    """A CUDA event with timing. stop - start: device time between the records, in
    milliseconds (float), as cuda.core and CuPy give it."""
    def __init__(self, context: Context | None = None) -> None: ...
    def record(self, stream: _StreamLike = None) -> Event: ...
    def synchronize(self) -> None: ...
    @property
    def is_done(self) -> bool: ...
    @property
    def context(self) -> Context: ...
    def elapsed_ms(self, stop: Event) -> float: ...
    def __sub__(self, start: Event) -> float: ...

class Graph:
    """A CUDA graph captured from a Stream (stream.capture() / end_capture()), instantiated when
    the capture ends. Inside `with s.capture() as g:` g is still being captured: kernel_count,
    launch, set_args and close raise gclaunch.Error, kernels is (). New arguments for a replay
    (re-pointed maps included): g.set_args(node, kernel, args) before g.launch()."""
    @property
    def kernel_count(self) -> int: ...
    @property
    def kernels(self) -> tuple[Kernel, ...]: ...
    def set_args(self, node: int, kernel: Kernel, args_or_values: Union[Args, Sequence[_Value]]) -> None: ...
    def set_table(self, table: TensorMapTable) -> None:
        """The table's maps as they are now, for later launches (a table captured into g)."""
    def launch(self, stream: _StreamLike = None) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Graph: ...
    def __exit__(self, *exc: Any) -> bool: ...

class Buffer:
    """Device memory (ctx.alloc). __dlpack__ exports 1-D uint8 of size bytes unless a typed view
    (view(dtype, shape)) is exported; a Buffer is a pointer argument of launches (kept alive by
    the Args; a launch given a list of values keeps nothing). close() is refused while views,
    Args holding it or DLPack exports are alive; the message counts each."""
    @property
    def ptr(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def context(self) -> Context: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def closed(self) -> bool: ...
    @property
    def symmetric(self) -> bool: ...
    def peer_address(self, pe: int) -> int: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def view(self, dtype: str, shape: Union[int, Sequence[int], None] = None) -> Buffer: ...
    def upload(self, src: Any, offset: int = 0, stream: _StreamLike = None) -> None: ...
    def download(self, dst: Any = None, offset: int = 0, stream: _StreamLike = None) -> Any:
        """dst None: a new bytearray of size - offset bytes. Else len(dst) bytes into dst (a
        writable C-contiguous buffer), returning dst; RangeError when they do not fit."""
    def copy_from(self, src: Buffer, stream: _StreamLike = None) -> None: ...
    def fill(self, value: int, stream: _StreamLike = None) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Buffer: ...
    def __exit__(self, *exc: Any) -> bool: ...

class DeviceInfo(NamedTuple):
    device: int
    name: str
    sm: int
    multiprocessors: int
    total_memory: int
    max_threads_per_block: int
    max_shared_per_block_optin: int

def device_count() -> int: ...
def device_info(device: int = 0) -> DeviceInfo: ...

# One dict per kernel, as `gclaunch inspect --json` lists them: name, param_bytes, params
# (index, offset, size, align and kind where the image tells), and waits: True / False / None
# (unknown) -- whether the kernel executes griddepcontrol.wait, which a PDL launch needs.
def inspect(path_or_bytes: Union[_Path, _Buffer], arch: Union[int, str, None] = None) -> list[dict[str, Any]]: ...
def status_name(code: int) -> str: ...

# NVSHMEM (docs/multigpu.md, "From Python"): one PE per process.
class _NvshmemInfo(TypedDict):
    found: bool
    path: str
    version: str | None
    error: str | None

def nvshmem_info() -> _NvshmemInfo: ...
def nvshmem_open(path: str | PathLike[str]) -> None: ...
def pe_unique_id() -> bytes: ...
def pe_id() -> int: ...
def pe_count() -> int: ...
def pe_context() -> Context | None: ...
def pe_barrier(stream: _StreamLike = None) -> None: ...
def pe_stop() -> None: ...

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
GCL_ERROR_NO_NVSHMEM: int
GCL_ERROR_NVSHMEM: int
GCL_ERROR_NVSHMEM_VERSION: int
GCL_ERROR_NOT_ATTACHED: int
GCL_ERROR_PEER_UNREACHABLE: int
