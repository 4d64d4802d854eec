/* gclaunch/graph.h -- CUDA graphs: captured from a stream, launched, their kernels' arguments
 * and tensor-map tables refreshed without a new capture. Included by gclaunch/runtime.h; the
 * conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_GRAPH_H
#define GCLAUNCH_GRAPH_H

#include "gclaunch/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * CUDA graphs
 *
 * Capture launches on a gcl_stream into a graph, replace the arguments of one kernel node, replay:
 *   gcl_graph_capture_begin(s);
 *   gcl_launch(k, &cfg, args0); gcl_launch(k2, &cfg2, args1); ...   // cfg.stream = handle of s
 *   gcl_graph_capture_end(s, &g);               // instantiated; kernel nodes 0, 1, ... in order
 *   gcl_graph_set_args(g, 1, k2, new_args);     // node 1 now runs with new_args
 *   gcl_graph_launch(g, s);
 * Async copies and fills captured on the stream become graph nodes too (not counted as kernel
 * nodes). During a capture the stream must not be synchronized. A graph borrows its context; it
 * must not be used from two threads at once.
 *
 * Re-pointed tensor maps in a replay (docs/graphs.md): a kernel node holds a copy of its
 * parameters, a table's device memory what was last copied there. After re-pointing maps through
 * gclaunch, hand them to the graph, then launch:
 *   maps in the parameters (top level, struct fields):  gcl_args_repoint_tensormaps(args, ...);
 *                                                       gcl_graph_set_args(g, node, k, args);
 *   maps in a gcl_tensormap_table t (captured with gcl_graph_capture_table(s, t)):
 *                                                       gcl_tensormap_table_repoint(t, ...);
 *                                                       gcl_graph_set_table(g, t);
 *   gcl_graph_launch(g, s);     // sees the maps as they were at those calls
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_graph gcl_graph;
typedef struct gcl_tensormap_table gcl_tensormap_table; /* below: tables in device memory */

/* Starts capturing s (thread-local mode: only this thread's unsafe calls are refused).
 * GCL_ERROR_INVALID_ARGUMENT if s is already capturing. */
GCL_API gcl_status gcl_graph_capture_begin(gcl_stream *s);
/* Ends the capture and instantiates the graph. The capture has ended when this returns, also on
 * failure. GCL_ERROR_INVALID_ARGUMENT naming "s" when no capture was begun or the capture
 * launched no kernel (no graph is made); the driver's error when the capture was invalidated. */
GCL_API gcl_status gcl_graph_capture_end(gcl_stream *s, gcl_graph **out);
/* Number of kernel nodes (>= 1). Reads. */
GCL_API gcl_status gcl_graph_kernel_count(const gcl_graph *g, size_t *count);
/* Replaces the arguments of kernel node kernel_node (0 = the first kernel launched in the
 * capture) with args, which must be complete and of k's layout; k must be the kernel the node
 * was captured from (GCL_ERROR_INVALID_ARGUMENT "kernel_node 2: it runs another kernel than
 * 'k'"), of the graph's device. Any parameter size up to GCL_PARAM_LIMIT, grid-constant
 * aggregates included. The driver copies the values: args may change or go away afterwards.
 * Grid, block and attributes of the node are kept. Takes effect for later gcl_graph_launch
 * calls. Nothing changes on failure (index out of range, args of another layout, unset args). */
GCL_API gcl_status gcl_graph_set_args(gcl_graph *g, size_t kernel_node, gcl_kernel *k,
                                      const gcl_args *args);
/* During a capture on s: every replay of the graph will first copy all of t's maps to t's device
 * memory (gcl_tensormap_table_address) from a pinned copy the graph owns, before any work
 * captured on s, and the graph's kernels read the table's maps as copied by that replay. The
 * copy holds t's host maps as they are when the capture ends; gcl_graph_set_table takes a new
 * one. t (a table of s's context) must outlive the graph; it is not uploaded by this call (no
 * gcl_tensormap_table_upload is needed for the graph; do not call it on the capturing stream). GCL_ERROR_INVALID_ARGUMENT naming "s"
 * when s is not capturing, "t" when t is NULL or already captured in this capture. */
GCL_API gcl_status gcl_graph_capture_table(gcl_stream *s, gcl_tensormap_table *t);
/* Takes t's host maps as they are now (after gcl_tensormap_table_set / _repoint) into the copy
 * that later replays of g upload: like gcl_graph_set_args for the parameters. Replays launched
 * before keep the maps they were launched with (the graph keeps 3 pinned copies a table; when
 * the host runs more than two replays ahead of the device, this call waits for the oldest).
 * GCL_ERROR_INVALID_ARGUMENT naming "t" for a table not captured into g; nothing changes on
 * failure. */
GCL_API gcl_status gcl_graph_set_table(gcl_graph *g, gcl_tensormap_table *t);
/* Replays the graph on s (a stream of the graph's context; NULL: its default stream). */
GCL_API gcl_status gcl_graph_launch(gcl_graph *g, gcl_stream *s);
/* Destroys the graph (a replay in flight still completes; the table copies are freed after the
 * replays that read them). NULL is fine. */
GCL_API void gcl_graph_destroy(gcl_graph *g);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_GRAPH_H */
