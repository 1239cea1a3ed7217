// Memory-mapped .npy calibration samples (see calib_source.h).
#include "tools/octet/calib_source.h"

#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/npy.h"
#include "tools/octet/model_command.h"

namespace octet::cli {

Result<std::unique_ptr<MappedNpy>> MappedNpy::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("failed to open calibration file '{}': {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("failed to open calibration file '{}': not a regular file", path);
  }
  std::unique_ptr<MappedNpy> m(new MappedNpy());
  m->path_ = path;
  m->map_bytes_ = static_cast<size_t>(st.st_size);
  if (m->map_bytes_ > 0) {
    void* p = ::mmap(nullptr, m->map_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return IoError("failed to map calibration file '{}': {}", path, std::strerror(err));
    }
    m->map_ = static_cast<const std::byte*>(p);
    // Read once front to back: let the kernel read ahead.
    ::madvise(p, m->map_bytes_, MADV_SEQUENTIAL);
  }
  ::close(fd);
  OCTET_ASSIGN_OR_RETURN(NpyLayout layout, ParseNpyHeader(std::span<const std::byte>(m->map_, m->map_bytes_), path));
  if (layout.shape.rank() < 1) {
    return InvalidArgument("failed to read calibration file '{}': need samples along axis 0, got a scalar", path);
  }
  const uint64_t needed = static_cast<uint64_t>(layout.shape.NumElements()) * layout.item_bytes;
  if (m->map_bytes_ - layout.data_offset != needed) {
    return DataLoss("failed to read calibration file '{}': shape {} of {}-byte elements needs {} data bytes, got {}",
                    path, layout.shape, layout.item_bytes, needed, m->map_bytes_ - layout.data_offset);
  }
  m->data_offset_ = layout.data_offset;
  m->item_bytes_ = layout.item_bytes;
  m->narrow_s64_ = layout.narrow_s64;
  m->dtype_ = layout.dtype;
  m->shape_ = std::move(layout.shape);
  return m;
}

MappedNpy::~MappedNpy() {
  if (map_ != nullptr) ::munmap(const_cast<std::byte*>(map_), map_bytes_);
}

Status MappedNpy::CopyRows(int64_t first, int64_t count, std::byte* out) const {
  const size_t row_items = rows() == 0 ? 0 : static_cast<size_t>(shape_.NumElements() / rows());
  const size_t begin = data_offset_ + static_cast<size_t>(first) * row_items * item_bytes_;
  const size_t bytes = static_cast<size_t>(count) * row_items * item_bytes_;
  const std::byte* src = map_ + begin;
  if (!narrow_s64_) {
    std::memcpy(out, src, bytes);
  } else {
    const size_t n = static_cast<size_t>(count) * row_items;
    for (size_t i = 0; i < n; ++i) {
      int64_t v = 0;
      std::memcpy(&v, src + i * 8, 8);
      if (v < INT32_MIN || v > INT32_MAX) {
        return OutOfRange("failed to read calibration file '{}': row {} holds {}, which does not fit in int32", path_,
                          first + static_cast<int64_t>(i / row_items), v);
      }
      const auto w = static_cast<int32_t>(v);
      std::memcpy(out + i * 4, &w, 4);
    }
  }
  // Drop the pages read, so the resident set stays one batch. The page holding `begin` goes too (reads are in
  // order, so its start was read by the batch before); a page read again is only faulted in again from the cache.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t lo = begin / page * page;
  const size_t hi = (begin + bytes) / page * page;
  if (hi > lo) ::madvise(const_cast<std::byte*>(map_) + lo, hi - lo, MADV_DONTNEED);
  return OkStatus();
}

namespace {

// The .npy files of one PATH: the file itself, or a folder's *.npy files in name order.
Result<std::vector<std::string>> ExpandPath(const std::string& path, const char* option, const std::string& input) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (entry.path().extension() == ".npy") files.push_back(entry.path().string());
  }
  if (ec) return IoError("{} {}={}: cannot list the folder: {}", option, input, path, ec.message());
  if (files.empty()) return InvalidArgument("{} {}={}: the folder holds no .npy files", option, input, path);
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

