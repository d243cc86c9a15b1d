//===- OptCommand.cpp - dynoc opt: mlir-opt for graph files ---------------===//
#include "Commands.h"

#include "dynoc/IR/GraphIO.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace dynoc::cli {
namespace {
struct OptOptions {
  std::string input, output = "-", passes;
  bool verifyDiagnostics = false, generic = false;
};

int runOpt(const OptOptions &o) {
  registerPasses();
  mlir::DialectRegistry registry;
  registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the place; the op's full text would be a second message.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<mlir::SourceMgrDiagnosticVerifierHandler> verifier;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> printer;
  auto module = [&] {
    if (!o.verifyDiagnostics) {
      printer = std::make_unique<mlir::SourceMgrDiagnosticHandler>(sourceMgr,
                                                                   &context);
      return parseGraphFile(o.input, context, sourceMgr);
    }
    // The verifier handler needs the buffer registered before it is created.
    auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(o.input);
    if (!buffer)
      return mlir::OwningOpRef<mlir::ModuleOp>();
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    verifier = std::make_unique<mlir::SourceMgrDiagnosticVerifierHandler>(
        sourceMgr, &context);
    return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }();
  if (o.verifyDiagnostics) {
    if (!module && !verifier)
      return fail("opt", "cannot read '" + o.input + "'");
    return mlir::failed(verifier->verify()) ? 1 : 0;
  }
  if (!module)
    return 1;
  if (!o.passes.empty()) {
    // Graph passes run on each func (graph); module passes on the module.
    mlir::PassManager pm(&context);
    std::string err;
    llvm::raw_string_ostream errs(err);
    if (mlir::failed(mlir::parsePassPipeline("func.func(" + o.passes + ")", pm,
                                             llvm::nulls()))) {
      pm.clear();
      if (mlir::failed(mlir::parsePassPipeline(o.passes, pm, errs)))
        return fail("opt", "bad --pass '" + o.passes + "': " + errs.str());
    }
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  std::string error;
  auto out = mlir::openOutputFile(o.output, &error);
  if (!out)
    return fail("opt", error);
  mlir::OpPrintingFlags flags;
  if (o.generic)
    flags.printGenericOpForm();
  module->print(out->os(), flags);
  out->os() << "\n";
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
  cmd->callback([o, &exitCode] { exitCode = runOpt(*o); });
}

} // namespace dynoc::cli
