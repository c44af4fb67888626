#pragma once
// UserError: a failure the user can act on (a bad dataset, config, weight file or run
// directory), carrying the `error` event's code and a hint on what to change.

#include <stdexcept>
#include <string>

namespace tb::trainer {

class UserError : public std::runtime_error {
 public:
  UserError(std::string code, const std::string& message, std::string hint = {})
      : std::runtime_error(message), m_code(std::move(code)), m_hint(std::move(hint)) {}
  const std::string& code() const { return m_code; }
  const std::string& hint() const { return m_hint; }

 private:
  std::string m_code;
  std::string m_hint;
};

}  // namespace tb::trainer
