
import ctypes as C, gc, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcltest as T
import fuzz_api as F
g, FAKE, Stream = F.g, F.FAKE, F.Stream
W = F.World()

# fuzz_api seed 5656 case 3430 (seq buffers): step 3 is labelled 'err' but gave TypeError: v0 = b0.view(5, (2, 2)) (TypeError('view: dtype takes a str, got int'))
print(F.run_case('#ok\nb0 = g.Context(0).alloc(1)\n#--step--\n#ok\nb0.close()\n#--step--\n#err\n_x = bytes((i * 7 + 3) & 255 for i in range(1)); b0.upload(_x); assert b0.download()[:1] == _x\n#--step--\n#err\nv0 = b0.view(5, (2, 2))\n#--step--\n#ok\ns0 = W.ctx.create_stream(0)\n#--step--\n#ok\ns1 = W.ctx.create_stream(-1)\n#--step--\n#any\nb0.fill([g.TensorMap(W.tensor(off=-16, shape=(8, 16), strides=(16, 1)), None, swizzle=64, interleave=0, im2col=(8, 2**32), lower=(3, 0, 0)) for _ in range(16)], 90)\n#--step--\n#ok\ns2 = g.Stream.from_handle(Stream((0, W.s.handle)), W.ctx)\n#--step--\n#any\ns3 = g.Stream(W.ctx, 2**40)\n#--step--\n#ok\ns3 = W.ctx.create_stream()\n#--step--\n#err\nW.k.launch((2, 2), 64, [1, 2, 1.0, 2.0, b0, b0, 8, 16], stream=s2)\n#--step--\n#ok\ns4 = W.ctx.create_stream(0)\n#--step--\n#any\ndel v0\n#--step--\n#err\nW.k.launch((2, 2), 64, [1, 2, 1.0, 2.0, b0, b0, 8, 16], stream=s1)\n#--step--\n#ok\ns5 = g.Context(0).create_stream()', None, W))
del W
gc.collect()
