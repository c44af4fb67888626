#include "widgets/layer_stack_editor.h"
#include "widgets/colours.h"

#include <QAbstractItemModel>
#include <QAction>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPalette>
#include <QPixmap>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace tb::widgets {
namespace {

constexpr int kNameRole = Qt::UserRole;
constexpr int kArgumentRole = Qt::UserRole + 1;  // int, or invalid QVariant for none

bool requiresArgument(const QString& name) {
  return core::layerRequiresArgument(name.toStdString());
}
bool acceptsArgument(const QString& name) { return core::layerAcceptsArgument(name.toStdString()); }

}  // namespace

LayerStackEditor::LayerStackEditor(QWidget* parent) : QWidget(parent) {
  m_list = new QListWidget(this);
  m_list->setObjectName(QStringLiteral("layerList"));
  m_list->setSelectionMode(QAbstractItemView::SingleSelection);
  m_list->setDragDropMode(QAbstractItemView::InternalMove);
  m_list->setDefaultDropAction(Qt::MoveAction);
  m_list->setAlternatingRowColors(true);
  m_list->setUniformItemSizes(true);
  m_list->setMinimumHeight(150);
  m_list->setIconSize(QSize(16, 16));
  m_list->setToolTip(tr("Encoder layers, input first; the decoder mirrors them. Drag to reorder."));
  connect(m_list, &QListWidget::currentRowChanged, this, [this] {
    syncArgumentEditor();
    updateButtons();
  });
  connect(m_list->model(), &QAbstractItemModel::rowsMoved, this, &LayerStackEditor::onRowsMoved);
  // A style may carry out a drag as an insert plus a remove: both arrive before the next turn of
  // the event loop, which then reports the new order once.
  const auto dragged = [this] {
    if (m_rebuilding || m_dragPending) return;
    m_dragPending = true;
    QTimer::singleShot(0, this, [this] {
      m_dragPending = false;
      onRowsMoved();
    });
  };
  connect(m_list->model(), &QAbstractItemModel::rowsInserted, this, dragged);
  connect(m_list->model(), &QAbstractItemModel::rowsRemoved, this, dragged);

  auto* removeShortcut = new QAction(tr("Remove layer"), m_list);
  removeShortcut->setShortcut(QKeySequence::Delete);
  removeShortcut->setShortcutContext(Qt::WidgetShortcut);
  connect(removeShortcut, &QAction::triggered, this, &LayerStackEditor::removeCurrentLayer);
  m_list->addAction(removeShortcut);

  m_addMenu = new QMenu(this);
  m_addMenu->setObjectName(QStringLiteral("addLayerMenu"));
  m_addMenu->setToolTipsVisible(true);
  for (const std::string& name : core::magvitLayerVocabulary()) {
    const QString qname = QString::fromStdString(name);
    QAction* action = m_addMenu->addAction(qname);
    action->setObjectName(QStringLiteral("add_") + qname);
    action->setToolTip(layerDocumentation(qname));
    connect(action, &QAction::triggered, this, [this, qname] { addLayer(qname); });
  }

  m_add = new QPushButton(tr("Add layer"), this);
  m_add->setObjectName(QStringLiteral("addLayerButton"));
  m_add->setToolTip(tr("Insert a layer after the selected one"));
  m_add->setMenu(m_addMenu);

  auto makeButton = [this](const QString& name, const QString& text, const QString& tip) {
    auto* button = new QPushButton(this);
    button->setObjectName(name);
    button->setText(text);
    button->setToolTip(tip);
    return button;
  };
  m_remove = makeButton(QStringLiteral("removeLayerButton"), tr("Remove"),
                        tr("Remove the selected layer"));
  m_up = makeButton(QStringLiteral("moveLayerUpButton"), tr("Move up"),
                    tr("Move the selected layer one place towards the input"));
  m_down = makeButton(QStringLiteral("moveLayerDownButton"), tr("Move down"),
                      tr("Move the selected layer one place towards the bottleneck"));
  connect(m_remove, &QPushButton::clicked, this, &LayerStackEditor::removeCurrentLayer);
  connect(m_up, &QPushButton::clicked, this, [this] { moveCurrentLayer(-1); });
  connect(m_down, &QPushButton::clicked, this, [this] { moveCurrentLayer(1); });

  m_argumentLabel = new QLabel(this);
  m_argumentLabel->setObjectName(QStringLiteral("argumentLabel"));
  m_argumentSet = new QCheckBox(this);
  m_argumentSet->setObjectName(QStringLiteral("argumentSet"));
  m_argumentSet->setToolTip(tr("Unchecked: the model's default output channels"));
  m_argument = new QSpinBox(this);
  m_argument->setObjectName(QStringLiteral("argument"));
  m_argument->setRange(1, kMaxArgument);
  m_argument->setMinimumWidth(90);
  connect(m_argument, &QSpinBox::valueChanged, this, &LayerStackEditor::applyArgument);
  connect(m_argumentSet, &QCheckBox::toggled, this, &LayerStackEditor::applyArgument);

  m_listError = new QLabel(this);
  m_listError->setObjectName(QStringLiteral("listError"));
  m_listError->setWordWrap(true);
  QPalette errorPalette = m_listError->palette();
  errorPalette.setColor(QPalette::WindowText, colours::error());
  m_listError->setPalette(errorPalette);
  m_listError->hide();

  auto* buttons = new QHBoxLayout;
  buttons->setSpacing(6);
  buttons->addWidget(m_add);
  buttons->addWidget(m_remove);
  buttons->addStretch(1);
  buttons->addWidget(m_up);
  buttons->addWidget(m_down);

  auto* argumentRow = new QHBoxLayout;
  argumentRow->setSpacing(6);
  argumentRow->addWidget(m_argumentLabel);
  argumentRow->addStretch(1);
  argumentRow->addWidget(m_argumentSet);
  argumentRow->addWidget(m_argument);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(6);
  layout->addLayout(buttons);
  layout->addWidget(m_list, 1);
  layout->addLayout(argumentRow);
  layout->addWidget(m_listError);

  syncArgumentEditor();
  updateButtons();
}

