#include <iostream>

#include "cli/command.h"

namespace tuna::cli {

int NotImplemented(const std::string& command, const std::string& issue) {
  std::cerr << "tuna " << command << ": not implemented yet (lands with the " << issue
            << " issue)\n";
  return 3;
}

}  // namespace tuna::cli
