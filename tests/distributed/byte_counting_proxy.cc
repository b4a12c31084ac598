#include "tests/distributed/byte_counting_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace tuna::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ByteCountingProxy>> ByteCountingProxy::Start(int target_port) {
  std::unique_ptr<ByteCountingProxy> p(new ByteCountingProxy());
  p->target_port_ = target_port;
  p->listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = Loopback(0);
  socklen_t len = sizeof(a);
  if (p->listen_fd_ < 0 || bind(p->listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(p->listen_fd_, 8) != 0 ||
      getsockname(p->listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return absl::UnavailableError(absl::StrCat("proxy: cannot listen: errno ", errno));
  }
  p->port_ = ntohs(a.sin_port);
  p->acceptor_ = std::thread([raw = p.get()] { raw->AcceptLoop(); });
  return p;
}

void ByteCountingProxy::AcceptLoop() {
  while (!stop_) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in t = Loopback(target_port_);
    if (server < 0 || connect(server, reinterpret_cast<sockaddr*>(&t), sizeof(t)) != 0) {
      close(client);
      if (server >= 0) close(server);
      continue;
    }
    fds_.push_back(client);
    fds_.push_back(server);
    pumps_.emplace_back([this, client, server] { Pump(client, server, true); });
    pumps_.emplace_back([this, client, server] { Pump(server, client, false); });
  }
}

// Copies `from` -> `to` until either side closes or the proxy stops; the bytes of the
// client -> server direction are counted once written.
void ByteCountingProxy::Pump(int from, int to, bool count) {
  char buf[64 << 10];
  while (!stop_) {
    pollfd pfd{from, POLLIN, 0};
    const int ready = poll(&pfd, 1, 100);
    if (ready == 0) continue;
    if (ready < 0) break;
    const ssize_t n = read(from, buf, sizeof(buf));
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = write(to, buf + off, static_cast<size_t>(n - off));
      if (w <= 0) {
        shutdown(from, SHUT_RDWR);
        return;
      }
      off += w;
      if (count) up_ += w;
    }
  }
  shutdown(to, SHUT_WR);
}

ByteCountingProxy::~ByteCountingProxy() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& t : pumps_) t.join();
  for (int fd : fds_) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

}  // namespace tuna::testing
