// The digits split of the QAT issue for training tests: the first 1437 images (tests/data/train, made by its
// generate.py) and the last 360 (tests/data/models), pixels divided by 16, as [N, 1, 8, 8] or [N, 64].
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/npy.h"

namespace octet::testing {

struct DigitsSplit {
  Tensor train_x, test_x;
  std::vector<int64_t> train_y, test_y;
};

inline std::vector<int64_t> Labels(const Tensor& t) {
  std::vector<int64_t> out;
  for (int32_t v : t.values<int32_t>()) out.push_back(v);
  return out;
}

// `image_shape`: true for [N, 1, 8, 8], false for [N, 64].
inline DigitsSplit LoadDigitsSplit(bool image_shape) {
  const std::string dir = OCTET_TEST_DATA_DIR;
  const Tensor raw = ReadNpy(dir + "/train/digits_train_x_u8.npy").value();
  Tensor train = Tensor::Create(DType::kF32, raw.shape()).value();
  for (int64_t i = 0; i < raw.NumElements(); ++i) train.data<float>()[i] = raw.data<uint8_t>()[i] / 16.0f;
  DigitsSplit s;
  const Tensor test = ReadNpy(dir + "/models/digits_test_x.npy").value();
  const Shape train_shape = image_shape ? Shape{train.shape().dim(0), 1, 8, 8} : Shape{train.shape().dim(0), 64};
  const Shape test_shape = image_shape ? Shape{test.shape().dim(0), 1, 8, 8} : Shape{test.shape().dim(0), 64};
  s.train_x = train.Reshaped(train_shape).value();
  s.test_x = test.Reshaped(test_shape).value();
  s.train_y = Labels(ReadNpy(dir + "/train/digits_train_labels.npy").value());
  s.test_y = Labels(ReadNpy(dir + "/models/digits_test_labels.npy").value());
  return s;
}

}  // namespace octet::testing
