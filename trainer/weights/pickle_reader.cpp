// Over 600 lines on purpose: one format, the pickle machine and the zip container it comes in.
#include "trainer/weights/pickle_reader.h"

#include "core/zip_directory.h"

#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace tb::trainer::weights {
namespace {

using Kind = PickleValue::Kind;

// Opcodes of pickle protocols 2 to 5 (Python's Lib/pickle.py names).
enum Op : std::uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinPersId = 'Q',
  kReduce = 'R',
  kBinString = 'T',
  kShortBinString = 'U',
  kBinUnicode = 'X',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kDict = 'd',
  kEmptyDict = '}',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kList = 'l',
  kEmptyList = ']',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kEmptyTuple = ')',
  kSetItems = 'u',
  kBinFloat = 'G',
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kProto = 0x80,
  kNewObj = 0x81,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kEmptySet = 0x8f,
  kAddItems = 0x90,
  kFrozenSet = 0x91,
  kNewObjEx = 0x92,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
};

// Names of the opcodes this reader refuses, for the error message.
std::string opcodeName(std::uint8_t op) {
  static const std::map<std::uint8_t, const char*> names = {{'F', "FLOAT"},
                                                            {'I', "INT"},
                                                            {'L', "LONG"},
                                                            {'P', "PERSID"},
                                                            {'S', "STRING"},
                                                            {'V', "UNICODE"},
                                                            {'g', "GET"},
                                                            {'p', "PUT"},
                                                            {'i', "INST"},
                                                            {'o', "OBJ"},
                                                            {0x82, "EXT1"},
                                                            {0x83, "EXT2"},
                                                            {0x84, "EXT4"},
                                                            {0x8b, "LONG4"},
                                                            {0x96, "BYTEARRAY8"},
                                                            {0x97, "NEXT_BUFFER"},
                                                            {0x98, "READONLY_BUFFER"}};
  const auto it = names.find(op);
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", op);
  return std::string(hex) + (it == names.end() ? "" : std::string(" (") + it->second + ")");
}

