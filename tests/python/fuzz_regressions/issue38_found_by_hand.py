# The crashes and contract breaks issue 38 reported (a random-input run and by hand), kept as a
# regression that tests/python/fuzz_api.py replays before fuzzing: each case must keep the
# contract (a value, a gclaunch.Error subclass, or TypeError; RangeError for ints out of range).
import ctypes as C, gc, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcltest as T
FAKE = T.fake_driver()
import gclaunch as g
import fuzz_api as F
W = F.World()

CASES = [
    ("W.k.launch(1, 32, W.full, stream=-1)", g.RangeError),             # exit 139 once
    ("W.k.launch(1, 32, W.full, stream=Stream((0, -1)))", g.RangeError),
    ("W.k.launch(1, 32, W.full, stream=12345)", g.Error),
    ("W.k.launch(1, 32, W.full, stream=-5)", g.RangeError),
    ("g.Layout('u32 a', 90).field(-2**63)", g.RangeError),                # UBSan abort once
    ("W.full[-9] = 1", g.RangeError),
    ("W.a[-2**63] = 1", g.RangeError),
    ("g.Layout('\\xe9', 90)", g.Error),                                  # UnicodeDecodeError once
    ("g.Layout('u8 x', 90).field('a' * 199 + '\\xe9')", g.Error),
    ("g.inspect('/dev/null\\x00')", g.Error),                             # ValueError once
    ("g.Layout('\\udcff', 90)", g.Error),                                # UnicodeEncodeError once
    ("g.Layout('u32 a', 2**40)", g.RangeError),                          # OverflowError once
    ("g.Context(2**40)", g.RangeError),
    ("g.inspect(b'', arch=2**40)", g.RangeError),
    ("g.status_name(2**40)", g.RangeError),
    ("g.TensorMap(W.tensor(), -1)", g.RangeError),
    ("W.k.launch(1, 32, W.full, shared=-1)", g.RangeError),
    ("W.a['g.scale'] = 2**2000", g.RangeError),
    ("W.a['g.scale'] = 1e39", g.RangeError),                             # became inf once
    ("W.a.refresh('flag', [])", g.Error),                                # did nothing once
    ("g.inspect(b'.version 8.0\\n.target sm_90\\n.visible .entry k\\xc3\\xa9(.param .u64 p){ret;}')", g.Error),
]
for snippet, expected in CASES:
    ns = {"W": W, "g": g, "Stream": F.Stream}
    try:
        exec(snippet, ns)
        raise SystemExit(f"{snippet}: no error, expected {expected.__name__}")
    except expected as e:
        str(e).encode("utf-8")
    print(F.run_case(snippet, None, W), snippet)
del W
gc.collect()