Result<CalibSource> CalibSource::Open(const std::vector<std::string>& specs, const Graph& graph,
                                      const std::string& model, int64_t batch_size, const char* option) {
  if (batch_size <= 0) return InvalidArgument("--calib-batch must be > 0, got {}", batch_size);
  std::map<std::string, std::string> paths;
  for (const std::string& spec : specs) {
    OCTET_ASSIGN_OR_RETURN(auto kv, SplitAssignment(spec, option));
    if (!paths.emplace(kv.first, kv.second).second) return InvalidArgument("{} names '{}' twice", option, kv.first);
  }
  CalibSource source;
  source.batch_size_ = batch_size;
  for (ValueId id : graph.inputs()) {
    Input in;
    in.name = graph.value(id).name;
    const auto it = paths.find(in.name);
    if (it == paths.end()) {
      return InvalidArgument("calibration needs samples for input '{}' ({} {}=FILE.npy[,FILE.npy...] or a folder)",
                             in.name, option, in.name);
    }
    int64_t rows = 0;
    for (const std::string& part : SplitCommas(it->second)) {
      if (part.empty()) return InvalidArgument("{} {}={}: an empty file name", option, in.name, it->second);
      OCTET_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandPath(part, option, in.name));
      for (const std::string& file : files) {
        auto opened = MappedNpy::Open(file);
        if (!opened.ok()) return opened.status().WithContext(fmt::format("{} {}", option, in.name));
        std::shared_ptr<MappedNpy> m = std::move(*opened);
        const std::vector<int64_t> dims(m->shape().dims().begin() + 1, m->shape().dims().end());
        if (in.files.empty()) {
          in.dtype = m->dtype();
          in.sample_dims = dims;
        } else if (m->dtype() != in.dtype || dims != in.sample_dims) {
          return InvalidArgument("{} {}: '{}' holds {} samples of shape [{}], but '{}' holds {} samples of shape [{}]",
                                 option, in.name, file, m->dtype(), fmt::join(dims, ", "), in.files[0]->path(),
                                 in.dtype, fmt::join(in.sample_dims, ", "));
        }
        rows += m->rows();
        in.files.push_back(std::move(m));
      }
    }
    if (source.inputs_.empty()) {
      source.num_samples_ = rows;
    } else if (rows != source.num_samples_) {
      return InvalidArgument("the {} files hold different numbers of samples ({} for input '{}', {} for '{}')",
                             option, rows, in.name, source.num_samples_, source.inputs_[0].name);
    }
    source.inputs_.push_back(std::move(in));
    paths.erase(it);
  }
  if (!paths.empty()) {
    return InvalidArgument("{} names '{}', which is not an input of '{}'", option, paths.begin()->first, model);
  }
  return source;
}

Result<std::vector<Tensor>> CalibSource::Batch(int64_t b) const {
  const int64_t first = b * batch_size_;
  const int64_t count = std::min(batch_size_, num_samples_ - first);
  if (b < 0 || count <= 0) return OutOfRange("calibration batch {} is past the {} samples", b, num_samples_);
  std::vector<Tensor> batch;
  for (const Input& in : inputs_) {
    std::vector<int64_t> dims{count};
    dims.insert(dims.end(), in.sample_dims.begin(), in.sample_dims.end());
    OCTET_ASSIGN_OR_RETURN(Shape shape, Shape::Create(dims));
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(in.dtype, shape));
    const size_t row_bytes = count == 0 ? 0 : t.SizeBytes() / static_cast<size_t>(count);
    auto* out = static_cast<std::byte*>(t.raw_data());
    // Rows [first, first + count) of the files' concatenation.
    int64_t file_start = 0, row = first, left = count;
    for (const auto& f : in.files) {
      if (left == 0) break;
      const int64_t file_end = file_start + f->rows();
      if (row < file_end) {
        const int64_t n = std::min(left, file_end - row);
        OCTET_RETURN_IF_ERROR(f->CopyRows(row - file_start, n, out));
        out += static_cast<size_t>(n) * row_bytes;
        row += n;
        left -= n;
      }
      file_start = file_end;
    }
    batch.push_back(std::move(t));
  }
  return batch;
}

void ReturnLargeBuffersToKernel() {
#if defined(__GLIBC__)
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace octet::cli