void LayerStackEditor::setLayers(const std::vector<core::LayerSpec>& layers) {
  rebuildItems(layers, std::min(currentRow(), static_cast<int>(layers.size()) - 1));
}

std::vector<core::LayerSpec> LayerStackEditor::layers() const {
  std::vector<core::LayerSpec> out;
  out.reserve(static_cast<std::size_t>(m_list->count()));
  for (int row = 0; row < m_list->count(); ++row) out.push_back(layerAt(row));
  return out;
}

int LayerStackEditor::layerCount() const { return m_list->count(); }

void LayerStackEditor::setErrors(const QMap<int, QString>& errors, const QString& listError) {
  m_errors = errors;
  for (int row = 0; row < m_list->count(); ++row) refreshItem(m_list->item(row));
  m_listError->setText(listError);
  m_listError->setVisible(!listError.isEmpty());
  m_list->setStyleSheet(
      errors.isEmpty() && listError.isEmpty()
          ? QString()
          : QStringLiteral("QListWidget { border: 1px solid %1; }").arg(colours::error().name()));
}

QList<int> LayerStackEditor::errorRows() const { return m_errors.keys(); }

int LayerStackEditor::currentRow() const { return m_list->currentRow(); }

void LayerStackEditor::setCurrentRow(int row) { m_list->setCurrentRow(row); }

QString LayerStackEditor::describeLayer(const core::LayerSpec& layer) {
  const QString name = QString::fromStdString(layer.name);
  if (!layer.arg) return name;
  if (layer.name == "consecutive_residual") {
    return QStringLiteral("%1  \u00d7 %2").arg(name).arg(*layer.arg);
  }
  if (acceptsArgument(name)) return QStringLiteral("%1  \u2192 %2 ch").arg(name).arg(*layer.arg);
  return QStringLiteral("%1  (%2)").arg(name).arg(*layer.arg);
}

