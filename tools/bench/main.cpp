//===- main.cpp - dynrt-bench: dynoc bench for machines without dynoc -----===//
#include "Bench.h"

int main(int argc, char **argv) {
  CLI::App app{"dynrt-bench: time a model .so built by 'dynoc build' on "
               "random inputs shaped from its manifest (the same as 'dynoc "
               "bench', linking libdynrt only).",
               "dynrt-bench"};
  dynoc::bench::Options options;
  dynoc::bench::addOptions(app, options);
  CLI11_PARSE(app, argc, argv);
  return dynoc::bench::run(options, "dynrt-bench");
}
