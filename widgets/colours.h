#pragma once
// The window's colours, named once. Curves take the series colours in order (matplotlib's
// tab10, which users of TensorBoard and matplotlib read without a legend); messages and run
// states use the same few colours on every page, chosen to read on the light window background.
#include <QColor>
#include <QRgb>

#include <array>
#include <cstddef>

namespace tb::widgets::colours {

inline constexpr std::array<QRgb, 10> kSeries = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                                 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};

/// The index-th series colour, cycling after the tenth; negative indices count as 0.
inline QColor series(int index) {
  return QColor(kSeries[static_cast<std::size_t>(index < 0 ? 0 : index) % kSeries.size()]);
}

/// A field or message that is wrong.
inline QColor error() { return QColor(0xc6, 0x28, 0x28); }
/// A message that confirms something worked.
inline QColor ok() { return QColor(0x2e, 0x7d, 0x32); }
/// A warning that needs no action yet (the Monitor's warning markers).
inline QColor warning() { return QColor(0xe0, 0x9b, 0x00); }
/// An alert that does (the Monitor's critical markers).
inline QColor critical() { return QColor(0xd6, 0x27, 0x28); }
/// A setting that differs from the preset or file it came from (the Setup page's labels).
inline QColor changed() { return QColor(0x09, 0x69, 0xda); }
/// A reference line drawn over the curves (the classic VQ reference's PSNR).
inline QColor reference() { return QColor(0x6a, 0x3d, 0x9a); }

/// Run states, shared by the run control bar and the Runs page.
inline QColor idle() { return QColor(0x57, 0x60, 0x6a); }       ///< new, idle, stopped
inline QColor pending() { return QColor(0x9a, 0x67, 0x00); }    ///< starting, stopping; caution
inline QColor running() { return QColor(0x09, 0x69, 0xda); }    ///< running
inline QColor done() { return QColor(0x1a, 0x7f, 0x37); }       ///< completed
inline QColor attention() { return QColor(0xbc, 0x4c, 0x00); }  ///< unresponsive, interrupted
inline QColor failed() { return QColor(0xcf, 0x22, 0x2e); }     ///< crashed, killed, failed

}  // namespace tb::widgets::colours
