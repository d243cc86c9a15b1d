//===- model_abi.h - the C ABI a dynoc model .so exports --------*- C -*-===//
//
// Written by the code generator, read by libdynrt. Bump kDynocModelAbiVersion
// on any change.
//
//   const char *dynoc_model_manifest(void);   // JSON, docs/manifest.md
//   int dynoc_model_abi_version(void);
//   int <graph symbol>(void *const *args, void *const *outputs);
//       args: one data pointer per graph argument (user inputs, then weights,
//       in the manifest's order); outputs: caller-allocated, contiguous buffers
//       of the manifest's output shapes. Returns 0, or nonzero if a kernel
//       failed.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_MODEL_ABI_H
#define DYNRT_MODEL_ABI_H

#define DYNOC_MODEL_ABI_VERSION 1
#define DYNOC_MODEL_MANIFEST_SYMBOL "dynoc_model_manifest"
#define DYNOC_MODEL_ABI_VERSION_SYMBOL "dynoc_model_abi_version"

typedef const char *(*dynoc_model_manifest_fn)(void);
typedef int (*dynoc_model_abi_version_fn)(void);
typedef int (*dynoc_graph_fn)(void *const *args, void *const *outputs);

#endif // DYNRT_MODEL_ABI_H
