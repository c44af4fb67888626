#pragma once
// qcustomplot.h is written with Qt's `signals`, `emit` and `foreach` keywords, which every
// Tokenbench target switches off (QT_NO_KEYWORDS). Include QCustomPlot through this header: it
// maps the keywords to their Q_ macros for the length of the include and removes them again.

#if defined(QT_NO_KEYWORDS) && !defined(signals)
#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#define TB_QCUSTOMPLOT_KEYWORDS_MAPPED
#endif

#include <qcustomplot.h>

#ifdef TB_QCUSTOMPLOT_KEYWORDS_MAPPED
#undef signals
#undef slots
#undef emit
#undef foreach
#undef TB_QCUSTOMPLOT_KEYWORDS_MAPPED
#endif
