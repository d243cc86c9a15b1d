//===- build_fuzzer.cpp - dynoc build up to the generated C++ -------------===//
//
// What `dynoc build FILE --emit=cpp -O2` runs, without the compiler: parse,
// verify, the build's passes (shape inference, widening, decomposition,
// canonicalization, folding, precompute, fusion), the memory plan and the
// CPU target's printer.
//
//===----------------------------------------------------------------------===//
#include "GraphFuzzContext.h"

#include "dynoc/Codegen/ModuleEmitter.h"
#include "dynoc/CodegenCPU/CpuCodegen.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dynoc::fuzz::withParsedGraph(
      data, size, [](mlir::ModuleOp module, unsigned &errors) {
        const dynoc::codegen::Target &target = dynoc::cpuTarget();
        if (mlir::failed(dynoc::codegen::runBuildPasses(module, /*optLevel=*/2,
                                                        target))) {
          if (errors == 0)
            __builtin_trap(); // a failed pass must say why
          return;
        }
        dynoc::codegen::ModuleSource source;
        if (mlir::failed(dynoc::codegen::emitModule(
                module, target, "model.weights.safetensors",
                /*embedWeights=*/false, nlohmann::json::object(), source))) {
          if (errors == 0)
            __builtin_trap(); // an unsupported op must be named
          return;
        }
        dynoc::codegen::finishModuleSource(target, source);
      });
  return 0;
}
