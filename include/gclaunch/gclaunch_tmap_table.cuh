// <gclaunch/gclaunch_tmap_table.cuh>: the name this header had up to gclaunch 0.3. It is now
// <gclaunch/tmap_table.cuh> (the tensor-map files are named tmap_*); this name stays, forwarding,
// for kernels written against 0.3.
#include <gclaunch/tmap_table.cuh>
