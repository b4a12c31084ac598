// Methods whose requests may be large (Report, PutKernels), served so that a caller without a
// valid token is refused before a byte of its request is read. Internal to coordinator/.
//
// Why a generic service: gRPC's synchronous (and callback) unary handlers get a call only once
// its whole request has arrived, and gRPC 1.51 reads a request of any size before it applies
// the server's max receive size (a 64 MiB request was read in full, then RESOURCE_EXHAUSTED).
// A callback generic service gets the call with its metadata only; the request is read when
// the handler asks for it. So the token is checked first and a refusal (UNAUTHENTICATED,
// PERMISSION_DENIED) finishes the call unread: only what the client had sent within the HTTP/2
// flow-control window reaches the server.
//
// Threads: gRPC calls Create and the handlers on its callback threads, so a handler must not
// block: it answers through its `done` (from any thread, also before it returns), and one that
// waits (for the database) hands that work on (the coordinator's reporter, a thread of its own).
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/byte_buffer.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace tuna::coordinator {

// OK to read the request; any other status refuses the call with it, unread.
using Authorize = std::function<grpc::Status(const grpc::ServerContextBase& ctx,
                                             const std::string& method)>;
// Answers a call, exactly once: OK (then `*reply` holds the reply's bytes) or the status.
using Done = std::function<void(grpc::Status)>;
// Handles one request (the serialized request message): fills `*reply` (valid until `done`) and
// calls `done`. Must not block (see Threads).
using RawHandler = std::function<void(const grpc::ServerContextBase& ctx,
                                      const grpc::ByteBuffer& request, grpc::ByteBuffer* reply,
                                      Done done)>;

// `handlers` by full method path ("/tuna.v1.Worker/Report"); other paths are UNIMPLEMENTED.
// Register on the server that serves the rest of the service, whose generated class marks these
// methods generic (v1::Worker::WithGenericMethod_*). The functions must outlive the service.
std::unique_ptr<grpc::CallbackGenericService> MakeUnreadRefusalService(
    Authorize authorize, std::map<std::string, RawHandler> handlers);

}  // namespace tuna::coordinator
