//===- replay_main.cpp - run a fuzz target over files, without libFuzzer --===//
//
// The fuzz targets define LLVMFuzzerTestOneInput only. Linked with
// -fsanitize=fuzzer (tools/fuzz.sh) libFuzzer drives them; linked with this
// main (the Bazel tests, under the normal build and --config=asan) they run
// once over each file of the directories or files named on the command line:
// the committed seed corpus and every regression input.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool runFile(const fs::path &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)),
                          std::istreambuf_iterator<char>());
  // A copy of exactly `size` bytes, so a read past the end is an ASan error.
  std::vector<uint8_t> input(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(input.data(), input.size());
  return true;
}

int main(int argc, char **argv) {
  size_t runs = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (auto &e : fs::recursive_directory_iterator(arg))
        if (e.is_regular_file())
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (auto &p : files)
        ok &= runFile(p), ++runs;
    } else {
      ok &= runFile(arg), ++runs;
    }
  }
  std::printf("replay: %zu input(s) ran without a crash\n", runs);
  return ok && runs > 0 ? 0 : 1;
}
