// Calibration samples streamed from .npy files: every graph input reads its samples (along axis 0) from one or more
// files or folders of files, memory-mapped and copied out one batch at a time, so calibration holds the model and a
// batch however large the data set (`octet calibrate`, issue 19).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::cli {

// One .npy file, memory-mapped read-only; closed (unmapped) on destruction.
class MappedNpy {
 public:
  static Result<std::unique_ptr<MappedNpy>> Open(const std::string& path);
  ~MappedNpy();
  MappedNpy(const MappedNpy&) = delete;
  MappedNpy& operator=(const MappedNpy&) = delete;

  const std::string& path() const { return path_; }
  DType dtype() const { return dtype_; }
  // The shape of the whole array; samples are along axis 0.
  const Shape& shape() const { return shape_; }
  int64_t rows() const { return shape_.dim(0); }
  // Copies rows [first, first + count) into `out` (count * row elements of dtype()), then gives their pages back to
  // the kernel (they stay in the page cache, out of this process's resident set).
  Status CopyRows(int64_t first, int64_t count, std::byte* out) const;

 private:
  MappedNpy() = default;
  std::string path_;
  const std::byte* map_ = nullptr;
  size_t map_bytes_ = 0;
  size_t data_offset_ = 0;
  size_t item_bytes_ = 0;  // in the file
  bool narrow_s64_ = false;
  DType dtype_ = DType::kF32;
  Shape shape_;
};

// The samples of every graph input. Specs are NAME=PATH[,PATH...]: each PATH a .npy file or a folder (its *.npy
// files in name order); an input's files are concatenated along axis 0 and must agree in dtype and sample shape.
class CalibSource {
 public:
  // Errors name `option` ("--calib"), the input and the file: an input without files, a name given twice or naming
  // no input of `model`, an unreadable or non-.npy file, disagreeing sample shapes or dtypes, inputs with different
  // sample counts.
  static Result<CalibSource> Open(const std::vector<std::string>& specs, const Graph& graph,
                                  const std::string& model, int64_t batch_size, const char* option);

  int64_t num_samples() const { return num_samples_; }
  int64_t batch_size() const { return batch_size_; }
  // ceil(num_samples / batch_size).
  int64_t num_batches() const { return (num_samples_ + batch_size_ - 1) / batch_size_; }
  // Batch b (the last may be smaller): one tensor per graph input, in graph input order.
  Result<std::vector<Tensor>> Batch(int64_t b) const;

 private:
  struct Input {
    std::string name;
    DType dtype = DType::kF32;
    std::vector<int64_t> sample_dims;  // the shape of one sample
    std::vector<std::shared_ptr<MappedNpy>> files;
  };
  std::vector<Input> inputs_;
  int64_t num_samples_ = 0;
  int64_t batch_size_ = 1;
};

// Makes freed buffers of 128 KiB or more go back to the kernel at once (glibc's M_MMAP_THRESHOLD fixed at its
// initial value; a no-op elsewhere). glibc otherwise raises the threshold to the largest block freed, so later batch
// and activation buffers come from the heap and its fragments stay resident: streaming 4 GB in batches of 4 MiB
// grew the peak RSS by 6 batches, against 0.4 with this. Each batch then maps fresh pages, a small cost beside its
// forward pass. For the streaming commands only (calibrate, quantize --calib).
void ReturnLargeBuffersToKernel();

}  // namespace octet::cli
