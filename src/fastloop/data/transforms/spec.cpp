// The parser and printer of transform specs (spec.h): a recursive descent over a Python literal subset,
// with errors that name the character position, and Python's repr for the canonical spelling.
#include "fastloop/data/transforms/spec.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fastloop {
namespace {

class SpecParser {
 public:
  explicit SpecParser(const std::string& text) : text_(text) {}

  std::vector<TransformSpec> parse_all() {
    std::vector<TransformSpec> specs;
    skip_space();
    while (pos_ < text_.size()) {
      specs.push_back(parse_call(parse_name()));
      skip_space();
      if (pos_ == text_.size()) break;
      expect(',', "',' between transforms");
      skip_space();
    }
    return specs;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string shown = text_.size() > 120 ? text_.substr(pos_ > 60 ? pos_ - 60 : 0, 120) : text_;
    const size_t caret = text_.size() > 120 ? (pos_ > 60 ? 60 : pos_) : pos_;
    throw InputError("transform spec: at character " + std::to_string(pos_ + 1) + ": " + what +
                     "\n  " + shown + "\n  " + std::string(caret, ' ') +
                     "^\n(spell transforms as torchvision's classes: \"RandomResizedCrop(224, scale=(0.35, 1)), "
                     "RandomHorizontalFlip(p=0.5)\")");
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c, const char* what) {
    if (!peek(c)) fail(std::string("expected ") + what + (pos_ < text_.size() ? ", found '" + std::string(1, text_[pos_]) + "'" : ", found the end"));
    ++pos_;
  }
  static bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  // An identifier, dots allowed inside (InterpolationMode.BILINEAR, v2.RandomCrop).
  std::string parse_name() {
    skip_space();
    if (pos_ >= text_.size() || !name_start(text_[pos_])) fail("expected a transform's name such as RandomHorizontalFlip");
    const size_t start = pos_;
    while (pos_ < text_.size() && (name_char(text_[pos_]) || (text_[pos_] == '.' && pos_ + 1 < text_.size() &&
                                                             name_start(text_[pos_ + 1]))))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  // Name(args...): positionals before keywords, as Python requires.
  TransformSpec parse_call(const std::string& name) {
    TransformSpec spec;
    // torchvision.transforms.v2.RandomCrop or T.RandomCrop: the class name is the last component.
    spec.name = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    expect('(', ("'(' after " + name + " (write " + name + "() for no arguments)").c_str());
    while (!peek(')')) {
      skip_space();
      const size_t start = pos_;
      bool keyword = false;
      if (pos_ < text_.size() && name_start(text_[pos_])) {
        size_t end = pos_;
        while (end < text_.size() && name_char(text_[end])) ++end;
        size_t after = end;
        while (after < text_.size() && std::isspace(static_cast<unsigned char>(text_[after]))) ++after;
        keyword = after < text_.size() && text_[after] == '=' && !(after + 1 < text_.size() && text_[after + 1] == '=');
        if (keyword) {
          const std::string key = text_.substr(pos_, end - pos_);
          for (const auto& [k, v] : spec.keywords)
            if (k == key) fail(spec.name + "(): keyword argument '" + key + "' repeated");
          pos_ = after + 1;
          spec.keywords.emplace_back(key, parse_value());
        }
      }
      if (!keyword) {
        if (!spec.keywords.empty()) {
          pos_ = start;
          fail(spec.name + "(): positional argument follows keyword argument");
        }
        spec.positional.push_back(parse_value());
      }
      if (peek(')')) break;
      expect(',', ("',' or ')' in the arguments of " + spec.name).c_str());
    }
    ++pos_;
    return spec;
  }

  TransformValue parse_value() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a value, found the end");
    const char c = text_[pos_];
    if (c == '(' || c == '[') return parse_sequence(c);
    if (c == '\'' || c == '"') return value_string(parse_string());
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') return parse_number();
    if (!name_start(c)) fail(std::string("expected a value, found '") + c + "'");
    const size_t start = pos_;
    const std::string name = parse_name();
    if (name == "None") return value_none();
    if (name == "True" || name == "False") return value_bool(name == "True");
    if (peek('(')) {
      TransformValue value;
      value.kind = TransformValue::Kind::kTransforms;
      value.transforms.push_back(parse_call(name));
      return value;
    }
    if (name.find('.') == std::string::npos) {
      pos_ = start;
      fail("unknown name '" + name + "' (values are numbers, 'strings', True, False, None, tuples, lists, "
           "transforms, or dotted names such as InterpolationMode.BILINEAR)");
    }
    TransformValue value;
    value.kind = TransformValue::Kind::kName;
    value.text = name;
    return value;
  }

  // (a, b) or [a, b]; (a) is a alone, (a,) a tuple of one. Items that are all transforms make a transform list.
  TransformValue parse_sequence(char open) {
    const char close = open == '(' ? ')' : ']';
    ++pos_;
    std::vector<TransformValue> items;
    bool trailing_comma = false;
    while (!peek(close)) {
      items.push_back(parse_value());
      trailing_comma = false;
      if (peek(close)) break;
      expect(',', (std::string("',' or '") + close + "'").c_str());
      trailing_comma = true;
    }
    ++pos_;
    if (open == '(' && items.size() == 1 && !trailing_comma) return items[0];
    size_t calls = 0;
    for (const auto& item : items) calls += item.kind == TransformValue::Kind::kTransforms;
    if (calls > 0 && calls < items.size()) fail("a list mixes transforms with other values");
    if (calls == 0) return value_list(std::move(items));
    TransformValue value;
    value.kind = TransformValue::Kind::kTransforms;
    for (auto& item : items) value.transforms.push_back(std::move(item.transforms[0]));
    return value;
  }

  std::string parse_string() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (pos_ >= text_.size()) fail(std::string("string not closed: expected ") + quote);
    ++pos_;
    return out;
  }

  TransformValue parse_number() {
    const size_t start = pos_;
    size_t end = pos_;
    if (text_[end] == '-' || text_[end] == '+') ++end;
    bool is_float = false;
    while (end < text_.size()) {
      const char c = text_[end];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '_') {
        ++end;
      } else if (c == '.' || c == 'e' || c == 'E') {
        is_float = true;
        ++end;
        if ((c == 'e' || c == 'E') && end < text_.size() && (text_[end] == '-' || text_[end] == '+')) ++end;
      } else {
        break;
      }
    }
    std::string literal = text_.substr(start, end - start);
    literal.erase(std::remove(literal.begin(), literal.end(), '_'), literal.end());
    const char* first = literal.c_str();
    char* last = nullptr;
    errno = 0;
    TransformValue value = is_float ? value_float(std::strtod(first, &last)) : value_int(std::strtoll(first, &last, 10));
    if (literal.empty() || last != first + literal.size() || errno == ERANGE || literal == "-" || literal == "+")
      fail("not a number: '" + text_.substr(start, end - start) + "'");
    pos_ = end;
    return value;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<TransformSpec> spec_parse(const std::string& text) {
  return SpecParser(text).parse_all();
}

} // namespace fastloop
