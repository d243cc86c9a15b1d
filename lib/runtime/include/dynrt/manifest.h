//===- manifest.h - a model's manifest, parsed -----------------*- C++ -*-===//
//
// The manifest is the JSON a model .so embeds (docs/manifest.md): its graphs
// (variants of one entry), their signatures, guards and the weights file.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_MANIFEST_H
#define DYNRT_MANIFEST_H

#include "dynrt/dtype.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dynrt {

inline constexpr int kManifestVersion = 1;
/// The highest tensor rank the runtime handles.
inline constexpr size_t kMaxRank = 8;

struct TensorSpec {
  std::string kind; // inputs: user, parameter, buffer, constant, prepared;
                    // outputs: output
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // -1 where the dim is dynamic
};

struct Guard {
  std::string
      kind; // tensor_match, size, or a capture-time guard the runtime skips
  std::string text; // the guard in the manifest's (Dynamo-style) words
  int64_t input = -1;
  DType dtype = DType::F32;
  std::vector<int64_t> sizes;   // -1 where dynamic
  std::vector<int64_t> strides; // empty: not checked
  // size guards: sum(coefficient * size(input, dim)) + constant OP 0, terms as
  // (input, dim, coefficient) triples
  std::vector<int64_t> terms;
  int64_t constant = 0;
  std::string op;
};

/// An input the graph changes in place: after a run, output `output` holds
/// its new value.
struct Mutation {
  std::string input;
  size_t output = 0;
};

/// A kernel or library call of a graph's run function, as a profile names
/// its span (the manifest's "kernels"; optional).
struct KernelSpec {
  std::string name;     // "addmm", "fused_add_relu"
  std::string category; // "kernel", "fusion", "gemm", "convolution", ...
  std::string args;     // the span's arguments, JSON: ops, loc, graph
};

/// A process group the graph's collectives run over (its torch name) and
/// the number of ranks capture saw in it.
struct ProcessGroup {
  std::string name;
  int64_t size = 1;
};

struct GraphSpec {
  std::string name;
  std::string symbol;          // the run function (model_abi.h)
  std::string shapesSymbol;    // the shape function (model_abi.h)
  int64_t workspaceBytes = -1; // -1: depends on the input shapes
  std::string entry;
  /// The function of a bundled model it is a variant of ("": the model's one
  /// function); see dynrt_context_call.
  std::string function;
  std::string kind;            // "backward", or "" for a forward graph
  std::string outputStructure; // JSON text, see docs/manifest.md
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<Guard> guards;
  std::vector<Mutation> mutations;
  /// The groups of its collectives (the manifest's "process_groups").
  std::vector<ProcessGroup> processGroups;
  /// Indexed as the profiling hooks number them (model_abi.h).
  std::vector<KernelSpec> kernels;
  size_t numUserInputs = 0;
  /// The DLPack device type its tensors live on (the manifest's "device").
  int deviceType = 1; // kDLCPU
  /// The function the runtime runs once at load to compute the graph's
  /// "prepared" inputs from the weights (0 or 1 of them).
  std::vector<GraphSpec> prepare;
};

struct Manifest {
  int version = 0;
  std::string device = "cpu";   // "cpu" or "cuda": where the graphs run
  std::string weights;          // file name relative to the .so; empty if none
  /// The sidecar's digest at build time (dynrt/digest.h); empty: not recorded
  /// (models built before it was), not checked.
  std::string weightsDigest;
  bool weightsEmbedded = false; // the .so exports dynoc_model_weights
  std::vector<GraphSpec> graphs;
};

/// Parses and validates manifest JSON. On failure returns false and sets
/// `error`.
bool parseManifest(std::string_view json, Manifest &manifest,
                   std::string &error);

} // namespace dynrt

#endif // DYNRT_MANIFEST_H
