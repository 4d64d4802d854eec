/* CUDA graphs: replace the parameters of a captured kernel node from a gcl_args, so that a
 * megakernel can be re-run with new descriptors without capturing again. gcl_launch itself
 * needs nothing special to be captured: it makes no synchronous or allocating driver call. */
#include "cuda_internal.h"

static gcl_status check_node(const gcl_kernel *k, CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *p) {
  if (gcl__cu.cuGraphNodeGetType) {
    CUgraphNodeType type;
    CUresult rc = gcl__cu.cuGraphNodeGetType(node, &type);
    if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuGraphNodeGetType");
    if (type != CU_GRAPH_NODE_TYPE_KERNEL)
      return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_graph_kernel_node_set_args: node: expected a kernel node, got node type %d", (int)type);
  }
  CUresult rc = gcl__cu.cuGraphKernelNodeGetParams(node, p);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuGraphKernelNodeGetParams");
  if (p->func != k->fn && !(p->func == NULL && p->kern == k->kern))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_graph_kernel_node_set_args: node runs another kernel than '%s'", k->name);
  return GCL_OK;
}

gcl_status gcl_graph_kernel_node_set_args(void *graph_exec, void *node, gcl_kernel *kernel,
                                          const gcl_args *args) {
  if (!graph_exec) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_graph_kernel_node_set_args: graph_exec is NULL");
  if (!node) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_graph_kernel_node_set_args: node is NULL");
  if (!kernel) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_graph_kernel_node_set_args: kernel is NULL");
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_graph_kernel_node_set_args: args is NULL");
  CUDA_KERNEL_NODE_PARAMS p;
  gcl_status s;
  if ((s = gcl__launch_check_args(kernel, args)) || (s = gcl__context_bind(kernel->ctx)) ||
      (s = check_node(kernel, (CUgraphNode)node, &p)))
    return s;
  size_t size = kernel->param_bytes;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)gcl__args_data(args),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  bool none = kernel->param_count == 0;
  p.kernelParams = none || kernel->use_extra ? NULL : gcl__args_param_pointers(args);
  p.extra = none || !kernel->use_extra ? NULL : extra;
  CUresult rc = gcl__cu.cuGraphExecKernelNodeSetParams((CUgraphExec)graph_exec, (CUgraphNode)node, &p);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuGraphExecKernelNodeSetParams(kernel '%s')", kernel->name);
  return GCL_OK;
}
