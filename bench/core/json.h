/*
 * json.h - the one JSON writer of the harness: ordered fields of an object,
 * string escaping, and an atomic file write (a run cut short leaves the
 * previous complete file, never half of one).
 */
#ifndef WSB_CORE_JSON_H
#define WSB_CORE_JSON_H

#include <string>
#include <utility>
#include <vector>

namespace wsb {

std::string json_escape(const std::string &s);
std::string json_string(const std::string &s); /* quoted and escaped */
std::string json_number(double v);             /* null if not finite */

/* An object's fields in order; values are kept as JSON text. */
class JsonFields {
  public:
    JsonFields &raw(const std::string &key, const std::string &json);
    JsonFields &str(const std::string &key, const std::string &v) {
        return raw(key, json_string(v));
    }
    JsonFields &num(const std::string &key, double v) { return raw(key, json_number(v)); }
    JsonFields &integer(const std::string &key, long long v);
    JsonFields &boolean(const std::string &key, bool v) { return raw(key, v ? "true" : "false"); }
    JsonFields &append(const JsonFields &other);
    bool empty() const { return items_.empty(); }
    /* "{...}": one field per line, indented by indent + 2; or all on one line. */
    std::string object(int indent) const;
    std::string one_line() const;

  private:
    std::vector<std::pair<std::string, std::string>> items_;
};

/* Writes text to path through path.tmp and a rename; throws BenchError. */
void write_file_atomic(const std::string &path, const std::string &text);
/* Creates the folders above path; false with errno set if it cannot. */
bool make_parent_dirs(const std::string &path);

} // namespace wsb

#endif /* WSB_CORE_JSON_H */
