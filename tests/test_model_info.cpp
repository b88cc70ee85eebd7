// ModelInfo JSON as checkpoints and exports carry it: what fastloop writes reads back field for field, and
// a damaged field (a float, a huge or negative size, a string) is an InputError naming the file and the key.
#include "fastloop/core/errors.h"
#include "fastloop/models/model_info.h"

#include <gtest/gtest.h>

#include <string>

using namespace fastloop;

namespace {

ModelInfo sample_info() {
  ModelInfo info;
  info.model = "resnet18";
  info.classes = {"ant", "bee"};
  info.channels = 3;
  info.height = info.width = 224;
  info.image_files = true;
  info.resize = 256;
  info.mean = {0.5f, 0.5f, 0.5f};
  info.std = {0.25f, 0.25f, 0.25f};
  info.autocast = "bf16";
  info.transform = "Resize(256) | CenterCrop(224)";
  return info;
}

std::string with_field(const std::string& key, const std::string& value) {
  std::string json = model_info_to_json(sample_info());
  const std::string at = "\"" + key + "\":";
  const size_t begin = json.find(at) + at.size();
  return json.replace(begin, json.find_first_of(",}", begin) - begin, value);
}

} // namespace

TEST(ModelInfo, RoundTripsEveryField) {
  const ModelInfo info = model_info_from_json(model_info_to_json(sample_info()), "x.ckpt");
  EXPECT_EQ(info.classes, sample_info().classes);
  EXPECT_EQ(info.height, 224);
  EXPECT_EQ(info.resize, 256);
  EXPECT_EQ(info.transform, sample_info().transform);
  EXPECT_EQ(model_info_to_json(info), model_info_to_json(sample_info()));
}

TEST(ModelInfo, ASizeThatIsNotASmallPositiveIntegerNamesTheFileAndKey) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"width", "266666666666666666666666624"},
                                   {"width", "2.5"},
                                   {"height", "0"},
                                   {"height", "-3"},
                                   {"channels", "18446744073709551615"},
                                   {"resize", "\"256\""}}) {
    try {
      model_info_from_json(with_field(key, value), "model.pt");
      ADD_FAILURE() << key << " = " << value << " was accepted";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("model.pt"), std::string::npos) << message;
      EXPECT_NE(message.find(key), std::string::npos) << message;
    }
  }
}
