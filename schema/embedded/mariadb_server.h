// The embedded MariaDB: a private mariadbd that tuna bootstraps, starts, stops and inspects
// (DESIGN §2 "embedded default", `tuna db start|stop|status`).
//
// It must work from a relocatable bundle on a machine without MariaDB installed, so it never
// uses mariadb-install-db or my.cnf: the data dir is bootstrapped by piping the system-table SQL
// into `mariadbd --no-defaults --bootstrap` (DEVICE.md), and every setting is a command-line flag.
//
// Everything of one instance lives in its data dir (mariadbd's --datadir):
//   tuna-client.cnf   [client] user/password/host/port/socket/database, mode 0600 (the only place
//                     the password is written; usable as `mariadb --defaults-file=...`)
//   tuna-port         the loopback port chosen on first start (port 0 = pick a free one)
//   mariadbd.pid      written by mariadbd;  mariadbd.log: its stdout/stderr
//   mariadbd.sock     the unix socket (or a /tmp path when the data dir path is too long)
//   tuna.lock         flock'ed during start/stop so concurrent `tuna db start`s are serialised
//   bootstrap.log     output of the bootstrap run
// The tuna user ('tuna'@'localhost' and 'tuna'@'127.0.0.1', random password) owns the whole
// instance (ALL PRIVILEGES ON *.*): the server is private to this user, listens on loopback
// only, and test fixtures need CREATE DATABASE and KILL.
//
// Threads: an EmbeddedServer object is not thread-safe; separate processes are serialised by the
// lock file. The server process outlives the EmbeddedServer object (it is detached: setsid +
// double fork); Stop ends it. Passwords are never logged, printed or put on a command line.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "schema/store/connection_info.h"

namespace tuna::schema {

struct EmbeddedServerOptions {
  // The instance directory (mariadbd's datadir). Empty: DefaultDataDir().
  std::string data_dir;
  // Loopback TCP port. 0: the one remembered in <data_dir>/tuna-port, else a free one (remembered).
  int port = 0;
  // Unix socket path. Empty: <data_dir>/mariadbd.sock (a /tmp path if that is too long).
  std::string socket_path;
  // mariadbd binary and share dir (english/errmsg.sys, charsets/, mysql_system_tables*.sql).
  // Empty: $TUNA_MARIADBD / $TUNA_MARIADB_SHARE, then next to the running binary (bundle:
  // <exe>/../libexec/mariadbd, <exe>/../bin/mariadbd, <exe>/../share/mariadb), then the system's
  // (/usr/sbin/mariadbd, /usr/share/mysql).
  std::string mariadbd;
  std::string share_dir;
  absl::Duration start_timeout = absl::Seconds(60);
  absl::Duration stop_timeout = absl::Seconds(60);
  int buffer_pool_mb = 128;  // small-machine default
  // Appended to mariadbd's flags on start (e.g. tests: --innodb-flush-log-at-trx-commit=0).
  std::vector<std::string> extra_args;
};

// $XDG_STATE_HOME/tuna/mariadb, or ~/.local/state/tuna/mariadb.
std::string DefaultDataDir();

// A directory of the data dir that is not a database (mariadbd is told to ignore it): the disk
// kernel cache that `tuna tune -f` keeps beside the database by default.
inline constexpr char kKernelCacheDirName[] = "kernel-cache";

struct MariadbPaths {
  std::string mariadbd;
  std::string share_dir;
};
// Resolves the binary and share dir as described in EmbeddedServerOptions. `exe` is the path of
// the running binary (default: /proc/self/exe). NotFound lists every place that was tried.
absl::StatusOr<MariadbPaths> FindMariadb(const EmbeddedServerOptions& options,
                                         const std::string& exe = "");

struct ServerStatus {
  bool running = false;
  bool bootstrapped = false;    // the data dir has been initialised by tuna
  int pid = 0;                  // when running
  int port = 0;                 // configured / remembered port (0 = none yet)
  std::string socket_path;
  std::string data_dir;
  std::string version;          // server version when running, e.g. "10.11.6-MariaDB-0+deb12u1"
  std::string log_path;
  std::string client_config;    // path of tuna-client.cnf
};

struct StartResult {
  bool already_running = false;  // Start found it running and did nothing
  bool bootstrapped = false;     // this Start initialised the data dir
  ServerStatus status;
};

class EmbeddedServer {
 public:
  explicit EmbeddedServer(EmbeddedServerOptions options);

  // Bootstraps the data dir on first use, starts mariadbd detached and waits until it accepts
  // connections. Idempotent: a running server yields already_running. A stale pid file (process
  // gone, or not this data dir's mariadbd) and stale socket are removed first, so it recovers from
  // `kill -9` (InnoDB does crash recovery). Errors: NotFound (no mariadbd / share files),
  // FailedPrecondition (data dir not ours, port taken), DeadlineExceeded / Internal with the tail
  // of the server log when it does not come up.
  absl::StatusOr<StartResult> Start();

  // SIGTERM and wait for exit (InnoDB shuts down cleanly); SIGKILL after stop_timeout.
  // Not running is OK (returns false); true when a server was stopped.
  absl::StatusOr<bool> Stop();

  // Never starts anything. Errors only for unreadable files.
  absl::StatusOr<ServerStatus> Status();

  // How to connect as the tuna user to the `tuna` database (reads the password from
  // tuna-client.cnf). FailedPrecondition before the first Start.
  absl::StatusOr<ConnectionInfo> Connection();

  const std::string& data_dir() const { return data_dir_; }
  std::string LogPath() const;
  // The last `lines` lines of the server log (for error messages).
  std::string LogTail(int lines = 30) const;

 private:
  std::string Path(const std::string& name) const;
  std::string SocketPath() const;
  absl::Status Bootstrap(const MariadbPaths& paths);
  // Appends --tmpdir (a private dir under the data dir, created here) to a mariadbd command line.
  absl::Status PrivateTmpArgs(std::vector<std::string>& argv) const;
  absl::StatusOr<int> ChoosePort();
  absl::Status WriteClientConfig(int port);
  int RunningPid() const;  // 0 when not running
  absl::StatusOr<std::string> WaitReady(int pid, int port);

  EmbeddedServerOptions options_;
  std::string data_dir_;
};

// Reads the server version from the MySQL protocol greeting on 127.0.0.1:port (no login).
// Unavailable when nothing answers within `timeout`.
absl::StatusOr<std::string> ProbeServerVersion(int port, absl::Duration timeout = absl::Seconds(2));

// A port that was free on 127.0.0.1 a moment ago (bind to port 0).
absl::StatusOr<int> PickFreeLoopbackPort();

}  // namespace tuna::schema
