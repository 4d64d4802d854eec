
import ctypes as C, gc, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcltest as T
import fuzz_api as F
g, FAKE, Stream = F.g, F.FAKE, F.Stream
W = F.World()

# fuzz_api seed 83977636 case 198 (generic TensorMapTable): crash: signal 6
print(F.run_case('g.TensorMapTable(count=W.base)', None, W))
del W
gc.collect()
