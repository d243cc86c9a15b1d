//===- RuntimeTest.cpp - libdynrt's handling of bad input -----------------===//
#include "dynrt/cpu_features.h"
#include "dynrt/digest.h"
#include "dynrt/dynrt.hpp"
#include "dynrt/manifest.h"
#include "dynrt/npy.h"
#include "dynrt/safetensors.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace {
std::string tempPath(const std::string &name) {
  const char *dir = getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string loadError(const std::string &path) {
  dynrt_model_t *model = nullptr;
  dynrt_status_t *s = dynrt_model_load(path.c_str(), &model);
  REQUIRE(s != nullptr);
  REQUIRE(model == nullptr);
  std::string msg = dynrt_status_message(s);
  dynrt_status_free(s);
  return msg;
}
} // namespace

TEST_CASE("loading a missing model names the file") {
  CHECK(loadError("/nonexistent/model.so") ==
        "model '/nonexistent/model.so' does not exist");
}

TEST_CASE("a file that is not a shared object is a clear error") {
  std::string path = tempPath("garbage.so");
  std::ofstream(path) << "this is not an ELF file";
  CHECK_THAT(loadError(path), Catch::Equals("cannot load model '" + path +
                                            "': not an ELF file"));
}

TEST_CASE("a shared object without a manifest is not a dynoc model") {
  const char *libm = "/lib/x86_64-linux-gnu/libm.so.6";
  CHECK(loadError(libm) == std::string("'") + libm +
                               "' is not a dynoc model (no embedded manifest)");
}

TEST_CASE("safetensors round-trip and corruption") {
  std::string path = tempPath("w.safetensors");
  float data[6] = {1, 2, 3, 4, 5, 6};
  std::map<std::string, dynrt::TensorView> tensors;
  tensors["w"] = {dynrt::DType::F32,
                  {2, 3},
                  reinterpret_cast<uint8_t *>(data),
                  sizeof(data)};
  std::string error;
  REQUIRE(dynrt::writeSafetensors(path, tensors, error));
  auto file = dynrt::SafetensorsFile::open(path, error);
  REQUIRE(file);
  const dynrt::TensorView *w = file->find("w");
  REQUIRE(w);
  CHECK(w->shape == std::vector<int64_t>{2, 3});
  CHECK(reinterpret_cast<const float *>(w->data)[5] == 6.0f);

  // Truncate the data: the tensor now lies outside the file.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 8);
  CHECK_FALSE(dynrt::SafetensorsFile::open(path, error));
  CHECK(error ==
        "weights file '" + path +
            "' is corrupted: tensor 'w' lies outside the file (truncated?)");

  std::ofstream(path, std::ios::binary) << "abc";
  CHECK_FALSE(dynrt::SafetensorsFile::open(path, error));
  CHECK_THAT(error, Catch::Contains("is truncated"));
}

namespace {
/// A safetensors file's bytes: the 8-byte length, `header`, `data`.
std::string safetensorsBytes(const std::string &header, size_t dataBytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = char(uint64_t(header.size()) >> (8 * i));
  return out + header + std::string(dataBytes, '\x01');
}

std::string readError(const std::string &bytes) {
  std::string error;
  auto file = dynrt::SafetensorsFile::fromMemory(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "w",
      error);
  CHECK_FALSE(file);
  return error;
}
} // namespace

