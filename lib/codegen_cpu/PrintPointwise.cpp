//===- PrintPointwise.cpp - a pointwise kernel as a CPU loop nest ---------===//
//
// The CPU printer of codegen::PointwiseLoop: rows of the output's last dim in
// parallel (OpenMP), each row an `omp simd` loop. The loop is written out
// rather than called through a template so that the inner loop reads each
// operand as it is (dense, or one value per row) and vectorizes.
//
//===----------------------------------------------------------------------===//
#include "FuncEmitter.h"

namespace dynoc {
namespace cpu {

std::string printCpuPointwise(const codegen::PointwiseLoop &k) {
  const std::string &ct = k.computeType;
  std::string stmts;
  for (auto [i, e] : llvm::enumerate(k.temps))
    stmts += llvm::formatv("        const {0} t{1} = {2};\n", ct, i, e).str();
  const size_t rank = k.shape.size();
  std::string loop = "  {\n";
  for (auto [i, in] : llvm::enumerate(k.inputs))
    loop += llvm::formatv("    const int64_t st{0}[] = {1};\n", i,
                          braceList(in.strides))
                .str();
  loop += "    const int64_t shape[] = " + braceList(k.shape) + ";\n";
  if (rank == 0) {
    std::string body;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      body += llvm::formatv("      const {0} x{1} = {0}({2}[0]);\n", ct, i,
                            k.inputs[i].buffer)
                  .str();
    return loop + "    {\n" + body + stmts + "      " + k.output +
           "[0] = " + k.result + ";\n    }\n  }\n";
  }
  std::string n = product(k.shape);
  loop += llvm::formatv("    const int64_t inner = {0};\n"
                        "    const int64_t outer = inner ? {1} / inner : 0;\n"
                        "#pragma omp parallel for if ({1} > "
                        "dynoc_k::kParallelGrain)\n"
                        "    for (int64_t row = 0; row < outer; ++row) {{\n",
                        k.shape.back(), n)
              .str();
  for (size_t i = 0; i < k.inputs.size(); ++i)
    loop += llvm::formatv("      int64_t off{0} = 0;\n", i).str();
  loop += "      for (int64_t d = " + std::to_string(rank) +
          " - 2, rem = row; d >= 0; --d) {\n"
          "        int64_t idx = rem % shape[d];\n        rem /= shape[d];\n";
  for (size_t i = 0; i < k.inputs.size(); ++i)
    loop += llvm::formatv("        off{0} += idx * st{0}[d];\n", i).str();
  loop += "      }\n";
  std::string reads;
  for (auto [i, in] : llvm::enumerate(k.inputs)) {
    loop +=
        llvm::formatv("      const auto *p{0} = {1} + off{0};\n", i, in.buffer)
            .str();
    // The inner stride: 0 reads one value per row, 1 a dense row.
    const std::string &last = in.strides.back();
    std::string at = last == "0" ? "0"
                     : last == "1"
                         ? "i"
                         : llvm::formatv("i * st{0}[{1}]", i, rank - 1).str();
    reads +=
        llvm::formatv("        const {0} x{1} = {0}(p{1}[{2}]);\n", ct, i, at)
            .str();
  }
  loop += "      " + ct + " *dst = " + k.output +
          " + row * inner;\n#pragma omp simd\n"
          "      for (int64_t i = 0; i < inner; ++i) {\n" +
          reads + stmts + "        dst[i] = " + k.result +
          ";\n      }\n    }\n  }\n";
  return loop;
}

} // namespace cpu
} // namespace dynoc
