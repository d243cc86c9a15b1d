//===- safetensors.cpp - reading and writing safetensors files ------------===//
#include "dynrt/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace dynrt {

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string &path,
                                                       std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open weights file '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < 8) {
    ::close(fd);
    error = "weights file '" + path + "' is truncated (" +
            std::to_string(st.st_size) + " bytes)";
    return nullptr;
  }
  size_t size = static_cast<size_t>(st.st_size);
  void *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    error = "cannot map weights file '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->map_ = map;
  file->size_ = size;
  if (!file->parse(static_cast<const uint8_t *>(map), size,
                   "weights file '" + path + "'", error))
    return nullptr;
  return file;
}

std::unique_ptr<SafetensorsFile>
SafetensorsFile::fromMemory(const uint8_t *bytes, size_t size,
                            const std::string &what, std::string &error) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  if (size < 8) {
    error = what + " is truncated (" + std::to_string(size) + " bytes)";
    return nullptr;
  }
  if (!file->parse(bytes, size, what, error))
    return nullptr;
  return file;
}

bool SafetensorsFile::parse(const uint8_t *bytes, size_t size,
                            const std::string &what, std::string &error) {
  bytes_ = bytes;
  size_ = size;
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | bytes[i];
  if (headerLen > size - 8) {
    error = what + " is corrupted: header length " + std::to_string(headerLen) +
            " exceeds the file size";
    return false;
  }
  // The reference reader's limits: a header of at most 100 MB that is a JSON
  // object.
  if (headerLen > kMaxHeaderBytes) {
    error = what + " is corrupted: a header of " + std::to_string(headerLen) +
            " bytes is over the " + std::to_string(kMaxHeaderBytes) +
            "-byte limit";
    return false;
  }
  if (headerLen == 0 || bytes[8] != '{') {
    error = what + " is corrupted: the header does not start with '{'";
    return false;
  }
  nlohmann::json header = nlohmann::json::parse(
      bytes + 8, bytes + 8 + headerLen, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    error = what + " is corrupted: header is not JSON";
    return false;
  }
  const uint8_t *dataStart = bytes + 8 + headerLen;
  dataStart_ = dataStart;
  size_t dataSize = size - 8 - headerLen;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__")
      continue;
    auto bad = [&](const std::string &why) {
      error = what + " is corrupted: tensor '" + name + "' " + why;
      return false;
    };
    if (!entry.is_object() || !entry.contains("dtype") ||
        !entry.contains("shape") || !entry.contains("data_offsets") ||
        !entry["dtype"].is_string() || !entry["shape"].is_array() ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      return bad("has a malformed entry");
    auto dtype = dtypeFromSafetensorsName(entry["dtype"].get<std::string>());
    if (!dtype)
      return bad("has unsupported dtype " + entry["dtype"].get<std::string>());
    TensorView view;
    view.dtype = *dtype;
    size_t numel = 1;
    for (auto &d : entry["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX) ||
          __builtin_mul_overflow(numel, d.get<size_t>(), &numel))
        return bad("has a malformed shape");
      view.shape.push_back(d.get<int64_t>());
    }
    size_t needed;
    if (__builtin_mul_overflow(numel, dtypeInfo(*dtype).itemSize, &needed))
      return bad("has a shape too large for any file");
    auto &offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      return bad("has malformed data_offsets");
    size_t begin = offsets[0].get<size_t>(), end = offsets[1].get<size_t>();
    if (begin > end || end > dataSize)
      return bad("lies outside the file (truncated?)");
    if (end - begin != needed)
      return bad("has " + std::to_string(end - begin) +
                 " bytes but its shape needs " + std::to_string(needed));
    view.data = dataStart + begin;
    view.nbytes = end - begin;
    tensors_.emplace(name, std::move(view));
  }
  return checkLayout(dataSize, what, error);
}

bool SafetensorsFile::checkLayout(size_t dataSize, const std::string &what,
                                  std::string &error) const {
  // As the reference reader: the tensors, in offset order, tile the data
  // exactly: none overlaps another (two weights in the same bytes, where a
  // write to one changes the other), none leaves a gap, none ends early.
  std::vector<std::pair<const std::string *, const TensorView *>> order;
  for (const auto &[name, view] : tensors_)
    order.emplace_back(&name, &view);
  const uint8_t *start = dataStart();
  std::sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    return std::make_pair(a.second->data, a.second->nbytes) <
           std::make_pair(b.second->data, b.second->nbytes);
  });
  size_t at = 0;
  const std::string *previous = nullptr;
  for (const auto &[name, view] : order) {
    size_t begin = size_t(view->data - start);
    if (begin != at) {
      error = what + " is corrupted: tensor '" + *name + "' " +
              (begin < at ? "overlaps '" + *previous + "'"
                          : "starts at byte " + std::to_string(begin) +
                                " of the data, leaving a gap after " +
                                (previous ? "'" + *previous + "'"
                                          : std::string("the header")));
      return false;
    }
    at = begin + view->nbytes;
    previous = name;
  }
  if (at != dataSize) {
    error = what + " is corrupted: its tensors end at byte " +
            std::to_string(at) + " of " + std::to_string(dataSize) +
            " data bytes";
    return false;
  }
  return true;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_)
    munmap(map_, size_);
}

const TensorView *SafetensorsFile::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

bool writeSafetensors(const std::string &path,
                      const std::map<std::string, TensorView> &tensors,
                      std::string &error) {
  nlohmann::json header = nlohmann::json::object();
  size_t offset = 0;
  for (auto &[name, view] : tensors) {
    header[name] = {{"dtype", dtypeInfo(view.dtype).safetensorsName},
                    {"shape", view.shape},
                    {"data_offsets", {offset, offset + view.nbytes}}};
    offset += view.nbytes;
  }
  std::string text = header.dump();
  // Pad so that the data starts 8-byte aligned.
  while ((8 + text.size()) % 8)
    text.push_back(' ');
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    error = "cannot write '" + tmp + "': " + std::strerror(errno);
    return false;
  }
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<uint8_t>(uint64_t(text.size()) >> (8 * i));
  bool ok = std::fwrite(len, 1, 8, f) == 8 &&
            std::fwrite(text.data(), 1, text.size(), f) == text.size();
  for (auto &[name, view] : tensors)
    ok = ok && std::fwrite(view.data, 1, view.nbytes, f) == view.nbytes;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

} // namespace dynrt