TEST_CASE("safetensors files get the reference reader's checks") {
  // fc.bias inside fc.weight's bytes: a write to one would change the other.
  CHECK(
      readError(safetensorsBytes(
          R"({"fc.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
          R"("fc.bias":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
          16)) == "w is corrupted: tensor 'fc.bias' overlaps 'fc.weight'");
  CHECK(readError(safetensorsBytes(
            R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
            12)) == "w is corrupted: tensor 'b' starts at byte 8 of the data, "
                    "leaving a gap after 'a'");
  CHECK(readError(safetensorsBytes(
            R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 12)) ==
        "w is corrupted: its tensors end at byte 4 of 12 data bytes");
  CHECK(readError(safetensorsBytes(R"(   {"a":1})", 0)) ==
        "w is corrupted: the header does not start with '{'");
  CHECK(readError(safetensorsBytes(
            R"({"a":{"dtype":"F32","shape":[4611686018427387904,8],)"
            R"("data_offsets":[0,0]}})",
            0)) == "w is corrupted: tensor 'a' has a malformed shape");
  // A header length past the cap (and the file).
  std::string huge(8, '\0');
  huge[4] = 1; // 2^32 bytes
  CHECK(readError(huge + "{}") ==
        "w is corrupted: header length 4294967296 exceeds the file size");
}

TEST_CASE("manifests are validated") {
  dynrt::Manifest m;
  std::string error;
  CHECK_FALSE(dynrt::parseManifest("{", m, error));
  CHECK(error == "invalid manifest: not a JSON object");
  error.clear();
  CHECK_FALSE(dynrt::parseManifest(
      R"({"format":"dynoc-model","version":9,"graphs":[]})", m, error));
  CHECK(error ==
        "invalid manifest: version 9 is newer than this runtime reads (1)");
  error.clear();
  CHECK_FALSE(dynrt::parseManifest(
      R"({"format":"dynoc-model","version":1,"graphs":[{"name":"g","symbol":"s","shapes_symbol":"t","inputs":[{"kind":"parameter","name":"w","dtype":"float32","shape":[2]},{"kind":"user","name":"x","dtype":"float32","shape":[2]}],"outputs":[],"guards":[]}]})",
      m, error));
  CHECK(error == "invalid manifest: graph 'g': user inputs must come first");
}

TEST_CASE("size guards name an input dim the graph has") {
  auto manifest = [](const std::string &guard) {
    return R"({"format":"dynoc-model","version":1,"graphs":[{"name":"g","symbol":"s","shapes_symbol":"t","inputs":[{"kind":"user","name":"x","dtype":"float32","shape":[-1,4]}],"outputs":[],"guards":[)" +
           guard + "]}]}";
  };
  dynrt::Manifest m;
  std::string error;
  REQUIRE(dynrt::parseManifest(
      manifest(
          R"({"kind":"size","text":"L['x'].size()[0] > 4","terms":[0,0,1],"constant":-4,"op":">"})"),
      m, error));
  CHECK(m.graphs[0].guards[0].terms == std::vector<int64_t>{0, 0, 1});
  CHECK(m.graphs[0].guards[0].constant == -4);
  CHECK_FALSE(dynrt::parseManifest(
      manifest(
          R"({"kind":"size","text":"t","terms":[0,2,1],"constant":0,"op":">"})"),
      m, error));
  CHECK(error == "invalid manifest: graph 'g' guard 0 names a dim of an input "
                 "it does not have");
  error.clear();
  CHECK_FALSE(dynrt::parseManifest(
      manifest(R"({"kind":"size","text":"t","terms":[0,0,1],"op":">"})"), m,
      error));
  CHECK(error ==
        "invalid manifest: graph 'g' guard 0 needs an integer 'constant'");
}

TEST_CASE("a prepare function must give the graph's prepared inputs") {
  auto manifest = [](const std::string &prepareOutputs) {
    return R"({"format":"dynoc-model","version":1,"graphs":[{"name":"g","symbol":"s","shapes_symbol":"t","inputs":[{"kind":"user","name":"x","dtype":"float32","shape":[4]},{"kind":"prepared","name":"g__prepare:0","dtype":"float32","shape":[4]}],"outputs":[],"guards":[],"prepare":{"name":"g__prepare","symbol":"p","shapes_symbol":"q","inputs":[{"kind":"parameter","name":"w","dtype":"float32","shape":[4]}],"outputs":[)" +
           prepareOutputs + R"(],"guards":[]}}]})";
  };
  dynrt::Manifest m;
  std::string error;
  REQUIRE(dynrt::parseManifest(
      manifest(R"({"kind":"output","name":"o","dtype":"float32","shape":[4]})"),
      m, error));
  REQUIRE(m.graphs[0].prepare.size() == 1);
  CHECK(m.graphs[0].prepare[0].symbol == "p");
  CHECK(m.graphs[0].prepare[0].inputs[0].name == "w");
  CHECK_FALSE(dynrt::parseManifest(
      manifest(R"({"kind":"output","name":"o","dtype":"float32","shape":[5]})"),
      m, error));
  CHECK(error == "invalid manifest: graph 'g': prepared input 'g__prepare:0' "
                 "differs from output 0 of its prepare function");
  error.clear();
  CHECK_FALSE(dynrt::parseManifest(manifest(""), m, error));
  CHECK(error == "invalid manifest: graph 'g': its prepare function does not "
                 "match its prepared inputs");
}

