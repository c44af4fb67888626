// LayerStackEditor: the list it shows and returns after add, remove, move and argument edits,
// the signals it emits, and how it marks bad rows.

#include "widgets/layer_stack_editor.h"

#include <QCheckBox>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <vector>

using tb::core::LayerSpec;
using tb::widgets::LayerStackEditor;

namespace {

std::vector<LayerSpec> demoLayers() {
  return {{"residual", {}}, {"compress_space", {}}, {"residual", {}}, {"compress_time", {}}};
}

QStringList names(const std::vector<LayerSpec>& layers) {
  QStringList out;
  for (const LayerSpec& l : layers) {
    out << QString::fromStdString(l.name) + (l.arg ? QStringLiteral(":%1").arg(*l.arg) : QString());
  }
  return out;
}

}  // namespace

class LayerStackEditorTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void setLayersShowsThemWithoutSignal() {
    LayerStackEditor editor;
    QSignalSpy changed(&editor, &LayerStackEditor::layersChanged);
    editor.setLayers({{"residual", {}}, {"consecutive_residual", 2}, {"compress_space", 256}});
    QCOMPARE(changed.count(), 0);
    QCOMPARE(editor.layerCount(), 3);
    auto* list = editor.findChild<QListWidget*>(QStringLiteral("layerList"));
    QVERIFY(list != nullptr);
    QCOMPARE(list->item(0)->text(), QStringLiteral("1.  residual"));
    QCOMPARE(list->item(1)->text(), QStringLiteral("2.  consecutive_residual  \u00d7 2"));
    QCOMPARE(list->item(2)->text(), QStringLiteral("3.  compress_space  \u2192 256 ch"));
    QCOMPARE(names(editor.layers()),
             (QStringList{"residual", "consecutive_residual:2", "compress_space:256"}));
  }

  void addInsertsAfterSelectionFromTheMenu() {
    LayerStackEditor editor;
    editor.setLayers(demoLayers());
    QSignalSpy changed(&editor, &LayerStackEditor::layersChanged);
    editor.setCurrentRow(1);
    auto* menu = editor.findChild<QMenu*>(QStringLiteral("addLayerMenu"));
    QVERIFY(menu != nullptr);
    QCOMPARE(menu->actions().size(), 12);  // the whole MAGVIT-v2 vocabulary
    QAction* attend = menu->findChild<QAction*>(QStringLiteral("add_attend_space"));
    QVERIFY(attend != nullptr);
    attend->trigger();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(names(editor.layers()), (QStringList{"residual", "compress_space", "attend_space",
                                                  "residual", "compress_time"}));
    QCOMPARE(editor.currentRow(), 2);

    // A layer that needs a count starts with 1.
    editor.addLayer(QStringLiteral("consecutive_residual"));
    QCOMPARE(names(editor.layers()).at(3), QStringLiteral("consecutive_residual:1"));
    // Unknown names are refused.
    editor.addLayer(QStringLiteral("bogus"));
    QCOMPARE(editor.layerCount(), 6);
    QCOMPARE(changed.count(), 2);

    // Nothing selected: appended.
    editor.setCurrentRow(-1);
    editor.addLayer(QStringLiteral("gateloop_time"));
    QCOMPARE(names(editor.layers()).last(), QStringLiteral("gateloop_time"));
  }

  void removeAndMoveWithTheButtons() {
    LayerStackEditor editor;
    editor.setLayers(demoLayers());
    QSignalSpy changed(&editor, &LayerStackEditor::layersChanged);
    auto* up = editor.findChild<QPushButton*>(QStringLiteral("moveLayerUpButton"));
    auto* down = editor.findChild<QPushButton*>(QStringLiteral("moveLayerDownButton"));
    auto* remove = editor.findChild<QPushButton*>(QStringLiteral("removeLayerButton"));
    QVERIFY(up && down && remove);

    editor.setCurrentRow(0);
    QVERIFY(!up->isEnabled());
    QVERIFY(down->isEnabled());
    QTest::mouseClick(down, Qt::LeftButton);
    QCOMPARE(names(editor.layers()),
             (QStringList{"compress_space", "residual", "residual", "compress_time"}));
    QCOMPARE(editor.currentRow(), 1);

    editor.setCurrentRow(3);
    QVERIFY(!down->isEnabled());
    QTest::mouseClick(up, Qt::LeftButton);
    QCOMPARE(names(editor.layers()),
             (QStringList{"compress_space", "residual", "compress_time", "residual"}));

    editor.setCurrentRow(0);
    QTest::mouseClick(remove, Qt::LeftButton);
    QCOMPARE(names(editor.layers()), (QStringList{"residual", "compress_time", "residual"}));
    QCOMPARE(changed.count(), 3);
    QCOMPARE(editor.currentRow(), 0);

    editor.setCurrentRow(-1);
    QVERIFY(!remove->isEnabled());
  }

  void argumentEditorSetsAndClearsTheArgument() {
    LayerStackEditor editor;
    editor.setLayers({{"consecutive_residual", 2}, {"compress_space", {}}, {"residual", {}}});
    QSignalSpy changed(&editor, &LayerStackEditor::layersChanged);
    auto* argument = editor.findChild<QSpinBox*>(QStringLiteral("argument"));
    auto* set = editor.findChild<QCheckBox*>(QStringLiteral("argumentSet"));
    QVERIFY(argument && set);

    editor.setCurrentRow(0);  // required count: no check box
    QVERIFY(set->isHidden());
    QCOMPARE(argument->value(), 2);
    argument->setValue(4);
    QCOMPARE(names(editor.layers()).at(0), QStringLiteral("consecutive_residual:4"));

    editor.setCurrentRow(1);  // optional output channels
    QVERIFY(!set->isHidden());
    QVERIFY(!set->isChecked());
    QVERIFY(!argument->isEnabled());
    set->setChecked(true);
    argument->setValue(256);
    QCOMPARE(names(editor.layers()).at(1), QStringLiteral("compress_space:256"));
    set->setChecked(false);
    QCOMPARE(names(editor.layers()).at(1), QStringLiteral("compress_space"));
    QCOMPARE(changed.count(), 4);

    editor.setCurrentRow(2);  // no argument at all
    QVERIFY(argument->isHidden());
  }

  void dragReorderIsReported() {
    LayerStackEditor editor;
    editor.setLayers(demoLayers());
    QSignalSpy changed(&editor, &LayerStackEditor::layersChanged);
    auto* list = editor.findChild<QListWidget*>(QStringLiteral("layerList"));
    // What an internal drag does to the model: move row 3 to the top.
    QVERIFY(list->model()->moveRow(QModelIndex(), 3, QModelIndex(), 0));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(names(editor.layers()),
             (QStringList{"compress_time", "residual", "compress_space", "residual"}));
    QCOMPARE(list->item(0)->text(), QStringLiteral("1.  compress_time"));
    QTest::qWait(20);  // nothing more arrives later
    QCOMPARE(changed.count(), 1);

    // An insert plus a remove (how a drag may arrive): one report once both happened.
    list->insertItem(1, list->item(3)->clone());
    delete list->takeItem(4);
    QCOMPARE(changed.count(), 1);
    QTRY_COMPARE(changed.count(), 2);
    QCOMPARE(names(editor.layers()),
             (QStringList{"compress_time", "residual", "residual", "compress_space"}));
    QCOMPARE(list->item(3)->text(), QStringLiteral("4.  compress_space"));
  }

  void deleteKeyRemovesTheSelectedLayer() {
    LayerStackEditor editor;
    editor.setLayers(demoLayers());
    editor.show();
    QVERIFY(QTest::qWaitForWindowActive(&editor));
    auto* list = editor.findChild<QListWidget*>(QStringLiteral("layerList"));
    list->setFocus();
    editor.setCurrentRow(1);
    QSignalSpy changed(&editor, &LayerStackEditor::layersChanged);
    QTest::keyClick(list, Qt::Key_Delete);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(names(editor.layers()), (QStringList{"residual", "residual", "compress_time"}));
  }

  void marksBadRows() {
    LayerStackEditor editor;
    editor.setLayers(demoLayers());
    editor.setErrors({{2, QStringLiteral("unknown layer")}}, QStringLiteral("too many"));
    auto* list = editor.findChild<QListWidget*>(QStringLiteral("layerList"));
    QCOMPARE(editor.errorRows(), QList<int>{2});
    QCOMPARE(list->item(2)->toolTip(), QStringLiteral("unknown layer"));
    QCOMPARE(list->item(2)->foreground().color(), QColor(0xc6, 0x28, 0x28));
    QVERIFY(list->item(1)->toolTip() != QStringLiteral("unknown layer"));
    auto* listError = editor.findChild<QLabel*>(QStringLiteral("listError"));
    QVERIFY(!listError->isHidden());
    QCOMPARE(listError->text(), QStringLiteral("too many"));
    editor.setErrors({});
    QVERIFY(editor.errorRows().isEmpty());
    QVERIFY(listError->isHidden());
    QVERIFY(list->item(2)->toolTip() != QStringLiteral("unknown layer"));
  }
};

QTEST_MAIN(LayerStackEditorTest)
#include "test_layer_stack_editor.moc"