PickleRef make(Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

PickleRef makeText(Kind kind, std::string text) {
  auto v = make(kind);
  v->text = std::move(text);
  return v;
}

PickleRef makeInt(std::int64_t i) {
  auto v = make(Kind::Int);
  v->integer = i;
  return v;
}

bool isContainer(Kind k) {
  return k == Kind::Tuple || k == Kind::List || k == Kind::Dict || k == Kind::Set ||
         k == Kind::Object;
}

// UTF-8 -> Latin-1 bytes (what `_codecs.encode(s, "latin1")` makes of a protocol-2 bytes
// object); nullopt for a code point above 255.
std::optional<std::string> latin1(const std::string& utf8) {
  std::string out;
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if ((c & 0xe0) == 0xc0 && i + 1 < utf8.size()) {
      const unsigned code = ((c & 0x1fu) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3fu);
      if (code > 0xff) return std::nullopt;
      out.push_back(static_cast<char>(code));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

class Machine {
 public:
  Machine(const std::string& bytes, std::string source, const PersistentLoad& load)
      : m_bytes(bytes), m_source(std::move(source)), m_load(load) {}

  PickleRef run() {
    while (m_pos < m_bytes.size()) {
      m_op_pos = m_pos;
      const std::uint8_t op = u8();
      if (op == kStop) return pop();
      step(op);
    }
    fail("ends without STOP (truncated?)");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw PickleError(m_source + ": byte " + std::to_string(m_op_pos) + ": " + what);
  }

  std::string take(std::uint64_t n) {
    if (n > m_bytes.size() - m_pos) fail("truncated: needs " + std::to_string(n) + " more bytes");
    std::string out = m_bytes.substr(m_pos, static_cast<std::size_t>(n));
    m_pos += static_cast<std::size_t>(n);
    return out;
  }
  std::uint64_t unsignedLE(int bytes) {
    const std::string b = take(static_cast<std::uint64_t>(bytes));
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[i]);
    return v;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(unsignedLE(1)); }
  std::string line() {
    const auto end = m_bytes.find('\n', m_pos);
    if (end == std::string::npos) fail("truncated: a GLOBAL name without its newline");
    std::string out = m_bytes.substr(m_pos, end - m_pos);
    m_pos = end + 1;
    return out;
  }

  void push(PickleRef v) { m_stack.push_back(std::move(v)); }
  PickleRef pop() {
    if (m_stack.size() <= (m_marks.empty() ? 0 : m_marks.back())) fail("stack underflow");
    PickleRef v = std::move(m_stack.back());
    m_stack.pop_back();
    return v;
  }
  PickleValue& top(Kind expected, const char* op) {
    if (m_stack.size() <= (m_marks.empty() ? 0 : m_marks.back())) fail("stack underflow");
    PickleValue& v = *m_stack.back();
    if (v.kind != expected) fail(std::string(op) + " on a " + v.describe());
    return v;
  }
  std::vector<PickleRef> popMark() {
    if (m_marks.empty()) fail("no MARK to pop to");
    const std::size_t mark = m_marks.back();
    m_marks.pop_back();
    std::vector<PickleRef> items(std::make_move_iterator(m_stack.begin() + static_cast<long>(mark)),
                                 std::make_move_iterator(m_stack.end()));
    m_stack.resize(mark);
    return items;
  }

  // Puts `child` into `container`, keeping the nesting bound.
  void adopt(PickleValue& container, const PickleRef& child) {
    if (child.get() == &container) fail("a container that holds itself");
    if (isContainer(child->kind)) {
      container.nesting = std::max(container.nesting, child->nesting + 1);
      if (container.nesting > kMaxPickleNesting)
        fail("containers nested deeper than " + std::to_string(kMaxPickleNesting));
    }
  }
  PickleRef sequence(Kind kind, std::vector<PickleRef> items) {
    auto v = make(kind);
    for (const auto& item : items) adopt(*v, item);
    v->items = std::move(items);
    return v;
  }
  void addPairs(PickleValue& dict, std::vector<PickleRef> flat) {
    if (flat.size() % 2 != 0) fail("odd number of items for a dict");
    for (std::size_t i = 0; i < flat.size(); i += 2) {
      adopt(dict, flat[i]);
      adopt(dict, flat[i + 1]);
      dict.entries.emplace_back(flat[i], flat[i + 1]);
    }
  }

  std::uint64_t memoIndex(int bytes) { return unsignedLE(bytes); }
  void memoPut(std::uint64_t index) {
    if (m_stack.empty()) fail("memo store with an empty stack");
    m_memo[index] = m_stack.back();
  }
  void memoGet(std::uint64_t index) {
    const auto it = m_memo.find(index);
    if (it == m_memo.end()) fail("memo entry " + std::to_string(index) + " was never stored");
    push(it->second);
  }

  PickleRef global(std::string module, const std::string& name) {
    if (module == "__builtin__") module = "builtins";  // Python 2 pickles
    return makeText(Kind::Global, module + "." + name);
  }

  PickleRef rebuildTensor(const std::vector<PickleRef>& args) {
    if (args.size() < 4 || args[0]->kind != Kind::Storage || args[1]->kind != Kind::Int ||
        args[2]->kind != Kind::Tuple || args[3]->kind != Kind::Tuple)
      fail("_rebuild_tensor_v2 expects (storage, offset, size, stride, ...)");
    const torch::Tensor& storage = args[0]->tensor;
    std::vector<std::int64_t> size, stride;
    for (const auto& s : args[2]->items) {
      if (s->kind != Kind::Int || s->integer < 0) fail("tensor size entries must be integers >= 0");
      size.push_back(s->integer);
    }
    for (const auto& s : args[3]->items) {
      if (s->kind != Kind::Int || s->integer < 0) fail("tensor strides must be integers >= 0");
      stride.push_back(s->integer);
    }
    if (size.size() != stride.size()) fail("tensor size and stride differ in length");
    const std::int64_t offset = args[1]->integer;
    auto v = make(Kind::Tensor);
    v->tensor = torch::empty(size, storage.options());
    if (v->tensor.numel() == 0) return v;
    std::int64_t last = offset;
    for (std::size_t i = 0; i < size.size(); ++i) last += (size[i] - 1) * stride[i];
    if (offset < 0 || last >= storage.numel())
      fail("tensor of size " + c10::str(c10::IntArrayRef(size)) + " at offset " +
           std::to_string(offset) + " reaches past its storage of " +
           std::to_string(storage.numel()) + " elements");
    v->tensor.copy_(storage.as_strided(size, stride, offset));
    return v;
  }

  // What calling `callable(*args)` means here: the few callables whose result this reader needs
  // (containers, tensors, bytes), else an opaque Object naming the callable.
  PickleRef call(const PickleRef& callable, std::vector<PickleRef> args) {
    if (callable->kind != Kind::Global) fail("calling a " + callable->describe());
    const std::string& name = callable->text;
    if (name == "collections.OrderedDict" || name == "builtins.dict") {
      auto d = make(Kind::Dict);
      if (!args.empty()) {
        if (args[0]->kind == Kind::Dict) {
          for (const auto& e : args[0]->entries) addPairs(*d, {e.first, e.second});
        } else if (args[0]->kind == Kind::List) {
          for (const auto& pair : args[0]->items) {
            if (pair->kind != Kind::Tuple || pair->items.size() != 2)
              fail(name + " of a list that is not of pairs");
            addPairs(*d, {pair->items[0], pair->items[1]});
          }
        } else {
          fail(name + " of a " + args[0]->describe());
        }
      }
      return d;
    }
    // LibTorch's pickle_save wraps typed containers as restore_type_tag(value, "Dict[str,
    // Tensor]"): the value itself.
    if (name == "torch.jit._pickle.restore_type_tag") {
      if (args.empty()) fail(name + " without a value");
      return args[0];
    }
    if (name == "builtins.set" || name == "builtins.frozenset") {
      if (args.empty()) return make(Kind::Set);
      if (args[0]->kind != Kind::List) fail(name + " of a " + args[0]->describe());
      return sequence(Kind::Set, args[0]->items);
    }
    if (name == "builtins.bytes" && args.empty()) return make(Kind::Bytes);
    if (name == "_codecs.encode") {
      // Protocol 2 writes a bytes object as encode(its Latin-1 decoding, "latin1").
      if (args.size() != 2 || args[0]->kind != Kind::String || args[1]->kind != Kind::String)
        fail("_codecs.encode expects (str, encoding)");
      const std::string& enc = args[1]->text;
      if (enc != "latin1" && enc != "latin-1" && enc != "iso-8859-1")
        fail("_codecs.encode with encoding \"" + enc + "\"");
      auto bytes = latin1(args[0]->text);
      if (!bytes) fail("_codecs.encode of a string outside Latin-1");
      return makeText(Kind::Bytes, std::move(*bytes));
    }
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor")
      return rebuildTensor(args);
    if (name == "torch._utils._rebuild_parameter" ||
        name == "torch._utils._rebuild_parameter_with_state") {
      if (args.empty() || args[0]->kind != Kind::Tensor) fail(name + " without a tensor");
      return args[0];
    }
    if (name.rfind("torch._utils._rebuild", 0) == 0)
      fail(name + " (quantized, sparse or other special tensors) is not supported");
    auto object = sequence(Kind::Object, std::move(args));
    object->text = name;
    return object;
  }

  void build() {
    const PickleRef state = pop();
    if (m_stack.empty()) fail("BUILD with nothing to build");
    PickleValue& target = *m_stack.back();
    switch (target.kind) {
      case Kind::Object:
        adopt(target, state);
        target.state = state;
        return;
      case Kind::Dict:    // an OrderedDict's attributes (state_dict()._metadata): not needed
      case Kind::Tensor:  // a Parameter's attributes
        return;
      default:
        fail("BUILD on a " + target.describe());
    }
  }

  void step(std::uint8_t op) {
    switch (op) {
      case kProto: {
        const int version = u8();
        if (version < 2 || version > 5) fail("pickle protocol " + std::to_string(version));
        return;
      }
      case kFrame:
        (void)unsignedLE(8);  // frames only group the opcodes that follow
        return;
      case kMark:
        m_marks.push_back(m_stack.size());
        return;
      case kPop:
        (void)pop();
        return;
      case kPopMark:
        (void)popMark();
        return;
      case kDup:
        if (m_stack.empty()) fail("DUP on an empty stack");
        push(m_stack.back());
        return;
      case kNone:
        push(make(Kind::None));
        return;
      case kNewTrue:
      case kNewFalse: {
        auto v = make(Kind::Bool);
        v->boolean = op == kNewTrue;
        push(v);
        return;
      }
      case kBinInt:
        push(makeInt(static_cast<std::int32_t>(unsignedLE(4))));
        return;
      case kBinInt1:
        push(makeInt(static_cast<std::int64_t>(unsignedLE(1))));
        return;
      case kBinInt2:
        push(makeInt(static_cast<std::int64_t>(unsignedLE(2))));
        return;
      case kLong1: {
        const int n = u8();
        if (n > 8) fail("integer of " + std::to_string(n) + " bytes");
        std::uint64_t v = n ? unsignedLE(n) : 0;
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t{0} << (8 * n);  // sign
        push(makeInt(static_cast<std::int64_t>(v)));
        return;
      }
      case kBinFloat: {
        const std::string b = take(8);
        std::uint64_t bits = 0;
        for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);  // big-endian
        auto v = make(Kind::Float);
        std::memcpy(&v->real, &bits, sizeof bits);
        push(v);
        return;
      }
      case kShortBinUnicode:
      case kShortBinString:
        push(makeText(Kind::String, take(u8())));
        return;
      case kBinUnicode:
      case kBinString:
        push(makeText(Kind::String, take(unsignedLE(4))));
        return;
      case kBinUnicode8:
        push(makeText(Kind::String, take(unsignedLE(8))));
        return;
      case kShortBinBytes:
        push(makeText(Kind::Bytes, take(u8())));
        return;
      case kBinBytes:
        push(makeText(Kind::Bytes, take(unsignedLE(4))));
        return;
      case kBinBytes8:
        push(makeText(Kind::Bytes, take(unsignedLE(8))));
        return;
      case kEmptyTuple:
        push(make(Kind::Tuple));
        return;
      case kEmptyList:
        push(make(Kind::List));
        return;
      case kEmptyDict:
        push(make(Kind::Dict));
        return;
      case kEmptySet:
        push(make(Kind::Set));
        return;
      case kTuple:
        push(sequence(Kind::Tuple, popMark()));
        return;
      case kTuple1:
      case kTuple2:
      case kTuple3: {
        std::vector<PickleRef> items(static_cast<std::size_t>(op - kTuple1 + 1));
        for (auto it = items.rbegin(); it != items.rend(); ++it) *it = pop();
        push(sequence(Kind::Tuple, std::move(items)));
        return;
      }
      case kList:
        push(sequence(Kind::List, popMark()));
        return;
      case kFrozenSet:
        push(sequence(Kind::Set, popMark()));
        return;
      case kDict: {
        auto d = make(Kind::Dict);
        addPairs(*d, popMark());
        push(d);
        return;
      }
      case kAppend: {
        auto item = pop();
        auto& list = top(Kind::List, "APPEND");
        adopt(list, item);
        list.items.push_back(std::move(item));
        return;
      }
      case kAppends: {
        auto items = popMark();
        auto& list = top(Kind::List, "APPENDS");
        for (auto& item : items) {
          adopt(list, item);
          list.items.push_back(std::move(item));
        }
        return;
      }
      case kAddItems: {
        auto items = popMark();
        auto& set = top(Kind::Set, "ADDITEMS");
        for (auto& item : items) {
          adopt(set, item);
          set.items.push_back(std::move(item));
        }
        return;
      }
      case kSetItem: {
        auto value = pop();
        auto key = pop();
        addPairs(top(Kind::Dict, "SETITEM"), {key, value});
        return;
      }
      case kSetItems: {
        auto flat = popMark();
        addPairs(top(Kind::Dict, "SETITEMS"), std::move(flat));
        return;
      }
      case kBinPut:
        memoPut(memoIndex(1));
        return;
      case kLongBinPut:
        memoPut(memoIndex(4));
        return;
      case kMemoize:
        memoPut(m_memo.size());
        return;
      case kBinGet:
        memoGet(memoIndex(1));
        return;
      case kLongBinGet:
        memoGet(memoIndex(4));
        return;
      case kGlobal: {
        std::string module = line();
        push(global(std::move(module), line()));
        return;
      }
      case kStackGlobal: {
        const auto name = pop();
        const auto module = pop();
        if (name->kind != Kind::String || module->kind != Kind::String)
          fail("STACK_GLOBAL needs two strings");
        push(global(module->text, name->text));
        return;
      }
      case kReduce: {
        const auto args = pop();
        const auto callable = pop();
        if (args->kind != Kind::Tuple) fail("REDUCE with arguments that are a " + args->describe());
        push(call(callable, args->items));
        return;
      }
      case kNewObj:
      case kNewObjEx: {
        if (op == kNewObjEx) (void)pop();  // keyword arguments
        const auto args = pop();
        const auto cls = pop();
        if (args->kind != Kind::Tuple) fail("NEWOBJ with arguments that are a " + args->describe());
        push(call(cls, args->items));
        return;
      }
      case kBuild:
        build();
        return;
      case kBinPersId: {
        const auto pid = pop();
        if (!m_load) fail("a persistent id (a tensor storage) outside a torch.save archive");
        push(m_load(*pid));
        return;
      }
      default:
        fail("pickle opcode " + opcodeName(op) +
             " is not supported (this reader handles what torch.save and pickle.dumps write for "
             "state dicts and plain configurations)");
    }
  }

  const std::string& m_bytes;
  std::string m_source;
  const PersistentLoad& m_load;
  std::size_t m_pos = 0, m_op_pos = 0;
  std::vector<PickleRef> m_stack;
  std::vector<std::size_t> m_marks;
  std::unordered_map<std::uint64_t, PickleRef> m_memo;
};

torch::ScalarType storageDType(const std::string& type_name) {
  static const std::map<std::string, torch::ScalarType> types = {
      {"torch.DoubleStorage", torch::kFloat64}, {"torch.FloatStorage", torch::kFloat32},
      {"torch.HalfStorage", torch::kFloat16},   {"torch.BFloat16Storage", torch::kBFloat16},
      {"torch.LongStorage", torch::kInt64},     {"torch.IntStorage", torch::kInt32},
      {"torch.ShortStorage", torch::kInt16},    {"torch.CharStorage", torch::kInt8},
      {"torch.ByteStorage", torch::kUInt8},     {"torch.BoolStorage", torch::kBool}};
  const auto it = types.find(type_name);
  if (it == types.end()) throw PickleError("storage type " + type_name + " is not supported");
  return it->second;
}

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

const PickleValue* PickleValue::find(const std::string& key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : entries)
    if (k->kind == Kind::String && k->text == key) return v.get();
  return nullptr;
}

