#include "app/control/page_id.h"

namespace tb::app {

std::string_view pageName(PageId page) {
  switch (page) {
    case PageId::Setup:
      return "setup";
    case PageId::Monitor:
      return "monitor";
    case PageId::Samples:
      return "samples";
    case PageId::Compare:
      return "compare";
    case PageId::Runs:
      return "runs";
  }
  return {};
}

std::string_view pageTitle(PageId page) {
  switch (page) {
    case PageId::Setup:
      return "Setup";
    case PageId::Monitor:
      return "Monitor";
    case PageId::Samples:
      return "Samples";
    case PageId::Compare:
      return "Compare";
    case PageId::Runs:
      return "Runs";
  }
  return {};
}

std::optional<PageId> pageFromName(std::string_view name) {
  for (PageId page : kAllPages) {
    if (pageName(page) == name) {
      return page;
    }
  }
  return std::nullopt;
}

std::string pageNameList() {
  std::string list;
  for (size_t i = 0; i < kAllPages.size(); ++i) {
    if (i > 0) {
      list += (i + 1 == kAllPages.size()) ? " or " : ", ";
    }
    list += pageName(kAllPages[i]);
  }
  return list;
}

}  // namespace tb::app
