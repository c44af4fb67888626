#include "trainer/media/image_reader.h"

#include "core/config_io.h"

#include "core/atomic_file.h"
#include "trainer/media/media_error.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

namespace tb::trainer::media {

namespace {

/// Any depth to CV_8U with the documented scaling.
cv::Mat toEightBit(const cv::Mat& image) {
  cv::Mat out;
  switch (image.depth()) {
    case CV_8U:
      return image;
    case CV_8S:
      image.convertTo(out, CV_8U, 1.0, 128.0);
      return out;
    case CV_16U:
      image.convertTo(out, CV_8U, 1.0 / 257.0);
      return out;
    case CV_16S:
      image.convertTo(out, CV_8U, 1.0 / 257.0, 128.0);
      return out;
    case CV_32F:
    case CV_64F:
      image.convertTo(out, CV_8U, 255.0);
      return out;
    default:
      image.convertTo(out, CV_8U);
      return out;
  }
}

}  // namespace

VideoFrames ImageReader::read(const std::string& path) {
  if (const std::string kind = core::irregularFileKind(path); !kind.empty())
    throw MediaError(path, "is " + kind + ", not an image file");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw MediaError(path, "no such file");
  cv::Mat image;
  try {
    image = cv::imread(path, cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception& e) {
    throw MediaError(path, std::string("cannot decode image: ") + e.what());
  }
  if (image.empty())
    throw MediaError(path, "cannot decode image (unsupported format or corrupt file)");
  image = toEightBit(image);
  cv::Mat rgb;
  switch (image.channels()) {
    case 1:
      cv::cvtColor(image, rgb, cv::COLOR_GRAY2RGB);
      break;
    case 3:
      cv::cvtColor(image, rgb, cv::COLOR_BGR2RGB);
      break;
    case 4: {
      cv::cvtColor(image, rgb, cv::COLOR_BGRA2RGB);
      // Composite over black: rgb * alpha / 255, rounded.
      std::vector<cv::Mat> planes;
      cv::split(image, planes);
      cv::Mat alpha3;
      cv::cvtColor(planes[3], alpha3, cv::COLOR_GRAY2RGB);
      cv::multiply(rgb, alpha3, rgb, 1.0 / 255.0);
      break;
    }
    default:
      throw MediaError(path, "unsupported channel count " + std::to_string(image.channels()));
  }
  VideoFrames frames;
  frames.width = rgb.cols;
  frames.height = rgb.rows;
  frames.count = 1;
  frames.rgb.resize(frames.frameBytes());
  const std::size_t rowBytes = static_cast<std::size_t>(rgb.cols) * 3;
  for (int y = 0; y < rgb.rows; ++y)
    std::memcpy(frames.rgb.data() + rowBytes * y, rgb.ptr<uint8_t>(y), rowBytes);
  return frames;
}

void writePng(const std::string& path, int width, int height, const uint8_t* rgb) {
  if (width <= 0 || height <= 0)
    throw MediaError(path,
                     "invalid image size " + std::to_string(width) + "x" + std::to_string(height));
  const cv::Mat view(height, width, CV_8UC3, const_cast<uint8_t*>(rgb));
  cv::Mat bgr;
  cv::cvtColor(view, bgr, cv::COLOR_RGB2BGR);
  std::vector<uint8_t> bytes;
  try {
    if (!cv::imencode(".png", bgr, bytes)) throw MediaError(path, "cannot encode PNG");
  } catch (const cv::Exception& e) {
    throw MediaError(path, std::string("cannot encode PNG: ") + e.what());
  }
  core::AtomicFile file(path);
  {
    std::ofstream out(file.tempPath(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw MediaError(path, "cannot write file");
  }
  file.commit(core::Durability::Visible);  // a picture: atomic for readers, no fsync
}

}  // namespace tb::trainer::media
