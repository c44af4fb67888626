#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace tb::app {

/// The pages of the main window, in navigation order.
enum class PageId { Setup, Monitor, Samples, Compare, Runs };

/// Every page, in navigation order.
inline constexpr std::array<PageId, 5> kAllPages = {PageId::Setup, PageId::Monitor, PageId::Samples,
                                                    PageId::Compare, PageId::Runs};

/// The page's name on the command line (`--page monitor`): lower case, ASCII.
std::string_view pageName(PageId page);

/// The page's title in the window ("Monitor").
std::string_view pageTitle(PageId page);

/// The page called `name` on the command line, or nothing. Exact, case-sensitive match.
std::optional<PageId> pageFromName(std::string_view name);

/// "setup, monitor, samples, compare or runs", for messages.
std::string pageNameList();

}  // namespace tb::app
