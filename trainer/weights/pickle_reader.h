#pragma once
// Python pickles and torch.save files read without Python: a bounded unpickler for the opcodes
// that `torch.save` (protocol 2) and `pickle.dumps` (protocols 2 to 5) write for state dicts and
// plain configurations.
//
// Why not torch::pickle_load or torch::jit::Unpickler: LibTorch 1.13's unpickler turns
// `collections.OrderedDict` (what every `state_dict()` is) into None before any type resolver is
// asked, so a saved state dict cannot be read through it; it also rejects the Python objects a
// pickled configuration holds (an `nn.Identity`, a torchvision weights enum). This reader never
// runs Python code: a call to anything it does not know becomes an opaque Object holding the
// callee's name and arguments, which callers may inspect or refuse.

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer::weights {

/// A file that is not a pickle or torch.save archive this reader understands. The message names
/// the file, the byte offset and what was found.
class PickleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PickleValue;
using PickleRef = std::shared_ptr<PickleValue>;

/// A Python value rebuilt from a pickle. Containers hold shared references, as Python does (a
/// value memoised once and used twice is one object).
struct PickleValue {
  enum class Kind {
    None,
    Bool,
    Int,
    Float,
    String,
    Bytes,
    Tuple,
    List,
    Dict,  ///< dict and collections.OrderedDict, in insertion order
    Set,   ///< set and frozenset
    Tensor,
    Storage,  ///< a torch storage from a persistent id: `tensor` is its flat contents
    Global,   ///< a reference to a module attribute ("module.name"), not yet called
    Object,   ///< the result of calling a Global this reader does not interpret
  };
  Kind kind = Kind::None;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  /// String and Bytes: the contents (UTF-8 for strings); Global and Object: "module.qualname".
  std::string text;
  /// Tuple, List, Set: the elements; Object: the arguments of the call that made it.
  std::vector<PickleRef> items;
  /// Dict entries in insertion order.
  std::vector<std::pair<PickleRef, PickleRef>> entries;
  /// Object: the state BUILD gave it (often a Dict of attributes), or null.
  PickleRef state;
  /// Tensor: a CPU tensor owning its memory; Storage: the storage's elements, flat.
  torch::Tensor tensor;
  /// Containers: nesting depth of the values inside (bounded, see kMaxNesting).
  int nesting = 0;

  /// Dict: the value of the string key `key`, or null.
  const PickleValue* find(const std::string& key) const;
  /// "dict", "tensor", "object torch.nn.modules.linear.Identity", ... for error messages.
  std::string describe() const;
};

/// Containers nested deeper than this are refused (a pickle can build arbitrarily deep
/// structures in few bytes; walking and freeing them recurses).
constexpr int kMaxPickleNesting = 200;

/// Resolves a persistent id (BINPERSID) to a value; throws PickleError when it cannot.
using PersistentLoad = std::function<PickleRef(const PickleValue& pid)>;

/// Runs the pickle `bytes`. `source` names it in errors ("tokenizer.pt: data.pkl"). Without
/// `persistent_load`, a persistent id is an error. Throws PickleError on an unsupported opcode
/// (naming it and its offset), truncated input, stack or memo misuse.
PickleRef readPickle(const std::string& bytes, const std::string& source,
                     const PersistentLoad& persistent_load = {});

/// Reads a `torch.save` zip archive (PyTorch >= 1.6): its data.pkl, with every tensor rebuilt
/// from data/<key> (float64/32/16, bfloat16, int64/32/16/8, uint8, bool storages), as CPU
/// tensors that own their memory. Throws PickleError naming the file for the legacy (pre-zip)
/// format, a missing record, a storage of the wrong size, or any unpickling error.
PickleRef readTorchSave(const std::filesystem::path& path);

}  // namespace tb::trainer::weights