TEST_CASE("a mutation names an input and an output of its dtype and shape") {
  auto manifest = [](const std::string &mutations) {
    return R"({"format":"dynoc-model","version":1,"graphs":[{"name":"g","symbol":"s","shapes_symbol":"t","inputs":[{"kind":"user","name":"x","dtype":"float32","shape":[-1]},{"kind":"buffer","name":"avg","dtype":"float32","shape":[4]}],"outputs":[{"kind":"output","name":"o","dtype":"float32","shape":[4]},{"kind":"output","name":"p","dtype":"float32","shape":[5]}],"guards":[],"mutations":)" +
           mutations + "}]}";
  };
  dynrt::Manifest m;
  std::string error;
  REQUIRE(dynrt::parseManifest(manifest(R"([{"input":"avg","output":0}])"), m,
                               error));
  REQUIRE(m.graphs[0].mutations.size() == 1);
  CHECK(m.graphs[0].mutations[0].input == "avg");
  CHECK(m.graphs[0].mutations[0].output == 0);
  CHECK_FALSE(dynrt::parseManifest(manifest(R"([{"input":"avg","output":1}])"),
                                   m, error));
  CHECK(error == "invalid manifest: graph 'g' mutation 0: output 1 does not "
                 "have the dtype and shape of 'avg'");
  error.clear();
  CHECK_FALSE(dynrt::parseManifest(manifest(R"([{"input":"mean","output":0}])"),
                                   m, error));
  CHECK(error == "invalid manifest: graph 'g' mutation 0 names 'mean', which "
                 "is not an input of the graph");
  error.clear();
  CHECK_FALSE(dynrt::parseManifest(manifest(R"([{"input":"avg","output":2}])"),
                                   m, error));
  CHECK(
      error ==
      "invalid manifest: graph 'g' mutation 0 needs an 'output' index below 2");
}

TEST_CASE("the C API rejects null arguments with a status, not a crash") {
  dynrt_status_t *s = dynrt_model_load(nullptr, nullptr);
  REQUIRE(s);
  CHECK(dynrt_status_code(s) == DYNRT_INVALID_ARGUMENT);
  dynrt_status_free(s);
  s = dynrt_model_run(nullptr, nullptr, 0, nullptr, 0);
  REQUIRE(s);
  CHECK(std::string(dynrt_status_message(s)) ==
        "dynrt_model_run: null argument");
  dynrt_status_free(s);
}

TEST_CASE("the weights digest is XXH64, as the reference implementation") {
  // Values from the xxhash reference implementation (python-xxhash 4.1).
  CHECK(dynrt::weightsDigest("", 0) == "xxh64:ef46db3751d8e999");
  CHECK(dynrt::weightsDigest("a", 1) == "xxh64:d24ec4f1a98c6e5b");
  CHECK(dynrt::weightsDigest("abc", 3) == "xxh64:44bc2cf5ad770999");
  const char *stripes = "0123456789abcdef0123456789abcdef0";
  CHECK(dynrt::weightsDigest(stripes, 33) == "xxh64:e87684f08d6d0816");
  std::string bytes;
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 256; ++i)
      bytes.push_back(char(i));
  CHECK(dynrt::weightsDigest(bytes.data(), bytes.size()) ==
        "xxh64:8e03c838c596036f");
  dynrt::Manifest m;
  std::string error;
  CHECK_FALSE(dynrt::parseManifest(
      R"({"format":"dynoc-model","version":1,"weights_digest":7,"graphs":[]})",
      m, error));
  CHECK(error == "invalid manifest: 'weights_digest' is not a string");
}