std::string PickleValue::describe() const {
  switch (kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::Bytes:
      return "bytes";
    case Kind::Tuple:
      return "tuple";
    case Kind::List:
      return "list";
    case Kind::Dict:
      return "dict";
    case Kind::Set:
      return "set";
    case Kind::Tensor:
      return "tensor";
    case Kind::Storage:
      return "storage";
    case Kind::Global:
      return "reference to " + text;
    case Kind::Object:
      return "object " + text;
  }
  return "value";
}

PickleRef readPickle(const std::string& bytes, const std::string& source,
                     const PersistentLoad& persistent_load) {
  return Machine(bytes, source, persistent_load).run();
}

namespace {

/// What torch.save's legacy (pre-1.6) format starts with: pickle protocol 2, then the magic
/// number 0x1950a86a20f9469cfc6c as a LONG1.
constexpr unsigned char kLegacyMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                          0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

std::string firstBytes(const std::filesystem::path& path, std::size_t count) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes(count, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  bytes.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return bytes;
}

}  // namespace

PickleRef readTorchSave(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw PickleError(path.string() + ": no such file");
  const std::string head = firstBytes(path, sizeof kLegacyMagic);
  if (head.size() == sizeof kLegacyMagic &&
      std::memcmp(head.data(), kLegacyMagic, sizeof kLegacyMagic) == 0)
    throw PickleError(
        path.string() +
        ": written in torch's legacy format (PyTorch before 1.6, or "
        "_use_new_zipfile_serialization=False), which Tokenbench does not read. Save it again "
        "with PyTorch 1.6 or newer: python3 -c \"import torch; "
        "torch.save(torch.load('IN', map_location='cpu'), 'OUT')\" (a PyTorch Lightning "
        ".ckpt needs pytorch_lightning importable for that, or save only its "
        "torch.load('IN', map_location='cpu')['state_dict'])");
  if (head.rfind("PK\x03\x04", 0) != 0)
    throw PickleError(path.string() +
                      ": not a torch.save file (neither a zip archive nor torch's legacy format)");
  // Each record's CRC-32 by its name inside the archive ("data/0": the zip stores
  // "<archive name>/data/0").
  std::map<std::string, std::uint32_t> crcs;
  try {
    for (const auto& [full, entry] : core::readZipDirectory(path)) {
      const auto slash = full.find('/');
      if (slash != std::string::npos) crcs.emplace(full.substr(slash + 1), entry.crc32);
    }
  } catch (const core::ZipError& e) {
    throw PickleError(std::string(e.what()) + ": the file is truncated or damaged");
  }
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> archive;
  try {
    archive = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path.string());
  } catch (const c10::Error& e) {
    throw PickleError(path.string() + ": a damaged torch.save zip archive (" +
                      firstLine(e.what_without_backtrace()) + ")");
  }
  auto record = [&](const std::string& name) {
    std::string bytes;
    try {
      auto [data, size] = archive->getRecord(name);
      bytes.assign(static_cast<const char*>(data.get()), size);
    } catch (const c10::Error& e) {
      throw PickleError(path.string() + ": record " + name + ": " +
                        firstLine(e.what_without_backtrace()));
    }
    if (const auto crc = crcs.find(name);
        crc != crcs.end() && core::crc32(bytes.data(), bytes.size()) != crc->second)
      throw PickleError(path.string() + ": record " + name +
                        " fails its CRC-32 check: the file is damaged (its bytes changed after "
                        "it was written)");
    return bytes;
  };
  if (archive->hasRecord("byteorder") && record("byteorder") != "little")
    throw PickleError(path.string() + ": big-endian tensors are not supported");
  std::map<std::string, PickleRef> storages;
  const PersistentLoad load = [&](const PickleValue& pid) -> PickleRef {
    // ('storage', torch.<Type>Storage, key, location, numel)
    if (pid.kind != Kind::Tuple || pid.items.size() < 5 || pid.items[0]->text != "storage" ||
        pid.items[1]->kind != Kind::Global || pid.items[2]->kind != Kind::String ||
        pid.items[4]->kind != Kind::Int)
      throw PickleError(path.string() + ": a persistent id that is not a tensor storage");
    const std::string& key = pid.items[2]->text;
    if (auto it = storages.find(key); it != storages.end()) return it->second;
    torch::ScalarType dtype;
    try {
      dtype = storageDType(pid.items[1]->text);
    } catch (const PickleError& e) {
      throw PickleError(path.string() + ": storage " + key + ": " + e.what());
    }
    const std::int64_t numel = pid.items[4]->integer;
    const std::string bytes = record("data/" + key);
    auto storage = std::make_shared<PickleValue>();
    storage->kind = Kind::Storage;
    storage->tensor = torch::empty({numel}, torch::TensorOptions().dtype(dtype));
    const auto expected = static_cast<std::size_t>(numel) * storage->tensor.element_size();
    if (numel < 0 || bytes.size() != expected)
      throw PickleError(path.string() + ": storage data/" + key + " holds " +
                        std::to_string(bytes.size()) + " bytes, its " + std::to_string(numel) +
                        " elements need " + std::to_string(expected));
    if (!bytes.empty()) std::memcpy(storage->tensor.data_ptr(), bytes.data(), bytes.size());
    storages.emplace(key, storage);
    return storage;
  };
  return readPickle(record("data.pkl"), path.string() + ": data.pkl", load);
}

}  // namespace tb::trainer::weights
