/*
 * json.cu - the JSON writer.
 */
#include "core/json.h"

#include "core/common.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace wsb {

std::string json_escape(const std::string &s) {
    std::string out;
    out.reserve(s.size() + 8);
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20)
                out += strprintf("\\u%04x", c);
            else
                out += (char)c;
        }
    }
    return out;
}

std::string json_string(const std::string &s) { return "\"" + json_escape(s) + "\""; }

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    return strprintf("%.9g", v);
}

JsonFields &JsonFields::raw(const std::string &key, const std::string &json) {
    items_.emplace_back(key, json);
    return *this;
}

JsonFields &JsonFields::integer(const std::string &key, long long v) {
    return raw(key, strprintf("%lld", v));
}

JsonFields &JsonFields::append(const JsonFields &other) {
    items_.insert(items_.end(), other.items_.begin(), other.items_.end());
    return *this;
}

std::string JsonFields::object(int indent) const {
    if (items_.empty()) return "{}";
    std::string pad((size_t)indent + 2, ' '), out = "{\n";
    for (size_t i = 0; i < items_.size(); ++i)
        out += pad + json_string(items_[i].first) + ": " + items_[i].second +
               (i + 1 < items_.size() ? ",\n" : "\n");
    return out + std::string((size_t)indent, ' ') + "}";
}

std::string JsonFields::one_line() const {
    std::string out = "{";
    for (size_t i = 0; i < items_.size(); ++i)
        out += (i ? ", " : "") + json_string(items_[i].first) + ": " + items_[i].second;
    return out + "}";
}

void write_file_atomic(const std::string &path, const std::string &text) {
    const std::string tmp = path + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "w");
    if (!f) throw BenchError("cannot write " + tmp + ": " + std::strerror(errno));
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0)
        throw BenchError("cannot write " + path + ": " + std::strerror(errno));
}

bool make_parent_dirs(const std::string &path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return true;
    const std::string dir = path.substr(0, slash);
    std::string cur;
    for (size_t i = 0; i <= dir.size(); ++i) {
        if ((i == dir.size() || dir[i] == '/') && !cur.empty() && cur != "." &&
            mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST)
            return false;
        if (i < dir.size()) cur += dir[i];
    }
    return true;
}

} // namespace wsb
