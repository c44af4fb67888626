#pragma once
// For the tests of what follows a run directory: the classic VQ reference a training fits
// before its first step (<run>/reference/reference.json), as the trainer writes it.

#include "core/reference_codec_info.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>

namespace tb::test {

/// Writes <runDir>/reference/reference.json for a 10-bit classic VQ codec whose held-out PSNR
/// is `validPsnr` dB; false when it cannot.
inline bool writeReferenceCodec(const QString& runDir, double validPsnr) {
  core::ReferenceCodecInfo info;
  info.name = "classic VQ, 10 bits/token";
  info.bits_per_token = 10;
  info.codebook_size = 1024;
  info.valid_psnr = validPsnr;
  if (!QDir(runDir).mkpath(QStringLiteral("reference"))) return false;
  QFile file(QDir(runDir).filePath(QStringLiteral("reference/reference.json")));
  const QByteArray bytes = QByteArray::fromStdString(core::toJsonText(info));
  return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
}

}  // namespace tb::test
