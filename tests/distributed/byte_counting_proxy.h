// A TCP proxy on loopback for the transport tests: it forwards one connection at a time between
// a client and `target_port` and counts the bytes the client sent that reached the server, so a
// test can tell whether the server read a request or refused it unread. Test-only. Start and the
// destructor from one thread; client_to_server_bytes() from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace tuna::testing {

class ByteCountingProxy {
 public:
  // Listens on 127.0.0.1:<free port>; Unavailable when it cannot.
  static absl::StatusOr<std::unique_ptr<ByteCountingProxy>> Start(int target_port);
  ~ByteCountingProxy();  // closes the sockets and joins the threads

  int port() const { return port_; }
  // Bytes read from clients and written to the server so far (all connections).
  int64_t client_to_server_bytes() const { return up_.load(); }

 private:
  ByteCountingProxy() = default;
  void AcceptLoop();
  void Pump(int from, int to, bool count);

  int listen_fd_ = -1;
  int port_ = 0;
  int target_port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> up_{0};
  std::thread acceptor_;
  std::vector<std::thread> pumps_;  // acceptor thread only, then the destructor
  std::vector<int> fds_;            // likewise
};

}  // namespace tuna::testing
