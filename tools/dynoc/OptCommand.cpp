//===- OptCommand.cpp - dynoc opt: mlir-opt for graph files ---------------===//
#include "Commands.h"

#include "dynoc/IR/GraphIO.h"
#include "dynoc/Passes/Passes.h"
#include "dynoc/Passes/Pipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace dynoc::cli {
namespace {
struct OptOptions {
  std::string input, output = "-", passes;
  bool verifyDiagnostics = false, generic = false, splitInputFile = false;
};

/// Parses, verifies, runs the passes on and prints one buffer (the file, or
/// one `// -----` chunk of it) in a context of its own.
mlir::LogicalResult processBuffer(const OptOptions &o,
                                  std::unique_ptr<llvm::MemoryBuffer> buffer,
                                  llvm::raw_ostream &os) {
  mlir::DialectRegistry registry;
  registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the place; the op's full text would be a second message.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::unique_ptr<mlir::SourceMgrDiagnosticVerifierHandler> verifier;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> printer;
  if (o.verifyDiagnostics)
    verifier = std::make_unique<mlir::SourceMgrDiagnosticVerifierHandler>(
        sourceMgr, &context);
  else
    printer =
        std::make_unique<mlir::SourceMgrDiagnosticHandler>(sourceMgr, &context);
  auto module = parseGraphBuffer(sourceMgr, context);
  mlir::LogicalResult result = mlir::success(bool(module));
  if (module && !o.passes.empty()) {
    // Graph passes run on each func (graph); module passes on the module.
    mlir::PassManager pm(&context);
    if (mlir::failed(mlir::parsePassPipeline("func.func(" + o.passes + ")", pm,
                                             llvm::nulls()))) {
      pm.clear();
      // runOpt checked that one of the two forms parses.
      (void)mlir::parsePassPipeline(o.passes, pm, llvm::nulls());
    }
    result = pm.run(*module);
  }
  // Under --verify-diagnostics the expected errors are the result.
  if (verifier)
    return verifier->verify();
  if (mlir::failed(result))
    return mlir::failure();
  mlir::OpPrintingFlags flags;
  if (o.generic)
    flags.printGenericOpForm();
  module->print(os, flags);
  os << "\n";
  return mlir::success();
}

int runOpt(const OptOptions &o) {
  registerPasses();
  registerGraphPipeline();
  if (!o.passes.empty()) {
    mlir::DialectRegistry registry;
    registerGraphDialects(registry);
    mlir::MLIRContext context(registry);
    mlir::PassManager pm(&context);
    std::string err;
    llvm::raw_string_ostream errs(err);
    if (mlir::failed(mlir::parsePassPipeline("func.func(" + o.passes + ")", pm,
                                             llvm::nulls()))) {
      pm.clear();
      if (mlir::failed(mlir::parsePassPipeline(o.passes, pm, errs)))
        return fail("opt", "bad --pass '" + o.passes + "': " + errs.str());
    }
  }
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(o.input, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return fail("opt", "cannot read '" + o.input + "': " + ec.message());
  auto chunk = [&](std::unique_ptr<llvm::MemoryBuffer> b,
                   llvm::raw_ostream &os) {
    return processBuffer(o, std::move(b), os);
  };
  // The output file is written only once everything succeeded.
  std::string text;
  llvm::raw_string_ostream textStream(text);
  if (mlir::failed(mlir::splitAndProcessBuffer(std::move(*buffer), chunk,
                                               textStream, o.splitInputFile,
                                               /*insertMarkerInOutput=*/true)))
    return 1;
  std::string error;
  auto out = mlir::openOutputFile(o.output, &error);
  if (!out)
    return fail("opt", error);
  out->os() << textStream.str();
  out->keep();
  return 0;
}
} // namespace

void addOptCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "opt",
      "Parse and verify a graph file, run passes, print it (mlir-opt for "
      "the aten dialect).");
  auto o = std::make_shared<OptOptions>();
  cmd->add_option("FILE", o->input, "graph file ('-' for stdin)")->required();
  cmd->add_option("-o,--output", o->output, "where to print (default: stdout)");
  cmd->add_option("--pass", o->passes,
                  "comma-separated pass pipeline, e.g. 'canonicalize,cse'");
  cmd->add_flag("--verify-diagnostics", o->verifyDiagnostics,
                "check the diagnostics against expected-error comments");
  cmd->add_flag("--generic", o->generic, "print ops in the generic form");
  cmd->add_flag("--split-input-file", o->splitInputFile,
                "process each '// -----'-separated chunk of FILE on its own");
  cmd->callback([o, &exitCode] { exitCode = runOpt(*o); });
}

} // namespace dynoc::cli
