//===- GraphIO.cpp - reading graph files ----------------------------------===//
//
// A graph file is checked beyond what MLIR's parser checks, for what would
// otherwise crash a later step: nesting deep enough to exhaust the stack of
// the recursive parser (checked on the text, before parsing), and strings
// that are not UTF-8 (the manifest is JSON, whose writer refuses them).
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/GraphIO.h"
#include "dynoc/IR/AtenDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace {
/// Deeper nesting than any graph has (a rank-8 constant nests 9 deep), far
/// shallower than what exhausts the parser's stack.
constexpr int kMaxNesting = 256;

/// Fails, at the place, if brackets, braces, parentheses or angle brackets
/// nest deeper than kMaxNesting in the text of `buffer` (strings and
/// comments skipped).
LogicalResult checkNesting(const llvm::SourceMgr &sourceMgr, unsigned buffer,
                           MLIRContext &context) {
  llvm::StringRef text = sourceMgr.getMemoryBuffer(buffer)->getBuffer();
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // a string: to its unescaped closing quote
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxNesting) {
        auto [line, col] = sourceMgr.getLineAndColumn(
            llvm::SMLoc::getFromPointer(text.data() + i), buffer);
        StringRef name =
            sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier();
        emitError(FileLineColLoc::get(&context, name, line, col))
            << "nesting deeper than " << kMaxNesting
            << " levels (brackets, braces, parentheses or angle brackets)";
        return failure();
      }
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-'))) {
      depth = std::max(depth - 1, 0);
    }
  }
  return success();
}

/// The first string in `a` (nested in arrays and dictionaries) that is not
/// UTF-8, or null.
StringAttr badString(Attribute a) {
  if (auto s = a.dyn_cast<StringAttr>())
    return llvm::json::isUTF8(s.getValue()) ? StringAttr() : s;
  if (auto arr = a.dyn_cast<ArrayAttr>())
    for (Attribute e : arr)
      if (StringAttr bad = badString(e))
        return bad;
  if (auto dict = a.dyn_cast<DictionaryAttr>())
    for (NamedAttribute n : dict)
      if (StringAttr bad = badString(n.getValue()))
        return bad;
  return {};
}

/// Fails at the first op with an attribute string or location that is not
/// UTF-8.
LogicalResult checkUtf8(ModuleOp module) {
  WalkResult r = module->walk([](Operation *op) {
    for (NamedAttribute n : op->getAttrs())
      if (badString(n.getValue())) {
        op->emitError() << "attribute '" << n.getName().getValue()
                        << "' holds a string that is not valid UTF-8";
        return WalkResult::interrupt();
      }
    bool badLoc = false;
    op->getLoc()->walk([&](Location l) {
      StringRef s;
      if (auto f = l.dyn_cast<FileLineColLoc>())
        s = f.getFilename().getValue();
      else if (auto n = l.dyn_cast<NameLoc>())
        s = n.getName().getValue();
      badLoc = !llvm::json::isUTF8(s);
      return badLoc ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (badLoc) {
      // The location itself cannot be printed: name the op.
      emitError(UnknownLoc::get(op->getContext()))
          << "an '" << op->getName()
          << "' op's location holds a string that is not valid UTF-8";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}
} // namespace

void dynoc::registerGraphDialects(DialectRegistry &registry) {
  registry.insert<dynoc::aten::AtenDialect, dynoc::DynocDialect,
                  func::FuncDialect, arith::ArithDialect>();
}

OwningOpRef<ModuleOp> dynoc::parseGraphBuffer(llvm::SourceMgr &sourceMgr,
                                              MLIRContext &context) {
  if (failed(checkNesting(sourceMgr, sourceMgr.getMainFileID(), context)))
    return nullptr;
  // parseSourceFile verifies the module after parsing.
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (module && failed(checkUtf8(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> dynoc::parseGraphFile(llvm::StringRef path,
                                            MLIRContext &context,
                                            llvm::SourceMgr &sourceMgr) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    emitError(UnknownLoc::get(&context))
        << "cannot read '" << path << "': " << ec.message();
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return parseGraphBuffer(sourceMgr, context);
}