QString LayerStackEditor::layerDocumentation(const QString& name) {
  if (name == QLatin1String("residual")) {
    return tr("Residual block of two causal 3-D convolutions");
  }
  if (name == QLatin1String("consecutive_residual")) {
    return tr("n residual blocks in a row (argument: n)");
  }
  if (name == QLatin1String("cond_residual")) {
    return tr("Residual block modulated by the conditioning vector (model.dim_cond)");
  }
  if (name == QLatin1String("compress_space")) {
    return tr("Strided convolution: halves height and width (argument: output channels)");
  }
  if (name == QLatin1String("compress_time")) {
    return tr(
        "Strided causal convolution: 1 + 2k frames become 1 + k (argument: output "
        "channels)");
  }
  if (name == QLatin1String("attend_space")) {
    return tr("Self-attention over the positions of each frame");
  }
  if (name == QLatin1String("linear_attend_space")) {
    return tr("Linear (Taylor) attention over the positions of each frame");
  }
  if (name == QLatin1String("attend_time")) {
    return tr("Causal self-attention across frames at each position");
  }
  if (name == QLatin1String("gateloop_time")) {
    return tr("Gated linear recurrence across frames at each position");
  }
  if (name == QLatin1String("cond_attend_space")) {
    return tr("attend_space with conditioning (model.dim_cond)");
  }
  if (name == QLatin1String("cond_linear_attend_space")) {
    return tr("linear_attend_space with conditioning (model.dim_cond)");
  }
  if (name == QLatin1String("cond_attend_time")) {
    return tr("attend_time with conditioning (model.dim_cond)");
  }
  return {};
}

void LayerStackEditor::addLayer(const QString& name) {
  const auto& vocabulary = core::magvitLayerVocabulary();
  if (std::find(vocabulary.begin(), vocabulary.end(), name.toStdString()) == vocabulary.end()) {
    return;
  }
  core::LayerSpec layer{name.toStdString(), {}};
  if (requiresArgument(name)) layer.arg = 1;
  std::vector<core::LayerSpec> list = layers();
  const int at = currentRow() < 0 ? static_cast<int>(list.size()) : currentRow() + 1;
  list.insert(list.begin() + at, layer);
  m_errors.clear();  // row numbers shift; the next validation marks them again
  rebuildItems(list, at);
  Q_EMIT layersChanged();
}

void LayerStackEditor::removeCurrentLayer() {
  const int row = currentRow();
  if (row < 0) return;
  std::vector<core::LayerSpec> list = layers();
  list.erase(list.begin() + row);
  m_errors.clear();
  rebuildItems(list, std::min(row, static_cast<int>(list.size()) - 1));
  Q_EMIT layersChanged();
}

void LayerStackEditor::moveCurrentLayer(int delta) {
  const int row = currentRow();
  if (row < 0) return;
  std::vector<core::LayerSpec> list = layers();
  const int target = std::clamp(row + delta, 0, static_cast<int>(list.size()) - 1);
  if (target == row) return;
  const core::LayerSpec moved = list[static_cast<std::size_t>(row)];
  list.erase(list.begin() + row);
  list.insert(list.begin() + target, moved);
  m_errors.clear();
  rebuildItems(list, target);
  Q_EMIT layersChanged();
}

void LayerStackEditor::rebuildItems(const std::vector<core::LayerSpec>& layers, int selectRow) {
  const QSignalBlocker blocker(m_list);
  m_rebuilding = true;
  m_list->clear();
  for (const core::LayerSpec& layer : layers) {
    auto* item = new QListWidgetItem(m_list);
    item->setData(kNameRole, QString::fromStdString(layer.name));
    item->setData(kArgumentRole, layer.arg ? QVariant(*layer.arg) : QVariant());
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsDragEnabled);
    refreshItem(item);
  }
  m_rebuilding = false;
  m_list->setCurrentRow(selectRow);
  syncArgumentEditor();
  updateButtons();
}

