#pragma once
// JSON_COMPARE for QtTest: QCOMPARE cannot take nlohmann::json (QtTest's overloads trip over its
// converting templates), so the values are compared with == and shown as JSON text on failure.

#include <nlohmann/json.hpp>

#include <QString>
#include <QTest>

#define JSON_COMPARE(actual, expected)                                                      \
  do {                                                                                      \
    const nlohmann::ordered_json a_ = (actual);                                             \
    const nlohmann::ordered_json e_ = (expected);                                           \
    QVERIFY2(a_ == e_, qPrintable(QString::fromStdString(a_.dump() + " != " + e_.dump()))); \
  } while (false)
