#include "tuner_core/db/text_record.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tuner_core/db/str_util.h"
#include "absl/strings/str_cat.h"

namespace tuna::db {

std::optional<RawRecord> ParseRecordLine(std::string_view line, size_t line_no,
                                         std::vector<ReadWarning>& warnings) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return std::nullopt;
  size_t eq = line.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    warnings.push_back({line_no, "ill-formed record: no '=' after a key"});
    return std::nullopt;
  }
  RawRecord rec;
  rec.key = line.substr(0, eq);
  std::string_view rest = line.substr(eq + 1);
  while (true) {
    size_t semi = rest.find(';');
    std::string_view entry = rest.substr(0, semi);
    size_t colon = entry.find(':');
    if (entry.empty()) {
      warnings.push_back({line_no, "empty entry skipped"});
    } else if (colon == std::string_view::npos || colon == 0) {
      warnings.push_back({line_no, internal::Cat("entry without 'ID:' skipped: ", internal::Quoted(entry))});
    } else {
      rec.entries.push_back({entry.substr(0, colon), entry.substr(colon + 1)});
    }
    if (semi == std::string_view::npos) break;
    rest.remove_prefix(semi + 1);
  }
  if (rec.entries.empty()) {
    warnings.push_back({line_no, internal::Cat("record ", internal::Quoted(rec.key), " has no entries")});
    return std::nullopt;
  }
  return rec;
}

absl::Status CheckRecordField(std::string_view what, std::string_view field) {
  if (field.empty()) return absl::InvalidArgumentError(internal::Cat("empty ", what));
  if (field.find_first_of(";:=\n\r") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        internal::Cat(what, " ", internal::Quoted(field), " contains one of ';', ':', '=', newline"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(internal::Cat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::InternalError(internal::Cat("read error on ", path));
  return std::move(ss).str();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::InternalError(
          internal::Cat("cannot create ", tmp, ": ", std::strerror(errno)));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InternalError(internal::Cat("write error on ", tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return absl::InternalError(
        internal::Cat("cannot rename ", tmp, " to ", path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace tuna::db