void LayerStackEditor::refreshItem(QListWidgetItem* item) {
  const int row = m_list->row(item);
  const core::LayerSpec layer = layerAt(row);
  item->setText(QStringLiteral("%1.  %2").arg(row + 1).arg(describeLayer(layer)));
  const QString documentation = layerDocumentation(QString::fromStdString(layer.name));
  const auto error = m_errors.constFind(row);
  if (error != m_errors.constEnd()) {
    item->setForeground(colours::error());
    item->setToolTip(*error);
    item->setIcon(style()->standardIcon(QStyle::SP_MessageBoxWarning));
  } else {
    item->setData(Qt::ForegroundRole, QVariant());
    item->setToolTip(documentation);
    // A blank icon keeps the names in line with those of marked rows.
    static const QIcon kBlank = [] {
      QPixmap blank(16, 16);
      blank.fill(Qt::transparent);
      return QIcon(blank);
    }();
    item->setIcon(kBlank);
  }
}

void LayerStackEditor::syncArgumentEditor() {
  m_syncing = true;
  const int row = currentRow();
  const core::LayerSpec layer = row >= 0 ? layerAt(row) : core::LayerSpec{};
  const QString name = QString::fromStdString(layer.name);
  if (row < 0) {
    m_argumentLabel->setText(tr("Select a layer to edit its argument"));
  } else if (requiresArgument(name)) {
    m_argumentLabel->setText(tr("Residual blocks in a row:"));
  } else if (acceptsArgument(name)) {
    m_argumentLabel->setText(tr("Output channels:"));
  } else {
    m_argumentLabel->setText(tr("%1 takes no argument").arg(name));
  }
  m_argumentSet->setVisible(row >= 0 && acceptsArgument(name) && !requiresArgument(name));
  m_argumentSet->setChecked(layer.arg.has_value());
  m_argument->setVisible(row >= 0 && acceptsArgument(name));
  m_argument->setEnabled(requiresArgument(name) || layer.arg.has_value());
  m_argument->setValue(layer.arg.value_or(requiresArgument(name) ? 1 : 64));
  m_syncing = false;
}

void LayerStackEditor::updateButtons() {
  const int row = currentRow();
  m_remove->setEnabled(row >= 0);
  m_up->setEnabled(row > 0);
  m_down->setEnabled(row >= 0 && row + 1 < m_list->count());
}

void LayerStackEditor::applyArgument() {
  if (m_syncing) return;
  QListWidgetItem* item = m_list->currentItem();
  if (item == nullptr) return;
  const QString name = item->data(kNameRole).toString();
  if (!acceptsArgument(name)) return;
  const bool set = requiresArgument(name) || m_argumentSet->isChecked();
  m_argument->setEnabled(set);
  const QVariant argument = set ? QVariant(m_argument->value()) : QVariant();
  if (item->data(kArgumentRole) == argument) return;
  item->setData(kArgumentRole, argument);
  refreshItem(item);
  Q_EMIT layersChanged();
}

void LayerStackEditor::onRowsMoved() {
  // A drag inside the list: the items moved, their numbers did not.
  m_errors.clear();
  for (int row = 0; row < m_list->count(); ++row) refreshItem(m_list->item(row));
  syncArgumentEditor();
  updateButtons();
  Q_EMIT layersChanged();
}

core::LayerSpec LayerStackEditor::layerAt(int row) const {
  const QListWidgetItem* item = m_list->item(row);
  if (item == nullptr) return {};
  core::LayerSpec layer{item->data(kNameRole).toString().toStdString(), {}};
  const QVariant argument = item->data(kArgumentRole);
  if (argument.isValid()) layer.arg = argument.toInt();
  return layer;
}

}  // namespace tb::widgets
