//===- model_abi.h - the C ABI a dynoc model .so exports --------*- C -*-===//
//
// Written by the code generator, read by libdynrt. Bump DYNOC_MODEL_ABI_VERSION
// on any change.
//
//   const char *dynoc_model_manifest(void);   // JSON, docs/manifest.md
//   int dynoc_model_abi_version(void);
//   const void *dynoc_model_weights(unsigned long *size);
//       only with embedded weights: the safetensors bytes linked into the .so.
//
// and per graph (names from the manifest's `shapes_symbol` and `symbol`):
//
//   const char *<shapes>(const int64_t *const *in_shapes,
//                        int64_t *const *out_shapes, int64_t *workspace_bytes);
//       Resolves the graph's dynamic dims from the user inputs' shapes
//       (in_shapes[i] points at input i's dims), writes each output's dims and
//       the workspace its intermediates need. Returns NULL, or a static
//       message naming the op and location whose shapes do not fit.
//   int <run>(const int64_t *const *in_shapes, void *const *args,
//             void *const *outputs, void *workspace);
//       args: one data pointer per graph argument (user inputs, then weights,
//       in the manifest's order); outputs: contiguous buffers of the shapes
//       <shapes> gave; workspace: at least workspace_bytes, 64-byte aligned.
//       Returns 0, or nonzero if a kernel failed. Reentrant: calls with
//       different workspaces may run at the same time.
//
// A graph may have a prepare function (the manifest's `prepare` object, same
// two signatures, no user inputs): the runtime runs it once at load, on the
// weights, and passes its outputs as the graph's arguments of kind "prepared".
// Version 3 added it.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_MODEL_ABI_H
#define DYNRT_MODEL_ABI_H

#include <stdint.h>

#define DYNOC_MODEL_ABI_VERSION 3
#define DYNOC_MODEL_MANIFEST_SYMBOL "dynoc_model_manifest"
#define DYNOC_MODEL_ABI_VERSION_SYMBOL "dynoc_model_abi_version"
#define DYNOC_MODEL_WEIGHTS_SYMBOL "dynoc_model_weights"

typedef const char *(*dynoc_model_manifest_fn)(void);
typedef int (*dynoc_model_abi_version_fn)(void);
typedef const void *(*dynoc_model_weights_fn)(unsigned long *size);
typedef const char *(*dynoc_graph_shapes_fn)(const int64_t *const *in_shapes,
                                             int64_t *const *out_shapes,
                                             int64_t *workspace_bytes);
typedef int (*dynoc_graph_run_fn)(const int64_t *const *in_shapes,
                                  void *const *args, void *const *outputs,
                                  void *workspace);

#endif // DYNRT_MODEL_ABI_H