namespace {
std::string npyBytes(const std::string &header, size_t dataBytes) {
  std::string s("\x93NUMPY\x01\x00", 8);
  s.push_back(char(header.size() & 0xff));
  s.push_back(char(header.size() >> 8));
  return s + header + std::string(dataBytes, '\0');
}
std::string npyError(const std::string &bytes) {
  dynrt::NpyArray a;
  std::string error;
  CHECK_FALSE(dynrt::parseNpy(reinterpret_cast<const uint8_t *>(bytes.data()),
                              bytes.size(), "x.npy", a, error));
  return error;
}
} // namespace

TEST_CASE(".npy files: sizes are checked before anything is allocated") {
  dynrt::NpyArray a;
  std::string error;
  std::string good = npyBytes(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
  REQUIRE(dynrt::parseNpy(reinterpret_cast<const uint8_t *>(good.data()),
                          good.size(), "x.npy", a, error));
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(a.data.size() == 24);
  // A header length past the file (was: a 4 GB allocation for format 2).
  CHECK(npyError(good.substr(0, 20)) ==
        "'x.npy' is truncated: its header says 59 bytes");
  // Shapes whose byte size overflows (was: a wrapped size, or bad_alloc).
  CHECK(npyError(npyBytes("{'descr': '<f8', 'shape': (4294967296, "
                          "4294967296), }",
                          0)) ==
        "'x.npy' has a shape whose byte size overflows");
  CHECK(npyError(npyBytes("{'descr': '<f4', 'shape': "
                          "(99999999999999999999,), }",
                          0)) == "'x.npy' has a dim too large");
  CHECK(npyError(npyBytes("{'descr': '<f4', 'shape': (3,), }", 8)) ==
        "'x.npy' is truncated: its data is shorter than its shape (8 of 12 "
        "bytes)");
  CHECK(npyError(npyBytes("{'descr': '>f4', 'shape': (3,), }", 12)) ==
        "'x.npy' has unsupported dtype '>f4'");
  CHECK(npyError("\x93NUMPY") == "'x.npy' is not a .npy file");
}

#if defined(__x86_64__) && !defined(__clang__)
// libdynrt reads CPUID itself (clang's __builtin_cpu_supports lacks some of
// the names); GCC's answers on the same CPU are the reference.
TEST_CASE(
    "CPU features read from CPUID agree with GCC's __builtin_cpu_supports") {
  REQUIRE(std::getenv("DYNRT_CPU_FEATURES") == nullptr);
  CHECK(dynrt::knownCpuFeatures().size() == 28);
#define SAME(name)                                                             \
  CHECK(dynrt::cpuHasFeature(name) == bool(__builtin_cpu_supports(name)))
  SAME("popcnt");
  SAME("sse4.2");
  SAME("avx");
  SAME("avx2");
  SAME("fma");
  SAME("bmi");
  SAME("bmi2");
  SAME("f16c");
  SAME("lzcnt");
  SAME("movbe");
  SAME("avx512f");
  SAME("avx512bw");
  SAME("avx512cd");
  SAME("avx512dq");
  SAME("avx512vl");
  SAME("avx512vnni");
  SAME("avx512bf16");
  SAME("avx512fp16");
  SAME("avx512vbmi");
  SAME("avx512vbmi2");
  SAME("avx512ifma");
  SAME("avx512vpopcntdq");
  SAME("avx512bitalg");
  SAME("gfni");
  SAME("vpclmulqdq");
  SAME("avxvnni");
  SAME("amx-tile");
  SAME("amx-bf16");
#undef SAME
}
#endif
