
import ctypes as C, gc, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcltest as T
FAKE = T.fake_driver()
import gclaunch as g
import fuzz_api as F
W = F.World()

# fuzz_api seed 2057841924 case 2135 (generic Stream.from_handle): crash: signal 6
print(F.run_case('F.instance(W, g.Stream).from_handle(2**31)', None, W))
del W
gc.collect()
