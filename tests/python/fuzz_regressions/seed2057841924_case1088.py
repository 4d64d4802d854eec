
import ctypes as C, gc, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcltest as T
FAKE = T.fake_driver()
import gclaunch as g
import fuzz_api as F
W = F.World()

# fuzz_api seed 2057841924 case 1088 (generic Event.record): crash: exit 1
print(F.run_case('F.instance(W, g.Event).record(2**31-1)', None, W))
del W
gc.collect()
